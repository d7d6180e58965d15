// Evaluates batches of placements on several threads, each with its own clone of
// one evaluator (an Evaluator instance is single-threaded; see evaluator.h).
//
//   EvaluatorPool pool(*evaluator, 2);
//   std::vector<StepResult> results = pool.evaluate_batch(graph, cluster, placements);
//
// Results come back in the order of `placements` and are those the evaluator gives
// one at a time (each clone prepares the graph once and keeps it). The worker
// threads live as long as the pool; the destructor joins them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/evaluator.h"
#include "core/placement.h"

namespace aware {

class EvaluatorPool {
 public:
  // `threads` >= 1 clones of `prototype` (ConfigError otherwise); with 1 the
  // batch runs on the calling thread and no thread is started.
  EvaluatorPool(const Evaluator& prototype, int threads);
  ~EvaluatorPool();
  EvaluatorPool(const EvaluatorPool&) = delete;
  EvaluatorPool& operator=(const EvaluatorPool&) = delete;

  int threads() const { return static_cast<int>(evaluators_.size()); }

  // Evaluates every placement; rethrows the first exception an evaluation threw
  // (after the whole batch has stopped). Not re-entrant: one batch at a time.
  std::vector<StepResult> evaluate_batch(const OpGraph& graph, const Cluster& cluster,
                                         const std::vector<Placement>& placements);

 private:
  void worker(int index);
  void run_items(int index);

  std::vector<std::unique_ptr<Evaluator>> evaluators_;
  std::vector<std::thread> workers_;  // threads() - 1 of them; the caller is worker 0

  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  // Bumped for each batch (under mutex_; read without it by helpers that wait
  // for the next batch spinning a little before they sleep, so that batches
  // of a few short evaluations do not pay a thread wake-up each).
  std::atomic<long long> generation_{0};
  std::atomic<int> busy_{0};  // helpers still working on this batch
  std::atomic<bool> stopping_{false};

  // The batch in flight (valid while busy_ > 0 or the caller runs).
  const OpGraph* graph_ = nullptr;
  const Cluster* cluster_ = nullptr;
  const std::vector<Placement>* placements_ = nullptr;
  std::vector<StepResult>* results_ = nullptr;
  std::atomic<std::size_t> next_{0};  // the next item to take
  std::atomic<bool> failed_{false};   // an item threw: take no more
  std::exception_ptr error_;
};

}  // namespace aware
