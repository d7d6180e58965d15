// Data-parallel policy-gradient training (rl::ParallelTraining) with two
// "processes" as threads of this one, meeting through a barrier: the trainer's
// bookkeeping (budget split, per-process seeds, averaged gradients, the start
// broadcast, stopping together) is checked here without MPI; the MPI ranks run
// the same code (tests/cli/mpi_test.cc).
#include <unistd.h>

#include <barrier>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "agents/rl/thread_training.h"
#include "agents/rl/trainer.h"
#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/progress.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/resume_check.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

namespace fs = std::filesystem;

// Two threads as two processes: every collective is a barrier, a combination
// done the same way by both, and a second barrier before the slots are reused.
struct Meeting {
  std::barrier<> sync{2};
  std::vector<float> slots[2];
  double values[2] = {0, 0};
  std::string texts[2];
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
  std::string broadcast_text(const std::string& text) override {
    m_.texts[rank_] = text;
    m_.sync.arrive_and_wait();
    const std::string out = m_.texts[0];
    m_.sync.arrive_and_wait();
    return out;
  }
  std::vector<std::string> gather_text(const std::string& text) override {
    m_.texts[rank_] = text;
    m_.sync.arrive_and_wait();
    std::vector<std::string> out;
    if (rank_ == 0) out = {m_.texts[0], m_.texts[1]};
    m_.sync.arrive_and_wait();
    return out;
  }

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

// Trains `agent` with `options` on two "processes" (threads of this one); the
// two results, in rank order. A process that throws fails the test.
std::vector<TrainResult> train_on_two(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                                      const TrainOptions& options) {
  Meeting meeting;
  std::vector<TrainResult> results(2);
  std::string errors[2];
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      try {
        AnalyticSimulator sim;
        ThreadTraining parallel(meeting, rank);
        TrainOptions t = options;
        t.parallel = &parallel;
        results[static_cast<size_t>(rank)] = train_agent(agent, graph, cluster, sim, t);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors[0], "") << agent;
  EXPECT_EQ(errors[1], "") << agent;
  return results;
}

// With checkpoints in `dir`, every update.
std::vector<TrainResult> train_on_two(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                                      long long budget, const std::string& dir) {
  TrainOptions t;
  t.budget_evals = budget;
  t.seed = 5;
  t.resume_dir = dir;
  t.checkpoint_every_updates = 1;
  return train_on_two(agent, graph, cluster, t);
}

TEST(ParallelTraining, TwoProcessesSplitTheBudgetAndEndWithOnePolicy) {
  register_builtins();
  const OpGraph graph = testing::two_chains_graph(4);
  const Cluster cluster = testing::star_cluster(2);
  for (const char* agent : {"placeto", "aware"}) {
    TrainOptions t;
    t.budget_evals = 40;
    t.seed = 3;
    const std::vector<TrainResult> results = train_on_two(agent, graph, cluster, t);
    ASSERT_FALSE(HasFailure()) << agent;
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

TEST(ParallelTraining, TimeBudgetsAndTooLittleBudgetAreRefused) {
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
  t.budget_evals = 3;
  EXPECT_THROW(train_agent("placeto", graph, cluster, sim, t), ConfigError);
}

// A checkpoint of data-parallel training holds every process's state and
// resumes with any number of processes: the job's evaluations carry over
// exactly, and the same checkpoint and process count resume to the same result.
TEST(ParallelTraining, ACheckpointResumesWithAnyNumberOfProcesses) {
  register_builtins();
  const OpGraph graph = testing::two_chains_graph(4);
  const Cluster cluster = testing::star_cluster(2);
  const fs::path root = fs::temp_directory_path() / ("aware-parallel-resume-" + std::to_string(getpid()));
  fs::remove_all(root);
  const auto job_evaluations = [](const std::vector<TrainResult>& r) { return r[0].evaluations + r[1].evaluations; };
  const auto job_best = [](const std::vector<TrainResult>& r) { return std::min(r[0].best_step_us, r[1].best_step_us); };

  // Two processes, 40 evaluations: the checkpoint's job total is 38 (each keeps one back for its greedy episode).
  const std::string a = (root / "a").string();
  const std::vector<TrainResult> first = train_on_two("placeto", graph, cluster, 40, a);
  ASSERT_TRUE(fs::exists(a + "/checkpoint.pt"));
  EXPECT_EQ(job_evaluations(first), 40);
  EXPECT_FALSE(first[0].resumed);
  fs::copy(a, (root / "b").string());
  fs::copy(a, (root / "c").string());

  // The same two processes: each takes its own state back.
  const std::vector<TrainResult> again = train_on_two("placeto", graph, cluster, 80, a);
  EXPECT_TRUE(again[0].resumed && again[1].resumed);
  EXPECT_EQ(job_evaluations(again), 80) << "the budget is the job's, the evaluations before the resume counted";
  EXPECT_GT(again[0].updates, first[0].updates);
  EXPECT_EQ(again[0].updates, again[1].updates);
  EXPECT_LE(job_best(again), job_best(first)) << "the best before the resume is kept";
  ASSERT_GT(again[0].curve.size(), first[0].curve.size());
  for (size_t i = 0; i < first[0].curve.size(); ++i)
    EXPECT_EQ(again[0].curve[i].evaluations, first[0].curve[i].evaluations) << i;
  // The same checkpoint and number of processes: the same run.
  const std::vector<TrainResult> twin = train_on_two("placeto", graph, cluster, 80, (root / "b").string());
  EXPECT_EQ(twin[0].best_step_us, again[0].best_step_us);
  EXPECT_EQ(twin[1].best_step_us, again[1].best_step_us);
  EXPECT_EQ(twin[0].greedy, again[0].greedy);

  // One process from the two-process checkpoint: the job's 38 evaluations are its own now.
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_evals = 80;
  t.seed = 5;
  t.resume_dir = (root / "c").string();
  const TrainResult alone = train_agent("placeto", graph, cluster, sim, t);
  EXPECT_TRUE(alone.resumed);
  EXPECT_EQ(alone.evaluations, 80);
  EXPECT_LE(alone.best_step_us, job_best(first));
  EXPECT_EQ(alone.curve.front().evaluations, first[0].curve.front().evaluations);
  // And two processes again from that one-process checkpoint.
  const std::vector<TrainResult> back = train_on_two("placeto", graph, cluster, 120, (root / "c").string());
  EXPECT_TRUE(back[0].resumed);
  EXPECT_EQ(job_evaluations(back), 120);
  EXPECT_EQ(back[0].greedy, back[1].greedy) << "one policy on both";
  EXPECT_LE(job_best(back), alone.best_step_us);
  fs::remove_all(root);
}

// An analytic simulator whose clones fail at their `after`-th evaluation (the
// original never does).
class FailingClone final : public Evaluator {
 public:
  explicit FailingClone(int after) : after_(after) {}
  std::string name() const override { return "failing-clone"; }
  std::unique_ptr<Evaluator> clone() const override { return std::make_unique<FailingClone>(5); }

 protected:
  StepResult run_step(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      StepObserver* observer) override {
    if (after_ > 0 && ++calls_ >= after_) throw Error("the clone's evaluator broke");
    return run_inner_step(sim_, graph, cluster, placement, observer);
  }

 private:
  int after_;
  int calls_ = 0;
  AnalyticSimulator sim_;
};

// train_agent_workers: worker threads in one process split the budget (all of
// it, an odd one too), the curve counts the job's evaluations, and the same
// seed gives the same run.
TEST(ParallelTraining, WorkerThreadsSpendTheWholeBudgetAndRepeatForASeed) {
  register_builtins();
  const OpGraph graph = testing::two_chains_graph(4);
  const Cluster cluster = testing::star_cluster(2);
  for (const char* agent : {"placeto", "aware", "hierarchical"}) {
    TrainOptions t;
    t.budget_evals = 41;
    t.seed = 3;
    AnalyticSimulator sim;
    struct Last : ProgressObserver {
      Progress last;
      long long most_before_end = 0;
      void on_progress(const Progress& p) override {
        if (p.message != "done") most_before_end = std::max(most_before_end, p.done);
        last = p;
      }
    } progress;
    t.progress = &progress;
    const TrainResult a = train_agent_workers(agent, graph, cluster, sim, t, 2);
    t.progress = nullptr;
    const TrainResult b = train_agent_workers(agent, graph, cluster, sim, t, 2);
    EXPECT_EQ(progress.last.total, 41) << agent << ": progress counts the job's budget";
    EXPECT_GT(progress.most_before_end, 41 / 2 + 1) << agent << ": and the job's evaluations";
    EXPECT_EQ(a.evaluations, 41) << agent;
    EXPECT_EQ(a.episodes_per_update % 2, 0) << agent << ": both workers' episodes";
    ASSERT_FALSE(a.curve.empty()) << agent;
    EXPECT_GT(a.curve.back().evaluations, 41 / 2 + 1) << agent << ": the curve counts both workers";
    EXPECT_LE(a.curve.back().evaluations, 41) << agent;
    EXPECT_EQ(a.best, b.best) << agent;
    EXPECT_EQ(a.best_step_us, b.best_step_us) << agent;
    ASSERT_EQ(a.curve.size(), b.curve.size()) << agent;
    for (size_t i = 0; i < a.curve.size(); ++i)
      EXPECT_EQ(a.curve[i].mean_step_us, b.curve[i].mean_step_us) << agent << " update " << i;
    EXPECT_EQ(sim.evaluate(graph, cluster, a.best).step_time_us, a.best_step_us) << agent;
  }
  // Behaviour cloning on workers: worker 0 finds the target, the job pays for it.
  TrainOptions t;
  t.budget_evals = 61;
  t.seed = 2;
  t.imitate = "anneal-graph:40";
  t.imitate_steps = 30;
  AnalyticSimulator sim;
  const TrainResult r = train_agent_workers("aware", graph, cluster, sim, t, 2);
  EXPECT_EQ(r.imitation_evaluations, 41);
  EXPECT_EQ(r.evaluations, 61);
  EXPECT_LE(r.best_step_us, r.imitation_target_us);
  // Self-imitation on workers: every worker clones the job's best (a collective
  // each update), the budget stays exact and the run repeats for its seed.
  TrainOptions si;
  si.budget_evals = 81;
  si.seed = 5;
  si.self_imitation = 1;
  si.self_imitation_cap = 1;
  const TrainResult x = train_agent_workers("aware", graph, cluster, sim, si, 2);
  const TrainResult y = train_agent_workers("aware", graph, cluster, sim, si, 2);
  EXPECT_EQ(x.evaluations, 81);
  EXPECT_EQ(x.self_imitation_updates, x.updates);
  EXPECT_EQ(x.best, y.best);
  EXPECT_EQ(x.self_imitation_probability, y.self_imitation_probability);
}

// The entropy floor on two workers (entropy_floor.h): each process has its own
// controller, fed by its own share of the batch, and checkpoints it with its
// own state, so a run stopped and resumed is the straight run. Against the
// elite step at its strongest (a window of one, weight 5, Aware unfused), the
// floor holds the entropy that the elite step alone lets fall.
TEST(ParallelTraining, WorkersHoldTheEntropyFloorEachWithItsOwnController) {
  register_builtins();
  const OpGraph graph = testing::flat_chain();
  const Cluster cluster = testing::zero_latency_star(3);
  AnalyticSimulator sim;
  TrainOptions t = testing::strong_elite_on_the_flat_chain();
  t.greedy_eval = false;
  const auto on_two = [&](const TrainOptions& o) { return train_agent_workers("aware", graph, cluster, sim, o, 2); };
  const auto lowest_late = [](const TrainResult& r) {
    double low = 1e9;
    for (size_t i = r.curve.size() / 2; i < r.curve.size(); ++i) low = std::min(low, r.curve[i].entropy);
    return low / r.curve.front().entropy;
  };
  const TrainResult free_run = on_two(t);
  t.entropy_floor = 0.5;
  t.entropy_floor_until = 1.0;
  const TrainResult held = on_two(t);
  ASSERT_GT(free_run.curve.size(), 8u);
  // Alone the policy collapses (to about a thousandth of its start entropy when
  // this was written); held, it swings around the floor and its lowest dip
  // after the first half was about a fifth of the start.
  EXPECT_LT(lowest_late(free_run), 0.05) << "the elite step alone collapses the policy";
  EXPECT_GT(lowest_late(held), 0.15) << "each worker's controller holds its share, give or take its lag";
  EXPECT_GT(held.entropy_floor_start, 0.9) << "worker 0's first entropy, near ln 3 = 1.10";
  // Stopped at 650 of the job's 800 evaluations, where the controllers are at
  // work (without their restore this fails), and resumed.
  testing::expect_resume_is_the_straight_run(on_two, t, 650, fs::temp_directory_path() /
                                                                 ("aware-floor-workers-" + std::to_string(getpid())),
                                             "entropy floor on two workers");
}

// A checkpoint of two processes with the entropy floor, resumed by one: its
// controller is the two processes' mean (EntropyFloor::mean_state). The two
// stop at 560 of 640 evaluations, while their controllers are at work (at the
// last update the budget is spent and the floor lets go); the one resumes
// with the budget they had spent, so it makes no update and its controller is
// the restored one.
TEST(ParallelTraining, OneProcessResumesTheFloorsOfTwoAsTheirMean) {
  register_builtins();
  const OpGraph graph = testing::flat_chain();
  const Cluster cluster = testing::zero_latency_star(3);
  const fs::path dir = fs::temp_directory_path() / ("aware-floor-two-to-one-" + std::to_string(getpid()));
  fs::remove_all(dir);
  TrainOptions t = testing::strong_elite_on_the_flat_chain();
  t.budget_evals = 640;
  t.greedy_eval = false;
  t.entropy_floor = 0.5;
  t.entropy_floor_until = 1.0;
  t.resume_dir = dir.string();
  t.checkpoint_every_updates = 1;
  testing::StopAt stop(560);
  t.progress = &stop;
  const std::vector<TrainResult> two = train_on_two("aware", graph, cluster, t);
  ASSERT_TRUE(two[0].cancelled);
  ASSERT_GT(two[0].entropy_floor_multiplier, 0) << "the controllers must be at work when the checkpoint is written";
  ASSERT_GT(two[1].entropy_floor_multiplier, 0);
  EXPECT_NE(two[0].entropy_floor_multiplier, two[1].entropy_floor_multiplier) << "each its own share's";
  AnalyticSimulator sim;
  t.progress = nullptr;
  t.budget_evals = two[0].evaluations + two[1].evaluations;
  const TrainResult alone = train_agent("aware", graph, cluster, sim, t);
  fs::remove_all(dir);
  EXPECT_TRUE(alone.resumed);
  EXPECT_EQ(alone.updates, two[0].updates) << "no update after the resume";
  EXPECT_DOUBLE_EQ(alone.entropy_floor_multiplier,
                   (two[0].entropy_floor_multiplier + two[1].entropy_floor_multiplier) / 2);
  EXPECT_DOUBLE_EQ(alone.entropy_floor_start, (two[0].entropy_floor_start + two[1].entropy_floor_start) / 2);
}

// A worker whose evaluator throws ends every worker (none is left waiting at a
// meeting) and its error reaches the caller.
TEST(ParallelTraining, AFailingWorkerEndsThemAllWithItsError) {
  register_builtins();
  const OpGraph graph = testing::two_chains_graph(4);
  const Cluster cluster = testing::star_cluster(2);
  for (int workers : {2, 3}) {
    TrainOptions t;
    t.budget_evals = 120;
    t.seed = 3;
    FailingClone evaluator(0);
    try {
      train_agent_workers("aware", graph, cluster, evaluator, t, workers);
      ADD_FAILURE() << workers << " workers: no error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "the clone's evaluator broke") << workers << " workers";
    }
  }
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_evals = 10;
  EXPECT_THROW(train_agent_workers("aware", graph, cluster, sim, t, 0), ConfigError);
}

}  // namespace
}  // namespace aware::rl
