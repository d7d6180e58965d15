// MainWindow: widgets and wiring. The actions (open, search, compare, export)
// are in main_window_actions.cc.
#include "gui/main_window.h"

#include <cstdio>

#include <QApplication>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/placer.h"
#include "datasets/families.h"
#include "datasets/zoo.h"
#include "gui/compare_view.h"
#include "gui/curve_view.h"
#include "gui/graph_view.h"
#include "gui/link_view.h"
#include "gui/parallel_view.h"
#include "gui/timeline_page.h"
#include "gui/timeline_view.h"
#include "gui/workbench.h"
#include "gui/workers.h"
#include "strategies/strategy.h"

namespace aware::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  workbench_ = new Workbench(this);
  setWindowTitle(QStringLiteral("aware-gui"));
  buildUi();
  buildMenus();
  connect(workbench_, &Workbench::graphChanged, this, &MainWindow::onGraphChanged);
  connect(workbench_, &Workbench::clusterChanged, this, &MainWindow::refreshInfo);
  connect(workbench_, &Workbench::placementChanged, this, &MainWindow::onPlacementChanged);
  // Selecting an op in one view selects it in the others (the timeline page
  // keeps its two timelines in step itself).
  connect(graph_view_, &GraphView::opSelected, this, [this](int op) {
    if (syncing_selection_) return;
    syncing_selection_ = true;
    timeline_page_->selectOp(op);
    syncing_selection_ = false;
  });
  connect(timeline_page_, &TimelinePage::opSelected, this, [this](int op) {
    if (syncing_selection_) return;
    syncing_selection_ = true;
    graph_view_->selectOp(op);
    syncing_selection_ = false;
  });
  resize(1280, 800);
  timeline_page_->clearMain(QStringLiteral("not placed yet"));
  refreshInfo();
}

MainWindow::~MainWindow() {
  // Stop workers before the widgets they report to go away.
  if (search_job_) search_job_->cancel();
  if (compare_job_) compare_job_->cancel();
  search_job_.reset();
  compare_job_.reset();
  comparison_job_.reset();  // waits for a measured step to end
}

void MainWindow::buildUi() {
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(6, 6, 6, 6);

  // Row 1: what to look at.
  auto* open_row = new QHBoxLayout();
  graph_combo_ = new QComboBox(central);
  graph_combo_->setEditable(true);
  for (const auto& name : zoo_model_names())
    graph_combo_->addItem(QString::fromStdString("zoo:" + name));
  for (const auto& family : family_names())
    graph_combo_->addItem(QString::fromStdString("family:" + family + ":1"));
  graph_combo_->addItem(QStringLiteral("random:1000:1"));
  graph_combo_->addItem(QStringLiteral("random:10000:1"));
  graph_combo_->addItem(QStringLiteral("snn:lattice:12000"));
  graph_combo_->setMinimumContentsLength(22);
  auto* graph_file = new QPushButton(QStringLiteral("File…"), central);
  cluster_combo_ = new QComboBox(central);
  cluster_combo_->setEditable(true);
  for (const auto& name : cluster_preset_names())
    cluster_combo_->addItem(QString::fromStdString("preset:" + (name == "mesh:WxH" ? std::string("mesh:8x8") : name)));
  cluster_combo_->setCurrentText(QStringLiteral("preset:k40x4"));
  cluster_combo_->setMinimumContentsLength(16);
  auto* cluster_file = new QPushButton(QStringLiteral("File…"), central);
  auto* open_button = new QPushButton(QStringLiteral("Open"), central);
  open_row->addWidget(new QLabel(QStringLiteral("Graph"), central));
  open_row->addWidget(graph_combo_, 2);
  open_row->addWidget(graph_file);
  open_row->addSpacing(12);
  open_row->addWidget(new QLabel(QStringLiteral("Cluster"), central));
  open_row->addWidget(cluster_combo_, 1);
  open_row->addWidget(cluster_file);
  open_row->addWidget(open_button);
  layout->addLayout(open_row);
  connect(open_button, &QPushButton::clicked, this, [this] {
    if (cluster_combo_->currentText().toStdString() != workbench_->clusterSpec())
      if (!openCluster(cluster_combo_->currentText())) return;
    openGraph(graph_combo_->currentText());
  });
  connect(graph_file, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, QStringLiteral("Open graph"), {}, QStringLiteral("Graphs (*.json);;All files (*)"));
    if (!path.isEmpty() && openGraph(path)) graph_combo_->setCurrentText(path);
  });
  connect(cluster_file, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, QStringLiteral("Open cluster"), {},
                                     QStringLiteral("Clusters (*.json *.xml);;All files (*)"));
    if (!path.isEmpty() && openCluster(path)) cluster_combo_->setCurrentText(path);
  });

  // Row 2: how to place it.
  auto* place_row = new QHBoxLayout();
  method_combo_ = new QComboBox(central);
  for (const auto& name : PlacerRegistry::instance().names())
    method_combo_->addItem(QString::fromStdString(name));
  if (method_combo_->findText(QStringLiteral("m-etf")) >= 0)
    method_combo_->setCurrentText(QStringLiteral("m-etf"));
  for (int i = 0; i < method_combo_->count(); ++i)
    method_combo_->setItemData(i,
                               QString::fromStdString(PlacerRegistry::instance().description(
                                   method_combo_->itemText(i).toStdString())),
                               Qt::ToolTipRole);
  // The strategy beside the method: none places the ops, anything else is a
  // strategy spec whose rewritten step is placed by the strategy itself.
  strategy_combo_ = new QComboBox(central);
  strategy_combo_->setEditable(true);
  strategy_combo_->setInsertPolicy(QComboBox::NoInsert);
  strategy_combo_->setMinimumContentsLength(16);
  for (const char* entry : {"none (place ops)", "dp:ring", "dp:ps", "dp:tree", "dp,overlap=off",
                            "hybrid:2x", "pipeline", "bagging"})
    strategy_combo_->addItem(QString::fromUtf8(entry), QString::fromUtf8(entry));
  {
    QString help = QStringLiteral(
        "none: place the graph's ops with the method. Otherwise a strategy spec "
        "(free text allowed; docs/strategies.md):");
    for (const auto& [kind, description] : strategy_kinds())
      help += QStringLiteral("\n") + QString::fromStdString(description);
    strategy_combo_->setToolTip(help);
  }
  refreshStrategyEntries();
  connect(method_combo_, &QComboBox::currentTextChanged, this,
          [this] { refreshStrategyEntries(); });
  evaluator_combo_ = new QComboBox(central);
  for (const auto& name : EvaluatorRegistry::instance().names())
    evaluator_combo_->addItem(QString::fromStdString(name));
  evaluator_combo_->setCurrentText(QStringLiteral("analytic"));
  budget_spin_ = new QSpinBox(central);
  budget_spin_->setRange(0, 100000000);
  budget_spin_->setSingleStep(1000);
  budget_spin_->setSpecialValueText(QStringLiteral("default"));
  budget_spin_->setToolTip(
      QStringLiteral("evaluations allowed to search methods; 0 = the method's default"));
  run_button_ = new QPushButton(QStringLiteral("Place"), central);
  cancel_button_ = new QPushButton(QStringLiteral("Cancel"), central);
  cancel_button_->setEnabled(false);
  progress_bar_ = new QProgressBar(central);
  progress_bar_->setRange(0, 100);
  progress_bar_->setValue(0);
  best_label_ = new QLabel(QStringLiteral("best: –"), central);
  best_label_->setMinimumWidth(150);
  place_row->addWidget(new QLabel(QStringLiteral("Method"), central));
  place_row->addWidget(method_combo_);
  place_row->addWidget(new QLabel(QStringLiteral("Strategy"), central));
  place_row->addWidget(strategy_combo_);
  place_row->addWidget(new QLabel(QStringLiteral("Evaluator"), central));
  place_row->addWidget(evaluator_combo_);
  place_row->addWidget(new QLabel(QStringLiteral("Budget"), central));
  place_row->addWidget(budget_spin_);
  place_row->addWidget(run_button_);
  place_row->addWidget(cancel_button_);
  place_row->addWidget(progress_bar_, 1);
  place_row->addWidget(best_label_);
  layout->addLayout(place_row);
  connect(run_button_, &QPushButton::clicked, this, [this] {
    if (!setEvaluator(evaluator_combo_->currentText())) return;
    startPlace(budget_spin_->value());
  });
  connect(cancel_button_, &QPushButton::clicked, this, &MainWindow::cancelSearch);

  info_label_ = new QLabel(central);
  info_label_->setWordWrap(true);
  info_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(info_label_);
  strategy_label_ = new QLabel(central);
  strategy_label_->setWordWrap(true);
  strategy_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  strategy_label_->setVisible(false);
  layout->addWidget(strategy_label_);

  // The views.
  tabs_ = new QTabWidget(central);
  auto* graph_page = new QWidget(tabs_);
  auto* graph_layout = new QVBoxLayout(graph_page);
  graph_layout->setContentsMargins(0, 0, 0, 0);
  auto* find_row = new QHBoxLayout();
  search_edit_ = new QLineEdit(graph_page);
  search_edit_->setPlaceholderText(QStringLiteral("find op by name (Enter: next match)"));
  auto* fit_button = new QPushButton(QStringLiteral("Fit"), graph_page);
  auto* legend = new QLabel(
      QStringLiteral("▭ forward  ◯ backward (dashed)  ⬡ update (dotted) · colour = device · "
                     "red edges cross devices · width = bytes"),
      graph_page);
  find_row->addWidget(search_edit_, 1);
  find_row->addWidget(fit_button);
  find_row->addWidget(legend);
  graph_layout->addLayout(find_row);
  graph_view_ = new GraphView(graph_page);
  graph_layout->addWidget(graph_view_, 1);
  connect(search_edit_, &QLineEdit::returnPressed, this, [this] {
    if (graph_view_->findOp(search_edit_->text()) < 0)
      statusBar()->showMessage(QStringLiteral("no op matches '%1'").arg(search_edit_->text()),
                               4000);
  });
  connect(fit_button, &QPushButton::clicked, graph_view_, &GraphView::fitAll);
  timeline_page_ = new TimelinePage(tabs_);
  timeline_view_ = timeline_page_->mainView();
  {
    QStringList evaluators;
    for (const auto& name : EvaluatorRegistry::instance().names())
      evaluators << QString::fromStdString(name);
    timeline_page_->setEvaluatorNames(evaluators);
  }
  connect(timeline_page_, &TimelinePage::comparisonEvaluatorChanged, this,
          &MainWindow::refreshComparison);
  curve_view_ = new CurveView(tabs_);
  compare_view_ = new CompareView(tabs_);
  // Tabs in viewNames() order; the graph view sits inside its page.
  link_view_ = new LinkView(tabs_);
  pipeline_view_ = new ParallelView(ParallelView::Mode::kPipeline, tabs_);
  grid_view_ = new ParallelView(ParallelView::Mode::kGrid, tabs_);
  const QString titles[] = {QStringLiteral("Graph"),   QStringLiteral("Timeline"), QStringLiteral("Learning curve"),
                            QStringLiteral("Compare"), QStringLiteral("Links"),    QStringLiteral("Pipeline"),
                            QStringLiteral("3-D grid")};
  const QStringList names = viewNames();
  for (int i = 0; i < names.size(); ++i)
    tabs_->addTab(names[i] == "graph" ? graph_page : viewWidget(names[i]), titles[i]);
  layout->addWidget(tabs_, 1);

  // Compare controls live on the compare page.
  auto* crow = new QHBoxLayout(compare_view_->controls());
  crow->setContentsMargins(0, 0, 0, 0);
  compare_methods_ = new QLineEdit(QStringLiteral("single,round-robin,metis,heft,m-etf,m-sct"),
                                   compare_view_->controls());
  compare_devices_ = new QLineEdit(QStringLiteral("2,4,8"), compare_view_->controls());
  compare_run_ = new QPushButton(QStringLiteral("Compare"), compare_view_->controls());
  compare_cancel_ = new QPushButton(QStringLiteral("Cancel"), compare_view_->controls());
  compare_cancel_->setEnabled(false);
  compare_progress_ = new QProgressBar(compare_view_->controls());
  crow->addWidget(new QLabel(QStringLiteral("Methods"), compare_view_->controls()));
  crow->addWidget(compare_methods_, 2);
  crow->addWidget(new QLabel(QStringLiteral("Devices"), compare_view_->controls()));
  crow->addWidget(compare_devices_);
  crow->addWidget(compare_run_);
  crow->addWidget(compare_cancel_);
  crow->addWidget(compare_progress_, 1);
  connect(compare_run_, &QPushButton::clicked, this, [this] {
    QList<int> devices;
    for (const QString& part : compare_devices_->text().split(',', Qt::SkipEmptyParts)) {
      bool ok = false;
      const int n = part.trimmed().toInt(&ok);
      if (!ok || n <= 0) {
        reportError(
            QStringLiteral("compare: device count '%1' is not a positive integer").arg(part));
        return;
      }
      devices << n;
    }
    QStringList methods;
    for (const QString& m : compare_methods_->text().split(',', Qt::SkipEmptyParts))
      methods << m.trimmed();
    if (!setEvaluator(evaluator_combo_->currentText())) return;
    startCompare(methods, devices, budget_spin_->value());
  });
  connect(compare_cancel_, &QPushButton::clicked, this, [this] {
    if (compare_job_) compare_job_->cancel();
  });

  explain_label_ = new QLabel(central);
  explain_label_->setWordWrap(true);
  explain_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  explain_label_->setStyleSheet(QStringLiteral("QLabel { background: #f4f4ee; padding: 4px; }"));
  layout->addWidget(explain_label_);
  setCentralWidget(central);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  file->addAction(QStringLiteral("Open graph file…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open graph"));
    if (!path.isEmpty()) openGraph(path);
  });
  file->addAction(QStringLiteral("Open learning curve…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open learning curve"), {},
                                                      QStringLiteral("Curve CSV (*.csv);;All files (*)"));
    if (path.isEmpty()) return;
    const QString error = curve_view_->showCurveFile(path);
    if (!error.isEmpty()) {
      reportError(error);
      return;
    }
    showView(QStringLiteral("curve"));
  });
  file->addAction(QStringLiteral("Add learning curve…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Add learning curve"), {},
                                                      QStringLiteral("Curve CSV (*.csv);;All files (*)"));
    if (path.isEmpty()) return;
    const QString error = curve_view_->showCurveFile(path, /*add=*/true);
    if (!error.isEmpty()) {
      reportError(error);
      return;
    }
    showView(QStringLiteral("curve"));
  });
  file->addAction(QStringLiteral("Open cluster file…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Open cluster"));
    if (!path.isEmpty()) openCluster(path);
  });
  file->addAction(QStringLiteral("Open placement…"), this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, QStringLiteral("Open placement"), {},
                                     QStringLiteral("Placement JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) openPlacement(path);
  });
  file->addSeparator();
  QMenu* exp = file->addMenu(QStringLiteral("Export"));
  exp->addAction(QStringLiteral("Current view as PNG…"), this, [this] { exportDialog("png"); });
  exp->addAction(QStringLiteral("Placement as JSON…"), this, [this] { exportDialog("placement"); });
  exp->addAction(QStringLiteral("Trace as Chrome trace…"), this, [this] { exportDialog("trace"); });
  exp->addAction(QStringLiteral("Comparison as CSV…"), this, [this] { exportDialog("csv"); });
  file->addSeparator();
  file->addAction(QStringLiteral("Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

  // What if: move the selected ops by hand and see the step at once.
  QMenu* edit = menuBar()->addMenu(QStringLiteral("&Edit"));
  edit->addAction(QStringLiteral("Undo move"), QKeySequence::Undo, this, [this] { undoMove(); });
  edit->addAction(QStringLiteral("Select the layer of the selected op"), QKeySequence(Qt::Key_L), this, [this] {
    if (graph_view_->selectedOp() >= 0) graph_view_->selectLayerOf(graph_view_->selectedOp());
  });
  edit->addAction(QStringLiteral("Select the fused group of the selected op"), QKeySequence(Qt::Key_G), this,
                  [this] { selectFusedGroup(); });
  edit->addAction(QStringLiteral("Add this placement to the comparison"), this, [this] { addPlacementToCompare(); });
  QMenu* to = edit->addMenu(QStringLiteral("Move selection to device"));
  for (int d = 0; d < 10; ++d)
    to->addAction(QStringLiteral("device %1").arg(d), QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_0 + d)),
                  this, [this, d] { moveSelectionTo(d); });
  connect(graph_view_, &GraphView::editMenuRequested, this, [this](const QPoint& at) {
    QMenu menu(this);
    const int selected = static_cast<int>(graph_view_->selectedOps().size());
    if (workbench_->hasPlacement() && selected > 0) {
      const Cluster& cluster = workbench_->cluster();
      for (int d = 0; d < cluster.num_devices(); ++d)
        menu.addAction(QStringLiteral("Move %1 op%2 to %3 (Ctrl+%4)")
                           .arg(selected)
                           .arg(selected == 1 ? "" : "s")
                           .arg(QString::fromStdString(cluster.device(d).name))
                           .arg(d),
                       this, [this, d] { moveSelectionTo(d); });
      menu.addSeparator();
    }
    if (graph_view_->selectedOp() >= 0)
    {
      menu.addAction(QStringLiteral("Select its layer (L)"), this,
                     [this] { graph_view_->selectLayerOf(graph_view_->selectedOp()); });
      menu.addAction(QStringLiteral("Select its fused group (G)"), this, [this] { selectFusedGroup(); });
    }
    QAction* undo = menu.addAction(QStringLiteral("Undo move"), this, [this] { undoMove(); });
    undo->setEnabled(workbench_->canUndo());
    menu.exec(at);
  });
}

bool MainWindow::moveSelectionTo(int device) {
  if (searchRunning()) {
    reportError(QStringLiteral("what if: wait for the running search to finish"));
    return false;
  }
  const std::vector<int> ops = graph_view_->selectedOps();
  if (ops.empty()) {
    reportError(QStringLiteral("what if: select ops first (click, Ctrl+click, Shift+drag a box)"));
    return false;
  }
  const double before = workbench_->hasPlacement() ? workbench_->result().step_time_us : 0;
  try {
    workbench_->moveOps(ops, device);
  } catch (const Error& e) {
    reportError(QString::fromStdString(e.what()));
    return false;
  }
  graph_view_->selectOps(ops);  // keep the selection for the next move
  statusBar()->showMessage(QStringLiteral("moved %1 op%2 to device %3: step %4 ms → %5 ms (Ctrl+Z undoes)")
                               .arg(ops.size())
                               .arg(ops.size() == 1 ? "" : "s")
                               .arg(device)
                               .arg(before / 1e3, 0, 'f', 2)
                               .arg(workbench_->result().step_time_us / 1e3, 0, 'f', 2));
  return true;
}

int MainWindow::selectFusedGroup() {
  const int op = graph_view_->selectedOp();
  if (op < 0) {
    reportError(QStringLiteral("fused group: select an op first"));
    return 0;
  }
  std::vector<int> group;
  try {
    group = workbench_->fusedGroupOf(op);
  } catch (const Error& e) {
    reportError(QString::fromStdString(e.what()));
    return 0;
  }
  graph_view_->selectOps(group);
  statusBar()->showMessage(QStringLiteral("fused group of %1: %2 op%3 (one of %4 groups Aware's fusion makes here)")
                               .arg(QString::fromStdString(workbench_->graph().op(op).name))
                               .arg(group.size())
                               .arg(group.size() == 1 ? "" : "s")
                               .arg(workbench_->fusedGroupCount()));
  return static_cast<int>(group.size());
}

bool MainWindow::addPlacementToCompare() {
#ifdef AWARE_GUI_HAVE_BASELINES
  if (!compare_view_->hasTable()) {
    reportError(QStringLiteral("compare: run or open a comparison first, then add the placement to it"));
    return false;
  }
  if (!workbench_->hasPlacement()) {
    reportError(QStringLiteral("compare: nothing placed to add"));
    return false;
  }
  CompareTable table = compare_view_->table();
  const std::string scored_by = EvaluatorRegistry::instance().create(workbench_->evaluatorName())->describe();
  if (scored_by != table.evaluator) {
    reportError(QString::fromStdString("compare: the table was scored by " + table.evaluator +
                                       ", this placement by " + scored_by + ": choose the same evaluator"));
    return false;
  }
  MethodResult result;
  result.method = workbench_->method();
  result.placement = workbench_->placement();
  record_step(workbench_->result(), &result);
  const std::string model = workbench_->graph().name(), cluster = workbench_->cluster().name();
  if (!add_method_result(table, model, cluster, result)) {
    reportError(QString::fromStdString("compare: the table has no row for " + model + " on " + cluster +
                                       ": compare this graph on this cluster first"));
    return false;
  }
  compare_view_->setTable(table);
  statusBar()->showMessage(QString::fromStdString("added " + result.method + " to the comparison (" + model +
                                                  " on " + cluster + ")"));
  return true;
#else
  reportError(QStringLiteral("compare: this build has no compare runner"));
  return false;
#endif
}

bool MainWindow::undoMove() {
  if (searchRunning()) return false;
  const bool undone = workbench_->undo();
  statusBar()->showMessage(undone ? QStringLiteral("undone: step %1 ms").arg(workbench_->result().step_time_us / 1e3, 0, 'f', 2)
                                  : QStringLiteral("nothing to undo"));
  return undone;
}

void MainWindow::reportError(const QString& message) {
  last_error_ = message;
  std::fprintf(stderr, "error: %s\n", message.toLocal8Bit().constData());
  if (interactive_) QMessageBox::critical(this, QStringLiteral("aware-gui"), message);
  statusBar()->showMessage(QStringLiteral("error: ") + message, 10000);
}

bool MainWindow::reportingErrors(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& e) {
    reportError(QString::fromStdString(e.what()));
    return false;
  }
  return true;
}

bool MainWindow::refusedWhileSearching(const QString& what) {
  if (!searchRunning()) return false;
  reportError(QStringLiteral("a search is running; cancel it before ") + what);
  return true;
}

void MainWindow::refreshStrategyEntries() {
  // The hybrid entry follows the chosen method: "hybrid:2x<method>".
  for (int i = 0; i < strategy_combo_->count(); ++i)
    if (strategy_combo_->itemData(i).toString() == QStringLiteral("hybrid:2x"))
      strategy_combo_->setItemText(i, QStringLiteral("hybrid:2x") + method_combo_->currentText());
}

void MainWindow::refreshInfo() {
  info_label_->setText(QString::fromStdString(workbench_->summary()));
  const QString report = strategyReport();
  strategy_label_->setText(report);
  strategy_label_->setVisible(!report.isEmpty());
  explain_label_->setText(workbench_->hasPlacement()
                              ? QString::fromStdString(workbench_->explanation())
                              : QStringLiteral("Not placed yet: choose a method and press Place."));
  curve_view_->setLowerBound(workbench_->hasGraph() ? workbench_->lowerBound().bound_us() / 1e3
                                                    : -1);
}

void MainWindow::onPlacementChanged() {
  // Loading a graph or cluster, or placing ops, leaves the strategy's rewrite.
  if (workbench_->strategy().empty()) strategy_shown_.reset();
  if (workbench_->hasPlacement()) {
    std::vector<std::string> names;
    for (const auto& d : workbench_->cluster().devices()) names.push_back(d.name);
    graph_view_->setPlacement(&workbench_->placement(), names);
    const StepResult& result = workbench_->result();
    timeline_page_->setMainTrace(
        workbench_->graphPtr(), workbench_->cluster(), workbench_->trace(),
        workbench_->criticalPath(),
        QString::fromStdString(step_caption(
            workbench_->method(),
            result.evaluator.empty() ? workbench_->evaluatorName() : result.evaluator, result)));
    link_view_->setStep(workbench_->graph(), workbench_->cluster(), workbench_->placement());
    const QString strategy = QString::fromStdString(workbench_->strategy());
    pipeline_view_->setStep(workbench_->graph(), workbench_->placement(), workbench_->trace(), strategy);
    grid_view_->setStep(workbench_->graph(), workbench_->placement(), workbench_->trace(), strategy);
  } else {
    graph_view_->setPlacement(nullptr);
    timeline_page_->clearMain(QStringLiteral("not placed yet"));
    link_view_->clear(QStringLiteral("not placed yet"));
    pipeline_view_->clear(QStringLiteral("not placed yet"));
    grid_view_->clear(QStringLiteral("not placed yet"));
  }
  refreshInfo();
  refreshComparison();
}

QStringList MainWindow::viewNames() {
  return {QStringLiteral("graph"), QStringLiteral("timeline"), QStringLiteral("curve"),
          QStringLiteral("compare"), QStringLiteral("links"), QStringLiteral("pipeline"),
          QStringLiteral("grid")};
}

bool MainWindow::showView(const QString& name) {
  const int index = static_cast<int>(viewNames().indexOf(name));
  if (index < 0) return false;
  tabs_->setCurrentIndex(index);
  return true;
}

QWidget* MainWindow::viewWidget(const QString& name) const {
  if (name == "graph") return graph_view_;
  if (name == "timeline") return timeline_page_;
  if (name == "curve") return curve_view_;
  if (name == "compare") return compare_view_;
  if (name == "links") return link_view_;
  if (name == "pipeline") return pipeline_view_;
  if (name == "grid") return grid_view_;
  if (name == "window") return const_cast<MainWindow*>(this);
  return nullptr;
}

TimelineView* MainWindow::comparisonView() const { return timeline_page_->comparisonView(); }

const GraphLayout& MainWindow::lastLayout() const { return graph_view_->layout(); }

}  // namespace aware::gui
