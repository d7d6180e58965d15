// Background work for the window: a placer search or a comparison runs on its
// own QThread and reports through a ProgressObserver whose updates reach the
// GUI thread as queued signals. Cancel() asks the work to stop through
// ProgressObserver::cancel(); the work returns its best so far.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "core/progress.h"
#include "strategies/strategy.h"

class QThread;

#ifdef AWARE_GUI_HAVE_BASELINES
#include "experiments/compare.h"
#endif

namespace aware::gui {

// A function run on a worker thread. It may throw; the job records what().
class BackgroundJob : public QObject {
  Q_OBJECT

 public:
  using Work = std::function<void(ProgressObserver& progress)>;
  // The job owns `work`; start() runs it once.
  explicit BackgroundJob(Work work, QObject* parent = nullptr);
  // Cancels and waits for the worker thread.
  ~BackgroundJob() override;

  void start();
  // Thread-safe; the work sees it at its next poll.
  void cancel();
  bool running() const { return running_; }
  bool wasCancelled() const;
  // The exception message when the work threw, else empty. Valid after finished().
  QString error() const { return error_; }
  double elapsedSeconds() const { return elapsed_s_; }

 Q_SIGNALS:
  // On the GUI thread, at most about every 15 ms plus the last update.
  void progressed(qint64 done, qint64 total, double best_step_us, double elapsed_s);
  // On the GUI thread, once per policy update of a learned agent (never
  // throttled): the update's sampled step times and the policy's entropy.
  void sampled(qint64 done, double mean_us, double min_us, double max_us, double entropy);
  // On the GUI thread, once, after the work returned or threw.
  void finished();

 private:
  class Observer;
  Work work_;
  std::unique_ptr<Observer> observer_;
  QThread* thread_ = nullptr;
  bool running_ = false;
  QString error_;
  double elapsed_s_ = 0;
};

struct SearchRequest {
  std::shared_ptr<const OpGraph> graph;
  std::shared_ptr<const Cluster> cluster;
  std::string method;                  // PlacerRegistry name
  std::string evaluator = "analytic";  // EvaluatorRegistry name
  long long budget_evals = 0;          // 0: the placer's default
  double budget_seconds = 0;
  std::uint64_t seed = 1;
  Options options;
};

struct SearchOutcome {
  Placement placement;  // empty when the placer threw
  // The placement scored (with a trace) by the search's evaluator on the worker,
  // so that a measured evaluator does not hold up the window; unset when the
  // placer or the scoring threw.
  bool scored = false;
  StepResult result;
  Trace trace;
};

// A job that runs PlacerRegistry::create(method)->place(...) with its own
// evaluator instance, then evaluates the placement once more with a trace; the
// result lands in *outcome (read it after finished()).
std::unique_ptr<BackgroundJob> make_search_job(const SearchRequest& request,
                                               std::shared_ptr<SearchOutcome> outcome);

// One placement to evaluate (with a trace) on a worker thread.
struct EvaluationRequest {
  std::shared_ptr<const OpGraph> graph;
  std::shared_ptr<const Cluster> cluster;
  Placement placement;
  std::string evaluator;  // EvaluatorRegistry name
  Options options;
};

struct EvaluationOutcome {
  StepResult result;
  Trace trace;
  std::string description;  // Evaluator::describe() after the step (a backend's mapping)
};

// A job that creates the evaluator and runs evaluate(graph, cluster, placement,
// &trace) once. Creating it or running it may throw (a HardwareError when a
// device is missing or fails): the job's error() then holds the one-line reason.
// The evaluation does not poll cancel(); a measured step runs to its end.
std::unique_ptr<BackgroundJob> make_evaluation_job(const EvaluationRequest& request,
                                                   std::shared_ptr<EvaluationOutcome> outcome);

// A strategy to apply to the open graph and cluster (strategies/strategy.h).
struct StrategyRequest {
  std::shared_ptr<const OpGraph> graph;  // the graph as loaded, not a rewrite of it
  std::shared_ptr<const Cluster> cluster;
  std::string spec;                      // "dp:4,collective=ring", "hybrid:2xm-etf", ...
  std::string evaluator = "analytic";    // scores the result; hybrid's placer searches with it
  long long budget_evals = 0;            // for hybrid's placer; 0: its default
  std::uint64_t seed = 1;
};

struct StrategyOutcome {
  // Set once apply_strategy returned.
  bool applied = false;
  StrategyResult strategy;               // its graph moved into `graph` (left empty)
  std::shared_ptr<const OpGraph> graph;  // the rewritten step, shared with the views
  // The rewritten graph's placement scored with a trace; unset when scoring threw.
  bool scored = false;
  StepResult result;
  Trace trace;
};

// A job that runs apply_strategy(graph, cluster, spec, context) with its own
// evaluator instance as the context's evaluator (the hybrid's placer searches
// with it and reports progress and sees cancel() through the job), then scores
// the rewritten graph's placement once with a trace. apply_strategy's
// ConfigError / GraphError becomes the job's error().
std::unique_ptr<BackgroundJob> make_strategy_job(const StrategyRequest& request,
                                                 std::shared_ptr<StrategyOutcome> outcome);

#ifdef AWARE_GUI_HAVE_BASELINES
// A job that runs run_compare(request) (its progress field is set by the job).
std::unique_ptr<BackgroundJob> make_compare_job(const CompareRequest& request,
                                                std::shared_ptr<CompareTable> outcome);
#endif

}  // namespace aware::gui
