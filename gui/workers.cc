#include "gui/workers.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>

#include <QMetaObject>
#include <QThread>

#include "core/placer.h"

namespace aware::gui {

// Forwards progress to the job's thread as queued calls, throttled so a fast
// search cannot flood the event queue.
class BackgroundJob::Observer : public ProgressObserver {
 public:
  explicit Observer(BackgroundJob* job) : job_(job) {}
  void on_progress(const Progress& p) override {
    if (p.sample_mean_us >= 0) {
      BackgroundJob* job = job_;
      const qint64 done = p.done;
      const double mean = p.sample_mean_us, lo = p.sample_min_us, hi = p.sample_max_us, h = p.entropy;
      QMetaObject::invokeMethod(
          job, [job, done, mean, lo, hi, h] { Q_EMIT job->sampled(done, mean, lo, hi, h); },
          Qt::QueuedConnection);
    }
    const auto now = std::chrono::steady_clock::now();
    const bool last = p.total > 0 && p.done >= p.total;
    if (!last && p.message.empty() && now - last_sent_ < std::chrono::milliseconds(15)) return;
    last_sent_ = now;
    BackgroundJob* job = job_;
    const qint64 done = p.done, total = p.total;
    const double best = p.best_step_us, elapsed = p.elapsed_s;
    // Posted with the job as context: dropped if the job is gone by then.
    QMetaObject::invokeMethod(
        job,
        [job, done, total, best, elapsed] { Q_EMIT job->progressed(done, total, best, elapsed); },
        Qt::QueuedConnection);
  }

 private:
  BackgroundJob* job_;
  std::chrono::steady_clock::time_point last_sent_{};
};

BackgroundJob::BackgroundJob(Work work, QObject* parent)
    : QObject(parent), work_(std::move(work)), observer_(std::make_unique<Observer>(this)) {}

BackgroundJob::~BackgroundJob() {
  if (thread_ != nullptr) {
    observer_->cancel();
    thread_->wait();
    delete thread_;
  }
}

void BackgroundJob::start() {
  if (thread_ != nullptr) return;
  running_ = true;
  thread_ = QThread::create([this] {
    const auto begin = std::chrono::steady_clock::now();
    try {
      work_(*observer_);
    } catch (const std::exception& e) {
      error_ = QString::fromStdString(e.what());
    } catch (...) {
      error_ = QStringLiteral("unknown error");
    }
    elapsed_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  });
  connect(
      thread_, &QThread::finished, this,
      [this] {
        running_ = false;
        Q_EMIT finished();
      },
      Qt::QueuedConnection);
  thread_->start();
}

void BackgroundJob::cancel() { observer_->cancel(); }

bool BackgroundJob::wasCancelled() const { return observer_->cancelled(); }

std::unique_ptr<BackgroundJob> make_search_job(const SearchRequest& request,
                                               std::shared_ptr<SearchOutcome> outcome) {
  return std::make_unique<BackgroundJob>([request, outcome](ProgressObserver& progress) {
    auto placer = PlacerRegistry::instance().create(request.method);
    auto evaluator = EvaluatorRegistry::instance().create(request.evaluator);
    PlaceContext context;
    context.evaluator = evaluator.get();
    context.seed = request.seed;
    context.budget_evals = request.budget_evals;
    context.budget_seconds = request.budget_seconds;
    context.progress = &progress;
    context.options = request.options;
    Placement placement = placer->place(*request.graph, *request.cluster, context);
    outcome->placement = placement;
    check_placement(*request.graph, *request.cluster, placement, request.method);
    outcome->result =
        evaluator->evaluate(*request.graph, *request.cluster, placement, &outcome->trace);
    outcome->scored = true;
  });
}

std::unique_ptr<BackgroundJob> make_evaluation_job(const EvaluationRequest& request,
                                                   std::shared_ptr<EvaluationOutcome> outcome) {
  return std::make_unique<BackgroundJob>([request, outcome](ProgressObserver&) {
    check_placement(*request.graph, *request.cluster, request.placement, request.evaluator);
    auto evaluator = EvaluatorRegistry::instance().create(request.evaluator, request.options);
    outcome->result =
        evaluator->evaluate(*request.graph, *request.cluster, request.placement, &outcome->trace);
    outcome->description = evaluator->describe();
  });
}

std::unique_ptr<BackgroundJob> make_strategy_job(const StrategyRequest& request,
                                                 std::shared_ptr<StrategyOutcome> outcome) {
  return std::make_unique<BackgroundJob>([request, outcome](ProgressObserver& progress) {
    auto evaluator = EvaluatorRegistry::instance().create(request.evaluator);
    StrategyContext context;
    context.evaluator = evaluator.get();
    context.seed = request.seed;
    context.budget_evals = request.budget_evals;
    context.progress = &progress;
    outcome->strategy = apply_strategy(*request.graph, *request.cluster, request.spec, context);
    outcome->applied = true;
    auto graph = std::make_shared<const OpGraph>(std::move(outcome->strategy.graph));
    outcome->strategy.graph = OpGraph();
    outcome->graph = graph;
    check_placement(*graph, *request.cluster, outcome->strategy.placement, request.spec);
    outcome->result =
        evaluator->evaluate(*graph, *request.cluster, outcome->strategy.placement, &outcome->trace);
    outcome->scored = true;
  });
}

#ifdef AWARE_GUI_HAVE_BASELINES
std::unique_ptr<BackgroundJob> make_compare_job(const CompareRequest& request,
                                                std::shared_ptr<CompareTable> outcome) {
  return std::make_unique<BackgroundJob>([request, outcome](ProgressObserver& progress) {
    CompareRequest r = request;
    r.progress = &progress;
    *outcome = run_compare(r);
  });
}
#endif

}  // namespace aware::gui
