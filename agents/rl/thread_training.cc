// train_agent_workers (thread_training.h): ParallelTraining over threads that
// meet at a barrier. Torch-free.
#include "agents/rl/thread_training.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/errors.h"

namespace aware::rl {
namespace {

// Where the workers meet. Every collective writes this worker's slot, waits for
// all, combines the slots in rank order (the same bits everywhere), and waits
// again before the slots are reused. A worker that fails sets `failed` and
// leaves the barrier for good; the others see the flag after their next wait and
// fail too, so none is left waiting.
struct Meeting {
  explicit Meeting(int n)
      : size(n), sync(n), floats(static_cast<size_t>(n)), numbers(static_cast<size_t>(n)), texts(static_cast<size_t>(n)) {}
  int size;
  std::barrier<> sync;
  std::atomic<bool> failed{false};
  std::vector<std::vector<float>> floats;
  std::vector<double> numbers;
  std::vector<std::string> texts;
};

class StopWorker : public std::exception {
 public:
  const char* what() const noexcept override { return "another worker failed"; }
};

class ThreadTraining final : public ParallelTraining {
 public:
  ThreadTraining(Meeting& m, int rank) : m_(m), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return m_.size; }
  void average(std::vector<float>& v) override {
    m_.floats[rank_] = v;
    wait();
    for (size_t i = 0; i < v.size(); ++i) {
      float sum = 0;
      for (int r = 0; r < m_.size; ++r) sum += m_.floats[r].at(i);
      v[i] = sum / static_cast<float>(m_.size);
    }
    wait();
  }
  void broadcast(std::vector<float>& v) override {
    m_.floats[rank_] = v;
    wait();
    v = m_.floats[0];
    wait();
  }
  double minimum(double x) override { return combine(x, [](double a, double b) { return std::min(a, b); }); }
  double maximum(double x) override { return combine(x, [](double a, double b) { return std::max(a, b); }); }
  double sum(double x) override { return combine(x, [](double a, double b) { return a + b; }); }
  std::string broadcast_text(const std::string& text) override {
    m_.texts[rank_] = text;
    wait();
    const std::string out = m_.texts[0];
    wait();
    return out;
  }
  std::vector<std::string> gather_text(const std::string& text) override {
    m_.texts[rank_] = text;
    wait();
    std::vector<std::string> out;
    if (rank_ == 0) out = m_.texts;
    wait();
    return out;
  }

 private:
  void wait() {
    m_.sync.arrive_and_wait();
    if (m_.failed.load()) throw StopWorker();
  }
  template <typename F>
  double combine(double x, F f) {
    m_.numbers[rank_] = x;
    wait();
    double out = m_.numbers[0];
    for (int r = 1; r < m_.size; ++r) out = f(out, m_.numbers[r]);
    wait();
    return out;
  }
  Meeting& m_;
  int rank_;
};

}  // namespace

TrainResult train_agent_workers(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                                Evaluator& evaluator, const TrainOptions& options, int workers) {
  if (workers < 1) throw ConfigError("--workers must be at least 1");
  if (workers == 1) return train_agent(agent, graph, cluster, evaluator, options);
  if (options.parallel != nullptr) throw ConfigError("worker threads inside data-parallel processes are not supported");
  std::vector<std::unique_ptr<Evaluator>> clones;
  for (int w = 1; w < workers; ++w) clones.push_back(evaluator.clone());
  Meeting meeting(workers);
  std::vector<TrainResult> results(static_cast<size_t>(workers));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      try {
        ThreadTraining parallel(meeting, w);
        TrainOptions t = options;
        t.parallel = &parallel;
        if (w != 0) {
          t.progress = nullptr;
          t.curve_csv.clear();
          t.save_policy.clear();
        }
        Evaluator& mine = w == 0 ? evaluator : *clones[static_cast<size_t>(w - 1)];
        results[static_cast<size_t>(w)] = train_agent(agent, graph, cluster, mine, t);
      } catch (const StopWorker&) {
        meeting.sync.arrive_and_drop();
      } catch (...) {
        errors[static_cast<size_t>(w)] = std::current_exception();
        meeting.failed.store(true);
        meeting.sync.arrive_and_drop();
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  TrainResult out = results[0];
  out.evaluations = 0;
  out.episodes = 0;
  out.guide_rounds = out.guide_evaluations = out.guide_improvements = 0;
  for (const TrainResult& r : results) {
    out.evaluations += r.evaluations;
    out.episodes += r.episodes;
    out.guide_rounds += r.guide_rounds;
    out.guide_evaluations += r.guide_evaluations;
    out.guide_improvements += r.guide_improvements;
    const bool better = (r.best_feasible && !out.best_feasible) ||
                        (r.best_feasible == out.best_feasible && r.best_step_us < out.best_step_us);
    if (better && r.best.size() > 0) {
      out.best = r.best;
      out.best_step_us = r.best_step_us;
      out.best_feasible = r.best_feasible;
      out.best_is_greedy = false;
    }
  }
  out.episodes_per_update = results[0].episodes_per_update * workers;
  return out;
}

}  // namespace aware::rl
