// MainWindow actions: open, search, strategies and compare (the exports are in
// main_window_export.cc). Work that can take long runs in a BackgroundJob; the
// window only draws what it reports.
#include <algorithm>
#include <chrono>
#include <functional>
#include <fstream>

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "gui/compare_view.h"
#include "gui/curve_view.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/timeline_page.h"
#include "gui/timeline_view.h"
#include "gui/workbench.h"
#include "gui/workers.h"
#include "strategies/strategy.h"

namespace aware::gui {
namespace {

// Processes the GUI's events while `running` holds, for at most `timeout_ms`;
// true when it stopped holding (the job finished and its signals were delivered).
bool processEventsWhile(const std::function<bool()>& running, int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  while (running() && timer.elapsed() < timeout_ms)
    QApplication::processEvents(QEventLoop::AllEvents, 20);
  return !running();
}

}  // namespace

bool MainWindow::openGraph(const QString& spec) {
  if (refusedWhileSearching(QStringLiteral("opening another graph"))) return false;
  if (!reportingErrors([&] { workbench_->loadGraph(spec.toStdString()); })) return false;
  graph_combo_->setCurrentText(spec);
  return true;
}

bool MainWindow::openCluster(const QString& spec) {
  if (refusedWhileSearching(QStringLiteral("changing the cluster"))) return false;
  if (!reportingErrors([&] { workbench_->loadCluster(spec.toStdString()); })) return false;
  cluster_combo_->setCurrentText(spec);
  return true;
}

bool MainWindow::openPlacement(const QString& path) {
  if (refusedWhileSearching(QStringLiteral("opening a placement"))) return false;
  if (!workbench_->hasGraph()) {
    reportError(path + QStringLiteral(": open a graph first (--graph): a placement names its ops"));
    return false;
  }
  const bool opened = reportingErrors([&] {
    // Read against the opened graph before leaving a strategy's rewrite, so
    // that a file that does not fit changes nothing.
    const Placement placement =
        read_placement_file(path.toStdString(), *workbench_->baseGraphPtr(), workbench_->cluster());
    workbench_->restoreBaseGraph();
    workbench_->setPlacement(placement, "placement " + path.toStdString());
  });
  if (!opened) return false;
  const StepResult& r = workbench_->result();
  if (r.feasible)
    best_label_->setText(QStringLiteral("step: %1 ms").arg(r.step_time_us / 1e3, 0, 'f', 2));
  statusBar()->showMessage(QStringLiteral("opened placement %1").arg(path), 10000);
  return true;
}

bool MainWindow::setEvaluator(const QString& name) {
  return reportingErrors([&] { workbench_->setEvaluator(name.toStdString()); });
}

void MainWindow::onGraphChanged() {
  const auto begin = std::chrono::steady_clock::now();
  GraphLayout layout = auto_layout(workbench_->graph(), graphviz_max_ops_);
  const double layout_s = layout.seconds;
  graph_view_->setGraph(workbench_->graphPtr(), std::move(layout));
  scene_build_s_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() - layout_s;
  statusBar()->showMessage(QStringLiteral("%1: loaded in %2 s, %3 layout %4 s, scene %5 s")
                               .arg(QString::fromStdString(workbench_->graphSpec()))
                               .arg(workbench_->graphLoadSeconds(), 0, 'f', 3)
                               .arg(QString::fromStdString(graph_view_->layout().engine))
                               .arg(layout_s, 0, 'f', 3)
                               .arg(scene_build_s_, 0, 'f', 3),
                           15000);
  refreshInfo();
}

bool MainWindow::searchRunning() const { return search_job_ && search_job_->running(); }

bool MainWindow::startSearch(const QString& method, long long budget_evals, quint64 seed) {
  if (searchRunning()) return false;
  if (!workbench_->hasGraph()) {
    reportError(QStringLiteral("open a graph first"));
    return false;
  }
  SearchRequest request;
  request.graph = workbench_->baseGraphPtr();  // not a strategy's rewrite of it
  request.cluster = workbench_->clusterPtr();
  request.method = method.toStdString();
  request.evaluator = workbench_->evaluatorName();
  request.budget_evals = budget_evals;
  request.seed = seed;
  search_outcome_ = std::make_shared<SearchOutcome>();
  search_error_.clear();
  search_method_ = method;
  search_strategy_.clear();
  method_combo_->setCurrentText(method);
  budget_spin_->setValue(
      static_cast<int>(std::min<long long>(budget_evals, budget_spin_->maximum())));
  search_job_ = make_search_job(request, search_outcome_);
  curve_view_->beginRun(
      QStringLiteral("%1 on %2").arg(method, QString::fromStdString(workbench_->graph().name())));
  connect(search_job_.get(), &BackgroundJob::progressed, this,
          [this](qint64 done, qint64 total, double best_us, double) {
            progress_bar_->setRange(0, total > 0 ? 1000 : 0);
            if (total > 0) progress_bar_->setValue(static_cast<int>(1000.0 * done / total));
            if (best_us >= 0) {
              best_label_->setText(QStringLiteral("best: %1 ms").arg(best_us / 1e3, 0, 'f', 2));
              curve_view_->addPoint(static_cast<double>(done), best_us / 1e3);
            }
          });
  // A learned agent also reports each policy update: mean, spread, entropy.
  connect(search_job_.get(), &BackgroundJob::sampled, this,
          [this](qint64 done, double mean_us, double min_us, double max_us, double entropy) {
            curve_view_->addSample(static_cast<double>(done), mean_us / 1e3,
                                   min_us < 0 ? -1 : min_us / 1e3, max_us < 0 ? -1 : max_us / 1e3, entropy);
          });
  connect(search_job_.get(), &BackgroundJob::finished, this, &MainWindow::onSearchFinished);
  run_button_->setEnabled(false);
  cancel_button_->setEnabled(true);
  progress_bar_->setRange(0, 0);  // busy until the first report
  best_label_->setText(QStringLiteral("best: –"));
  statusBar()->showMessage(QStringLiteral("%1 running…").arg(method));
  search_job_->start();
  return true;
}

void MainWindow::cancelSearch() {
  if (search_job_) search_job_->cancel();
}

bool MainWindow::waitForSearch(int timeout_ms) {
  return processEventsWhile([this] { return searchRunning(); }, timeout_ms);
}

void MainWindow::onSearchFinished() {
  if (!search_strategy_.isEmpty()) {
    onStrategyFinished();
    return;
  }
  run_button_->setEnabled(true);
  cancel_button_->setEnabled(false);
  progress_bar_->setRange(0, 1000);
  progress_bar_->setValue(1000);
  const bool cancelled = search_job_->wasCancelled();
  const double seconds = search_job_->elapsedSeconds();
  if (!search_job_->error().isEmpty()) {
    search_error_ = search_job_->error();
    progress_bar_->setValue(0);
    reportError(QStringLiteral("%1: %2").arg(search_method_, search_error_));
    return;
  }
  // The ops were placed on the loaded graph: leave a strategy's rewrite first.
  workbench_->restoreBaseGraph();
  // The graph may have been replaced meanwhile only if the job was not running,
  // which openGraph() refuses; still, check the sizes before taking the result.
  const Placement placement = search_outcome_->placement;
  if (placement.size() != workbench_->graph().num_ops() || !search_outcome_->scored) {
    search_error_ = QStringLiteral("placement does not match the open graph");
    reportError(search_error_);
    return;
  }
  try {
    // Scored on the worker: a measured evaluator takes seconds.
    workbench_->setPlacement(placement, search_method_.toStdString(),
                             std::move(search_outcome_->result), std::move(search_outcome_->trace));
  } catch (const std::exception& e) {
    search_error_ = QString::fromStdString(e.what());
    reportError(search_error_);
    return;
  }
  const StepResult& r = workbench_->result();
  // Placers that do not search report nothing: give the curve one point.
  if (curve_view_->runCount() > 0 && curve_view_->pointCount(curve_view_->runCount() - 1) == 0 &&
      r.feasible)
    curve_view_->addPoint(1, r.step_time_us / 1e3);
  if (r.feasible)
    best_label_->setText(QStringLiteral("step: %1 ms").arg(r.step_time_us / 1e3, 0, 'f', 2));
  statusBar()->showMessage(
      QStringLiteral("%1 %2 in %3 s")
          .arg(search_method_,
               cancelled ? QStringLiteral("cancelled; best so far placed") : QStringLiteral("done"))
          .arg(seconds, 0, 'f', 2),
      15000);
}

bool MainWindow::isNoStrategy(const QString& text) {
  const QString t = text.trimmed();
  return t.isEmpty() || t.startsWith(QStringLiteral("none"));
}

void MainWindow::setStrategy(const QString& spec) {
  const int index = strategy_combo_->findText(spec);
  if (index >= 0)
    strategy_combo_->setCurrentIndex(index);
  else
    strategy_combo_->setEditText(spec);
}

QString MainWindow::strategy() const { return strategy_combo_->currentText().trimmed(); }

bool MainWindow::startPlace(long long budget_evals, quint64 seed) {
  if (isNoStrategy(strategy())) return startSearch(method_combo_->currentText(), budget_evals, seed);
  return startStrategy(strategy(), budget_evals, seed);
}

bool MainWindow::startStrategy(const QString& spec, long long budget_evals, quint64 seed) {
  if (searchRunning()) return false;
  if (!workbench_->hasGraph()) {
    reportError(QStringLiteral("open a graph first"));
    return false;
  }
  StrategyRequest request;
  request.graph = workbench_->baseGraphPtr();
  request.cluster = workbench_->clusterPtr();
  request.spec = spec.trimmed().toStdString();
  request.evaluator = workbench_->evaluatorName();
  request.budget_evals = budget_evals;
  request.seed = seed;
  strategy_outcome_ = std::make_shared<StrategyOutcome>();
  search_outcome_.reset();
  search_error_.clear();
  search_strategy_ = spec.trimmed();
  search_method_ = search_strategy_;
  if (strategy() != search_strategy_) setStrategy(search_strategy_);
  budget_spin_->setValue(
      static_cast<int>(std::min<long long>(budget_evals, budget_spin_->maximum())));
  search_job_ = make_strategy_job(request, strategy_outcome_);
  curve_view_->beginRun(QStringLiteral("%1 on %2").arg(
      search_strategy_, QString::fromStdString(workbench_->baseGraphPtr()->name())));
  // Only the hybrid's placer reports progress; a rewrite alone is quick.
  connect(search_job_.get(), &BackgroundJob::progressed, this,
          [this](qint64 done, qint64 total, double best_us, double) {
            progress_bar_->setRange(0, total > 0 ? 1000 : 0);
            if (total > 0) progress_bar_->setValue(static_cast<int>(1000.0 * done / total));
            if (best_us >= 0)
              best_label_->setText(QStringLiteral("best: %1 ms").arg(best_us / 1e3, 0, 'f', 2));
          });
  connect(search_job_.get(), &BackgroundJob::finished, this, &MainWindow::onSearchFinished);
  run_button_->setEnabled(false);
  cancel_button_->setEnabled(true);
  progress_bar_->setRange(0, 0);
  best_label_->setText(QStringLiteral("best: –"));
  statusBar()->showMessage(QStringLiteral("strategy %1 running…").arg(search_strategy_));
  search_job_->start();
  return true;
}

void MainWindow::onStrategyFinished() {
  run_button_->setEnabled(true);
  cancel_button_->setEnabled(false);
  progress_bar_->setRange(0, 1000);
  progress_bar_->setValue(1000);
  const double seconds = search_job_->elapsedSeconds();
  const QString spec = search_strategy_;
  if (!search_job_->error().isEmpty()) {
    // apply_strategy's ConfigError / GraphError names the spec and the graph;
    // a placer's error (hybrid) may not: then the spec goes in front.
    search_error_ = search_job_->error();
    progress_bar_->setValue(0);
    reportError(search_error_.contains(QStringLiteral("'%1'").arg(spec))
                    ? search_error_
                    : QStringLiteral("strategy %1: %2").arg(spec, search_error_));
    return;
  }
  StrategyOutcome& outcome = *strategy_outcome_;
  if (!outcome.applied || !outcome.scored || !outcome.graph) {
    search_error_ = QStringLiteral("strategy %1 gave no scored step").arg(spec);
    reportError(search_error_);
    return;
  }
  try {
    // The outcome must be on screen before placementChanged asks for the report.
    strategy_shown_ = strategy_outcome_;
    workbench_->setStrategyResult(outcome.graph, outcome.strategy.spec, outcome.strategy.placement,
                                  outcome.result, outcome.trace);
  } catch (const std::exception& e) {
    strategy_shown_.reset();
    search_error_ = QString::fromStdString(e.what());
    reportError(QStringLiteral("strategy %1: %2").arg(spec, search_error_));
    return;
  }
  const StepResult& r = workbench_->result();
  if (r.feasible) {
    curve_view_->addPoint(1, r.step_time_us / 1e3);
    best_label_->setText(QStringLiteral("step: %1 ms").arg(r.step_time_us / 1e3, 0, 'f', 2));
  }
  statusBar()->showMessage(
      QStringLiteral("strategy %1 done in %2 s").arg(spec).arg(seconds, 0, 'f', 2), 15000);
}

QString MainWindow::strategyReport() const {
  if (!strategy_shown_ || workbench_->strategy().empty() || !workbench_->hasPlacement())
    return {};
  const StrategyResult& s = strategy_shown_->strategy;
  const StepResult& r = workbench_->result();
  QString text = QStringLiteral("Strategy %1: %2 replica(s) on %3 device(s), global batch %4 · ")
                     .arg(QString::fromStdString(s.spec))
                     .arg(s.replicas)
                     .arg(s.devices_used)
                     .arg(s.global_batch, 0, 'g', 6);
  if (!r.feasible) {
    text += QStringLiteral("infeasible: %1").arg(QString::fromStdString(r.infeasible_reason));
  } else {
    const double step_s = r.step_time_us / 1e6;
    text += QStringLiteral("step %1 ms per global batch").arg(r.step_time_us / 1e3, 0, 'f', 3);
    if (step_s > 0)
      text += QStringLiteral(" · %1 samples/s").arg(s.global_batch / step_s, 0, 'f', 1);
  }
  if (!s.notes.empty()) {
    text += QStringLiteral(" · notes: ");
    for (std::size_t i = 0; i < s.notes.size(); ++i)
      text += (i ? QStringLiteral("; ") : QString()) + QString::fromStdString(s.notes[i]);
  }
  return text;
}

bool MainWindow::setComparisonEvaluator(const QString& evaluator) {
  const QString name = evaluator == QStringLiteral("none") ? QString() : evaluator;
  if (!name.isEmpty() && !EvaluatorRegistry::instance().has(name.toStdString())) {
    try {
      EvaluatorRegistry::instance().info(name.toStdString());  // the registry's message
    } catch (const std::exception& e) {
      reportError(QStringLiteral("compare with: ") + QString::fromStdString(e.what()));
    }
    return false;
  }
  if (!timeline_page_->setComparisonEvaluator(name)) {
    reportError(QStringLiteral("compare with: '%1' is not offered").arg(name));
    return false;
  }
  return true;
}

QString MainWindow::comparisonEvaluator() const { return timeline_page_->comparisonEvaluator(); }

bool MainWindow::comparisonRunning() const { return comparison_job_ && comparison_job_->running(); }

bool MainWindow::waitForComparison(int timeout_ms) {
  return processEventsWhile([this] { return comparisonRunning(); }, timeout_ms);
}

void MainWindow::refreshComparison() {
  const QString name = timeline_page_->comparisonEvaluator();
  comparison_shown_.reset();
  // A running evaluation cannot be stopped (a measured step runs to its end):
  // mark its result stale and start again when it ends.
  if (comparisonRunning()) comparison_stale_ = true;
  if (name.isEmpty()) return;  // the page hides the second timeline itself
  if (!workbench_->hasPlacement()) {
    timeline_page_->setComparisonNote(QStringLiteral("%1: nothing placed yet").arg(name));
    return;
  }
  timeline_page_->setComparisonNote(
      QStringLiteral("%1: evaluating the placement above…").arg(name));
  if (comparisonRunning()) return;

  EvaluationRequest request;
  request.graph = workbench_->graphPtr();
  request.cluster = workbench_->clusterPtr();
  request.placement = workbench_->placement();
  request.evaluator = name.toStdString();
  comparison_outcome_ = std::make_shared<EvaluationOutcome>();
  comparison_running_evaluator_ = name;
  comparison_stale_ = false;
  comparison_job_ = make_evaluation_job(request, comparison_outcome_);
  connect(comparison_job_.get(), &BackgroundJob::finished, this, &MainWindow::onComparisonFinished);
  timeline_page_->setComparisonBusy(true);
  statusBar()->showMessage(QStringLiteral("evaluating the placement with %1…").arg(name));
  comparison_job_->start();
}

void MainWindow::onComparisonFinished() {
  timeline_page_->setComparisonBusy(false);
  const QString name = comparison_running_evaluator_;
  const QString error = comparison_job_->error();
  const double seconds = comparison_job_->elapsedSeconds();
  if (comparison_stale_) {
    // The placement or the choice changed meanwhile: this result is for another.
    comparison_stale_ = false;
    refreshComparison();
    return;
  }
  if (!error.isEmpty()) {
    const QString message = QStringLiteral("%1: %2").arg(name, error);
    timeline_page_->setComparisonNote(message, /*error=*/true);
    // The caption keeps the reason; a message box each time the placement
    // changes would only repeat it (cuda on a machine without a GPU).
    if (message != comparison_error_) reportError(QStringLiteral("compare with ") + message);
    comparison_error_ = message;
    return;
  }
  comparison_error_.clear();
  const EvaluationOutcome& outcome = *comparison_outcome_;
  const TraceCriticalPath path =
      critical_path_from_trace(workbench_->graph(), workbench_->placement(), outcome.trace);
  timeline_page_->setComparisonTrace(workbench_->graphPtr(), workbench_->cluster(), outcome.trace,
                                     path,
                                     QString::fromStdString(step_caption(
                                         workbench_->method(), name.toStdString(), outcome.result)),
                                     QString::fromStdString(outcome.description));
  comparison_shown_ = comparison_outcome_;
  statusBar()->showMessage(
      QStringLiteral("%1 evaluated the placement in %2 s").arg(name).arg(seconds, 0, 'f', 2),
      15000);
}

bool MainWindow::compareRunning() const { return compare_job_ && compare_job_->running(); }

bool MainWindow::waitForCompare(int timeout_ms) {
  return processEventsWhile([this] { return compareRunning(); }, timeout_ms);
}

QString MainWindow::compareError() const {
#ifdef AWARE_GUI_HAVE_BASELINES
  return compare_job_ != nullptr ? compare_job_->error() : QString();
#else
  return QString();
#endif
}

bool MainWindow::startCompare(const QStringList& methods, const QList<int>& devices,
                              long long budget_evals) {
#ifdef AWARE_GUI_HAVE_BASELINES
  if (compareRunning() || !workbench_->hasGraph()) return false;
  CompareRequest request;
  auto graph = workbench_->baseGraphPtr();
  request.models = {graph->name()};
  request.load_graph = [graph](const std::string&) { return *graph; };
  request.cluster = workbench_->clusterSpec();
  for (int d : devices) request.devices.push_back(d);
  request.methods.clear();
  for (const QString& m : methods) request.methods.push_back(m.toStdString());
  if (request.methods.empty()) request.methods = {"all"};
  request.evaluator = workbench_->evaluatorName();
  request.budget_evals = budget_evals;
  auto table = std::make_shared<CompareTable>();
  compare_outcome_ = table;
  compare_job_ = make_compare_job(request, table);
  connect(compare_job_.get(), &BackgroundJob::progressed, this,
          [this](qint64 done, qint64 total, double, double) {
            compare_progress_->setRange(0, total > 0 ? static_cast<int>(total) : 0);
            compare_progress_->setValue(static_cast<int>(done));
          });
  connect(compare_job_.get(), &BackgroundJob::finished, this, &MainWindow::onCompareFinished);
  compare_run_->setEnabled(false);
  compare_cancel_->setEnabled(true);
  compare_progress_->setRange(0, 0);
  compare_job_->start();
  return true;
#else
  (void)methods, (void)devices, (void)budget_evals;
  reportError(QStringLiteral("compare needs the baseline placers, which this build leaves out"));
  return false;
#endif
}

void MainWindow::onCompareFinished() {
  compare_run_->setEnabled(true);
  compare_cancel_->setEnabled(false);
  compare_progress_->setRange(0, 1);
  compare_progress_->setValue(1);
#ifdef AWARE_GUI_HAVE_BASELINES
  if (!compare_job_->error().isEmpty()) {
    compare_progress_->setValue(0);
    reportError(QStringLiteral("compare: ") + compare_job_->error());
    return;
  }
  compare_view_->setTable(*std::static_pointer_cast<CompareTable>(compare_outcome_));
#endif
}

bool MainWindow::loadCompareTable(const QString& path) {
#ifdef AWARE_GUI_HAVE_BASELINES
  return reportingErrors([&] {
    const std::string file = path.toStdString();
    compare_view_->setTable(compare_from_json(parse_json_text(read_text_file(file), file), file));
  });
#else
  reportError(QStringLiteral("this build has no placers, so no compare view: ") + path);
  return false;
#endif
}

}  // namespace aware::gui
