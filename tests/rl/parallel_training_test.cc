// Data-parallel policy-gradient training (rl::ParallelTraining) with two
// "processes" as threads of this one, meeting through a barrier: the trainer's
// bookkeeping (budget split, per-process seeds, averaged gradients, the start
// broadcast, stopping together) is checked here without MPI; the MPI ranks run
// the same code (tests/cli/mpi_test.cc).
#include <barrier>
#include <thread>

#include <gtest/gtest.h>

#include "agents/rl/trainer.h"
#include "builtins/builtins.h"
#include "core/errors.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

// Two threads as two processes: every collective is a barrier, a combination
// done the same way by both, and a second barrier before the slots are reused.
struct Meeting {
  std::barrier<> sync{2};
  std::vector<float> slots[2];
  double values[2] = {0, 0};
};

class ThreadTraining final : public ParallelTraining {
 public:
  ThreadTraining(Meeting& m, int rank) : m_(m), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return 2; }
  void average(std::vector<float>& v) override {
    m_.slots[rank_] = v;
    m_.sync.arrive_and_wait();
    for (size_t i = 0; i < v.size(); ++i) v[i] = (m_.slots[0][i] + m_.slots[1][i]) / 2.0f;
    m_.sync.arrive_and_wait();
  }
  void broadcast(std::vector<float>& v) override {
    m_.slots[rank_] = v;
    m_.sync.arrive_and_wait();
    v = m_.slots[0];
    m_.sync.arrive_and_wait();
  }
  double minimum(double x) override { return combine(x, [](double a, double b) { return std::min(a, b); }); }
  double maximum(double x) override { return combine(x, [](double a, double b) { return std::max(a, b); }); }
  double sum(double x) override { return combine(x, [](double a, double b) { return a + b; }); }

 private:
  template <typename F>
  double combine(double x, F f) {
    m_.values[rank_] = x;
    m_.sync.arrive_and_wait();
    const double out = f(m_.values[0], m_.values[1]);
    m_.sync.arrive_and_wait();
    return out;
  }
  Meeting& m_;
  int rank_;
};

TEST(ParallelTraining, TwoProcessesSplitTheBudgetAndEndWithOnePolicy) {
  register_builtins();
  const OpGraph graph = testing::two_chains_graph(4);
  const Cluster cluster = testing::star_cluster(2);
  for (const char* agent : {"placeto", "aware"}) {
    Meeting meeting;
    TrainResult results[2];
    std::string errors[2];
    std::vector<std::thread> threads;
    for (int rank = 0; rank < 2; ++rank)
      threads.emplace_back([&, rank] {
        try {
          AnalyticSimulator sim;
          ThreadTraining parallel(meeting, rank);
          TrainOptions t;
          t.budget_evals = 40;
          t.seed = 3;
          t.parallel = &parallel;
          results[rank] = train_agent(agent, graph, cluster, sim, t);
        } catch (const std::exception& e) {
          errors[rank] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    ASSERT_EQ(errors[0], "") << agent;
    ASSERT_EQ(errors[1], "") << agent;
    for (const TrainResult& r : results) {
      EXPECT_LE(r.evaluations, 20) << agent << ": each process its half of the budget";
      EXPECT_GT(r.updates, 0) << agent;
    }
    EXPECT_EQ(results[0].updates, results[1].updates) << agent << ": update for update";
    // The same policy (the trainer checks the weights' sum; the greedy episode,
    // a function of the weights alone, shows it too).
    EXPECT_EQ(results[0].greedy, results[1].greedy) << agent;
    EXPECT_EQ(results[0].greedy_step_us, results[1].greedy_step_us) << agent;
  }
}

TEST(ParallelTraining, TimeBudgetsResumingAndTooLittleBudgetAreRefused) {
  register_builtins();
  const OpGraph graph = testing::two_chains_graph(3);
  const Cluster cluster = testing::star_cluster(2);
  Meeting meeting;
  ThreadTraining alone(meeting, 0);  // refused before any collective: one thread is enough
  AnalyticSimulator sim;
  TrainOptions t;
  t.parallel = &alone;
  t.budget_evals = 40;
  t.budget_seconds = 5;
  EXPECT_THROW(train_agent("placeto", graph, cluster, sim, t), ConfigError);
  t.budget_seconds = 0;
  t.resume_dir = "/tmp/never-made";
  EXPECT_THROW(train_agent("placeto", graph, cluster, sim, t), ConfigError);
  t.resume_dir.clear();
  t.budget_evals = 3;
  EXPECT_THROW(train_agent("placeto", graph, cluster, sim, t), ConfigError);
}

}  // namespace
}  // namespace aware::rl
