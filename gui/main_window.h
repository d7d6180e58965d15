// The aware-gui main window: open a graph and a cluster, place or search on a
// worker thread, and look at the result as a graph, a timeline, a learning
// curve and a comparison. Every piece of work goes through the same loaders,
// registries and runners as the CLI. GUI thread only.
#pragma once

#include <functional>
#include <memory>

#include <QMainWindow>
#include <QPixmap>
#include <QString>

#include "gui/graph_layout.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;

namespace aware::gui {

class BackgroundJob;
class CompareView;
class LinkView;
class ParallelView;
class CurveView;
class GraphView;
class TimelinePage;
class TimelineView;
class Workbench;
struct EvaluationOutcome;
struct SearchOutcome;
struct StrategyOutcome;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Errors go to a QMessageBox when interactive (the default), else only to
  // lastError() and stderr (tests, --screenshot).
  void setInteractive(bool interactive) { interactive_ = interactive; }
  QString lastError() const { return last_error_; }

  // Open: return false (and report the loader's one-line message) on failure,
  // leaving the previous graph / cluster in place.
  bool openGraph(const QString& spec);
  bool openCluster(const QString& spec);
  bool setEvaluator(const QString& name);
  // Shows the placement in `path` (an aware-placement file, as `aware place -o`,
  // File -> Export -> Placement and reproduce's cells write) for the opened graph
  // and cluster, scored by the window's evaluator on this thread, as a method's
  // result is shown. A strategy's rewrite is left first (a placement file names
  // the opened graph's ops). False, with the reader's one-line message and
  // nothing changed, when no graph is open, a search runs, or the file does not
  // fit the graph and cluster.
  bool openPlacement(const QString& path);
  // Dot up to this many ops, our layered layout above (default 400).
  void setGraphvizMaxOps(int ops) { graphviz_max_ops_ = ops; }

  // Place or search on a worker thread; false when one is already running or
  // nothing is open. The result arrives through the event loop.
  bool startSearch(const QString& method, long long budget_evals = 0, quint64 seed = 1);
  void cancelSearch();
  bool searchRunning() const;
  // Processes events until the search ends or `timeout_ms` passes; true if it ended.
  bool waitForSearch(int timeout_ms);
  QString searchError() const { return search_error_; }

  // The strategy beside the method (strategies/strategy.h). "none (place ops)" —
  // or any text starting with "none", or empty — places the loaded graph's ops
  // with the method as before; any other text is a strategy spec ("dp:ring",
  // "dp:4,collective=ps", "hybrid:2xm-etf", "bagging", ...) applied to the loaded
  // graph on the cluster, its rewritten step shown in place of the graph.
  void setStrategy(const QString& spec);
  QString strategy() const;
  static bool isNoStrategy(const QString& text);
  // What *Place* does with the chosen method, strategy and evaluator:
  // startSearch(method) without a strategy, else startStrategy(strategy).
  bool startPlace(long long budget_evals = 0, quint64 seed = 1);
  // Applies `spec` on a worker thread (the search's: searchRunning(),
  // waitForSearch(), cancelSearch() and searchError() cover it); the hybrid's
  // placer gets the window's evaluator, `seed` and `budget_evals`. On success the
  // rewritten graph, its placement and timeline are shown and strategyReport()
  // gives step time per global batch, samples/s and the strategy's notes; a
  // ConfigError / GraphError is reported like any error (searchError(),
  // lastError()) and the previous state stays.
  bool startStrategy(const QString& spec, long long budget_evals = 0, quint64 seed = 1);
  // The strategy shown now (null when the loaded graph is shown) and its report.
  std::shared_ptr<const StrategyOutcome> strategyOutcome() const { return strategy_shown_; }
  QString strategyReport() const;

  // run_compare over `methods` × `devices` for the open graph and cluster.
  bool startCompare(const QStringList& methods, const QList<int>& devices,
                    long long budget_evals = 0);
  bool compareRunning() const;
  // Shows a saved table (aware compare --format json, aware reproduce's
  // compare.json) in the compare view; reports and returns false on bad input.
  bool loadCompareTable(const QString& path);
  bool waitForCompare(int timeout_ms);
  // The last compare run's error (empty after a success, or before any run).
  QString compareError() const;
  // Saves `pixmap` as a PNG at `path` through a temporary file renamed into
  // place, so a failed write leaves no partial image; false if it fails.
  static bool savePng(const QPixmap& pixmap, const QString& path);

  // The timeline tab's second timeline: the current placement evaluated by
  // `evaluator` (an EvaluatorRegistry name; "" or "none" hides it) on a worker
  // thread, again whenever the placement changes. False (and an error report)
  // for a name that is not registered.
  bool setComparisonEvaluator(const QString& evaluator);
  QString comparisonEvaluator() const;
  bool comparisonRunning() const;
  // Processes events until no comparison runs or `timeout_ms` passes; true if none runs.
  bool waitForComparison(int timeout_ms);
  // What the comparison timeline shows now (null while none is shown), and the
  // last comparison's error (empty after a success).
  std::shared_ptr<const EvaluationOutcome> comparisonOutcome() const { return comparison_shown_; }
  QString comparisonError() const { return comparison_error_; }

  // The views, in tab order: "graph", "timeline", "curve", "compare", "links", "pipeline",
  // "grid". The one list
  // the tabs, showView, the PNG export, --view and the tests use. The "timeline"
  // widget is the TimelinePage (both timelines and their captions).
  static QStringList viewNames();
  // One of viewNames(); false for another name.
  bool showView(const QString& name);
  QWidget* viewWidget(const QString& name) const;

  // Exports; false (and an error report) on failure.
  // What if: the graph view's selected ops to `device`, scored at once (false
  // with the reason reported when nothing is placed or selected, or a search
  // is running); undoMove() goes back one edit.
  bool moveSelectionTo(int device);
  bool undoMove();
  // Selects the ops fused with the selected op (Aware's fusion, as `aware fuse`
  // makes it); returns how many, 0 with an error reported.
  int selectFusedGroup();
  // Puts the placement shown (a hand edit, or any method's) into the compare
  // table as a column named by its method, in the row of this graph and
  // cluster; reports and returns false when there is no such row or the table
  // was scored by another evaluator.
  bool addPlacementToCompare();
  bool exportPng(const QString& view, const QString& path);  // "window" grabs it all
  bool exportPlacement(const QString& path);
  bool exportTrace(const QString& path);
  bool exportCompareCsv(const QString& path);

  Workbench* workbench() const { return workbench_; }
  GraphView* graphView() const { return graph_view_; }
  // The placed step's timeline, and the comparison's (hidden while none is chosen).
  TimelineView* timelineView() const { return timeline_view_; }
  TimelineView* comparisonView() const;
  TimelinePage* timelinePage() const { return timeline_page_; }
  CurveView* curveView() const { return curve_view_; }
  CompareView* compareView() const { return compare_view_; }
  LinkView* linkView() const { return link_view_; }
  ParallelView* pipelineView() const { return pipeline_view_; }
  ParallelView* gridView() const { return grid_view_; }
  const GraphLayout& lastLayout() const;
  double lastSceneBuildSeconds() const { return scene_build_s_; }

 private:
  void buildUi();
  void buildMenus();
  void reportError(const QString& message);
  // Runs `action`: true when it returns; what it throws (std::exception) is
  // reported and makes the result false.
  bool reportingErrors(const std::function<void()>& action);
  // While a search runs, reports "a search is running; cancel it before `what`"
  // and returns true: the caller leaves the workbench as it is.
  bool refusedWhileSearching(const QString& what);
  void onGraphChanged();
  void onPlacementChanged();
  void onSearchFinished();
  void onStrategyFinished();
  void refreshStrategyEntries();
  void onCompareFinished();
  // Starts (or queues behind the running one) the comparison evaluation of the
  // current placement, or hides the comparison when none is chosen.
  void refreshComparison();
  void onComparisonFinished();
  void refreshInfo();
  void exportDialog(const QString& what);

  Workbench* workbench_;
  bool interactive_ = true;
  QString last_error_;
  QString search_error_;
  int graphviz_max_ops_ = 400;
  double scene_build_s_ = 0;

  QComboBox* graph_combo_ = nullptr;
  QComboBox* cluster_combo_ = nullptr;
  QComboBox* method_combo_ = nullptr;
  QComboBox* evaluator_combo_ = nullptr;
  QComboBox* strategy_combo_ = nullptr;
  QLabel* strategy_label_ = nullptr;
  QSpinBox* budget_spin_ = nullptr;
  QPushButton* run_button_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QProgressBar* progress_bar_ = nullptr;
  QLabel* best_label_ = nullptr;
  QLabel* info_label_ = nullptr;
  QLabel* explain_label_ = nullptr;
  QLineEdit* search_edit_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  GraphView* graph_view_ = nullptr;
  TimelinePage* timeline_page_ = nullptr;
  TimelineView* timeline_view_ = nullptr;  // timeline_page_->mainView()
  CurveView* curve_view_ = nullptr;
  CompareView* compare_view_ = nullptr;
  LinkView* link_view_ = nullptr;
  ParallelView* pipeline_view_ = nullptr;
  ParallelView* grid_view_ = nullptr;
  QLineEdit* compare_methods_ = nullptr;
  QLineEdit* compare_devices_ = nullptr;
  QPushButton* compare_run_ = nullptr;
  QPushButton* compare_cancel_ = nullptr;
  QProgressBar* compare_progress_ = nullptr;

  std::unique_ptr<BackgroundJob> search_job_;
  std::shared_ptr<SearchOutcome> search_outcome_;
  QString search_method_;
  // Non-empty while (and after) the search slot runs a strategy: its spec.
  QString search_strategy_;
  std::shared_ptr<StrategyOutcome> strategy_outcome_;      // being filled
  std::shared_ptr<const StrategyOutcome> strategy_shown_;  // on screen
  std::unique_ptr<BackgroundJob> compare_job_;
  std::shared_ptr<void> compare_outcome_;  // CompareTable when baselines are built
  std::unique_ptr<BackgroundJob> comparison_job_;
  std::shared_ptr<EvaluationOutcome> comparison_outcome_;      // being filled
  std::shared_ptr<const EvaluationOutcome> comparison_shown_;  // on screen
  QString comparison_running_evaluator_;
  QString comparison_error_;
  // The placement or the choice changed while an evaluation ran: its result is
  // stale; run again when it ends.
  bool comparison_stale_ = false;
  bool syncing_selection_ = false;
};

}  // namespace aware::gui
