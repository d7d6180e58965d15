// aware-gui: the workbench's desktop front end. With --screenshot it renders
// one view offscreen (or in the X window when DISPLAY is set) and exits; with
// --bench-layout it prints how long opening and laying out graphs takes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QImage>
#include <QPainter>
#include <QTimer>
#include <QtCharts/QChartView>

#include "builtins/builtins.h"
#include "gui/compare_view.h"
#include "gui/curve_view.h"
#include "gui/graph_view.h"
#include "gui/main_window.h"
#include "gui/workbench.h"

namespace {

bool has_display() {
  const char* x = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (x != nullptr && *x != '\0') || (w != nullptr && *w != '\0');
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Opens each graph in a window and times load, layout, scene, first paint of
// the whole drawing and a pan across it.
int bench_layout(aware::gui::MainWindow& window, const QStringList& specs) {
  window.show();
  QApplication::processEvents();
  for (const QString& spec : specs) {
    const auto begin = std::chrono::steady_clock::now();
    if (!window.openGraph(spec)) return 1;
    QApplication::processEvents();
    const double open_s = seconds_since(begin);
    auto* view = window.graphView();
    const auto paint_begin = std::chrono::steady_clock::now();
    view->viewport()->grab();
    const double fit_paint_s = seconds_since(paint_begin);
    // Pan: 20 steps down the drawing at a zoom where names show.
    view->zoomTo(0.6);
    const auto pan_begin = std::chrono::steady_clock::now();
    const QRectF scene = view->sceneRect();
    for (int i = 0; i < 20; ++i) {
      view->centerOn(scene.center().x(), scene.top() + scene.height() * i / 20.0);
      view->viewport()->grab();
    }
    const double pan_ms = seconds_since(pan_begin) * 1000 / 20;
    const auto& layout = window.lastLayout();
    std::printf(
        "%-18s %6d ops %6d edges  load %.3f s  layout(%s) %.4f s  scene %.3f s  "
        "open total %.3f s  fit paint %.3f s  pan frame %.1f ms\n",
        spec.toLocal8Bit().constData(), window.workbench()->graph().num_ops(),
        window.workbench()->graph().num_edges(), window.workbench()->graphLoadSeconds(),
        layout.engine.c_str(), layout.seconds, window.lastSceneBuildSeconds(), open_s, fit_paint_s,
        pan_ms);
    std::fflush(stdout);
  }
  return 0;
}

// A number given on the command line, or an error naming the option: the GUI's
// command line refuses bad input like the CLI's instead of reading it as 0.
bool whole_number(const QCommandLineParser& parser, const QCommandLineOption& option, long long min,
                  long long& out) {
  const QString text = parser.value(option);
  bool ok = false;
  out = text.toLongLong(&ok);
  if (ok && out >= min) return true;
  std::fprintf(stderr, "error: --%s: '%s' is not a whole number >= %lld\n",
               option.names().first().toLocal8Bit().constData(), text.toLocal8Bit().constData(), min);
  return false;
}

// Two messages Qt prints on every headless run that say nothing about the run
// (no XDG runtime folder in a container; the offscreen platform's missing size
// hints): dropped, so that an error is the one line the user reads. Everything
// else goes to the handler Qt had.
QtMessageHandler qt_default_handler = nullptr;

void drop_known_harmless_qt_messages(QtMsgType type, const QMessageLogContext& context,
                                     const QString& message) {
  if (message.startsWith(QStringLiteral("QStandardPaths: XDG_RUNTIME_DIR not set")) ||
      message == QStringLiteral("This plugin does not support propagateSizeHints()"))
    return;
  if (qt_default_handler != nullptr) qt_default_handler(type, context, message);
}

// The largest window side: a screenshot is W x H x 4 bytes (8192 x 8192: 256 MB);
// far larger sizes made QPainter fail on a null image and then crash.
constexpr int kMaxWindowSide = 8192;

}  // namespace

int main(int argc, char** argv) {
  // Headless modes need no screen: render offscreen unless there is one.
  bool wants_offscreen = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--screenshot" || a == "--bench-layout") wants_offscreen = true;
  }
  if (wants_offscreen && !has_display() && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");

  qt_default_handler = qInstallMessageHandler(drop_known_harmless_qt_messages);
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("aware-gui"));
  aware::register_builtins();

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Aware workbench GUI"));
  parser.addHelpOption();
  const QCommandLineOption graph_opt(
      "graph", "Graph: zoo:NAME, family:F:SEED, random:N[:SEED], or a JSON file.", "spec");
  const QCommandLineOption cluster_opt("cluster", "Cluster: preset:NAME or a file.", "spec",
                                       "preset:k40x4");
  const QCommandLineOption method_opt("method", "Placer to run after opening.", "name");
  const QCommandLineOption budget_opt("budget", "Evaluations for search methods (0: default).", "n",
                                      "0");
  const QCommandLineOption evaluator_opt("evaluator", "Evaluator name.", "name", "analytic");
  const QCommandLineOption view_opt(
      "view", "View to show: " + aware::gui::MainWindow::viewNames().join(", ") + ".", "view",
      "graph");
  const QCommandLineOption shot_opt("screenshot", "Render the window to PNG and exit.", "png");
  const QCommandLineOption quit_opt("quit-after-ms", "Quit after this many milliseconds.", "ms");
  const QCommandLineOption bench_opt("bench-layout",
                                     "Time opening and laying out --graph (default: "
                                     "zoo:inception_v3 and random:10000:1), then exit.");
  const QCommandLineOption methods_opt("compare-methods", "Methods for --view compare.", "list",
                                       "single,round-robin,metis,heft,m-etf,m-sct");
  const QCommandLineOption devices_opt("compare-devices", "Device counts for --view compare.",
                                       "list", "2,4,8");
  const QCommandLineOption zoom_opt("zoom", "Graph view zoom for the screenshot (default: fit).",
                                    "scale");
  const QCommandLineOption find_opt("find", "Select the first op whose name contains this text.",
                                    "text");
  const QCommandLineOption dot_opt(
      "graphviz-max-ops", "Use Graphviz dot up to this many ops (default 400).", "n", "400");
  const QCommandLineOption size_opt(
      "size",
      QStringLiteral(
          "Window size WxH in pixels, each side 1 to %1 (a screenshot holds W x H x 4 bytes).")
          .arg(kMaxWindowSide),
      "size", "1280x800");
  const QCommandLineOption placement_opt(
      "placement",
      "Show this placement file (aware place -o, File > Export > Placement, reproduce's "
      "cells/KEY.placement.json) for --graph on --cluster, instead of placing with --method.",
      "json");
  const QCommandLineOption compare_with_opt(
      "compare-with",
      "Timeline: also evaluate the placement with this evaluator and show its timeline below.",
      "name");
  const QCommandLineOption strategy_opt(
      "strategy",
      "Strategy to apply after opening instead of placing ops with --method: dp:ring, "
      "dp:4,collective=ps, hybrid:2xm-etf, pipeline, bagging, ... (docs/strategies.md).",
      "spec");
  const QCommandLineOption curve_file_opt(
      "curve-file",
      "Show this learning-curve CSV (aware search --curve, aware place --curve) in the curve view: "
      "best so far, the sampled mean with its spread, and the policy's entropy. Repeat it to "
      "overlay several runs' best-so-far lines (the last one's samples are drawn).",
      "csv");
  const QCommandLineOption table_opt(
      "compare-table",
      "Show this saved compare table (aware compare --format json, aware reproduce's "
      "compare.json) in the compare view instead of running one.",
      "json");
  for (const auto& o : {graph_opt,        cluster_opt,  method_opt, budget_opt,     evaluator_opt,
                        view_opt,         shot_opt,     quit_opt,   bench_opt,      methods_opt,
                        devices_opt,      zoom_opt,     find_opt,   dot_opt,        size_opt,
                        compare_with_opt, strategy_opt, table_opt,  curve_file_opt, placement_opt})
    parser.addOption(o);
  parser.process(app);

  // An option given twice kept only its last value ("--graph A --graph B" showed B):
  // only --curve-file (overlays) and --graph with --bench-layout take several.
  for (const QCommandLineOption& o :
       {graph_opt, cluster_opt, method_opt, budget_opt, evaluator_opt, view_opt, shot_opt, quit_opt,
        methods_opt, devices_opt, zoom_opt, find_opt, dot_opt, size_opt, compare_with_opt,
        strategy_opt, table_opt, placement_opt}) {
    const int given = static_cast<int>(parser.values(o).size());
    if (given <= 1 || (o.names() == graph_opt.names() && parser.isSet(bench_opt))) continue;
    std::fprintf(stderr, "error: --%s: given %d times; give it once\n",
                 o.names().first().toLocal8Bit().constData(), given);
    return 1;
  }

  // Numbers first, so that a typo fails before any work.
  long long graphviz_max_ops = 0, budget = 0, quit_after_ms = 0;
  if (!whole_number(parser, dot_opt, 0, graphviz_max_ops) || !whole_number(parser, budget_opt, 0, budget))
    return 1;
  if (parser.isSet(quit_opt) && !whole_number(parser, quit_opt, 0, quit_after_ms)) return 1;
  const QStringList size = parser.value(size_opt).split('x');
  bool width_ok = false, height_ok = false;
  const int width = size.size() == 2 ? size[0].toInt(&width_ok) : 0;
  const int height = size.size() == 2 ? size[1].toInt(&height_ok) : 0;
  if (!width_ok || !height_ok || width <= 0 || height <= 0) {
    std::fprintf(stderr, "error: --size: '%s' is not WxH in pixels (e.g. 1280x800)\n",
                 parser.value(size_opt).toLocal8Bit().constData());
    return 1;
  }
  if (width > kMaxWindowSide || height > kMaxWindowSide) {
    std::fprintf(stderr,
                 "error: --size: '%s' is larger than a window may be: at most %dx%d pixels\n",
                 parser.value(size_opt).toLocal8Bit().constData(), kMaxWindowSide, kMaxWindowSide);
    return 1;
  }
  const QString view = parser.value(view_opt);
  if (!aware::gui::MainWindow::viewNames().contains(view)) {
    std::fprintf(stderr, "error: --view: unknown view '%s' (%s)\n", view.toLocal8Bit().constData(),
                 aware::gui::MainWindow::viewNames().join(", ").toLocal8Bit().constData());
    return 1;
  }
  if (parser.isSet(placement_opt) && (parser.isSet(method_opt) || parser.isSet(strategy_opt))) {
    std::fprintf(
        stderr,
        "error: --placement: shows a placement file; give it without --method and --strategy\n");
    return 1;
  }
  if (parser.isSet(method_opt) && parser.isSet(strategy_opt)) {
    // As aware simulate and place: one of the two places the ops; the other was ignored.
    std::fprintf(stderr,
                 "error: --method and --strategy both place the ops: a strategy places them "
                 "itself (hybrid:2xm-etf names a placer); give one of them\n");
    return 1;
  }
  if (parser.isSet(placement_opt) && !parser.isSet(graph_opt)) {
    std::fprintf(stderr,
                 "error: --placement: give --graph too (a placement names the ops of a graph)\n");
    return 1;
  }
  QList<int> compare_devices;
  for (const QString& d : parser.value(devices_opt).split(',', Qt::SkipEmptyParts)) {
    bool ok = false;
    const int n = d.toInt(&ok);
    if (!ok || n < 0) {  // 0: the cluster as given
      std::fprintf(stderr, "error: --compare-devices: '%s' is not a device count\n",
                   d.toLocal8Bit().constData());
      return 1;
    }
    compare_devices << n;
  }
  double zoom = 0;
  if (parser.isSet(zoom_opt)) {
    bool ok = false;
    zoom = parser.value(zoom_opt).toDouble(&ok);
    if (!ok || !(zoom > 0)) {
      std::fprintf(stderr, "error: --zoom: '%s' is not a positive scale\n",
                   parser.value(zoom_opt).toLocal8Bit().constData());
      return 1;
    }
  }

  aware::gui::MainWindow window;
  const bool headless = parser.isSet(shot_opt) || parser.isSet(bench_opt);
  window.setInteractive(!headless);
  window.setGraphvizMaxOps(static_cast<int>(std::min<long long>(graphviz_max_ops, 1 << 30)));
  window.resize(width, height);

  if (parser.isSet(bench_opt)) {
    QStringList specs = parser.values(graph_opt);
    if (specs.isEmpty()) specs = {"zoo:inception_v3", "random:10000:1"};
    if (!window.openCluster(parser.value(cluster_opt))) return 1;
    return bench_layout(window, specs);
  }

  if (!window.openCluster(parser.value(cluster_opt)) && headless) return 1;
  if (parser.isSet(graph_opt) && !window.openGraph(parser.value(graph_opt)) && headless) return 1;
  if (!window.setEvaluator(parser.value(evaluator_opt)) && headless) return 1;
  window.show();
  QApplication::processEvents();

  QString method = parser.value(method_opt);
  if (method.isEmpty() && headless && !parser.isSet(placement_opt) &&
      (view == "timeline" || view == "curve"))
    method = "m-etf";
  const QString strategy = parser.value(strategy_opt);
  const bool with_strategy = !aware::gui::MainWindow::isNoStrategy(strategy);
  if (parser.isSet(placement_opt)) {
    if (!window.openPlacement(parser.value(placement_opt)) && headless) return 1;
  } else if (with_strategy && window.workbench()->hasGraph()) {
    if (!window.startStrategy(strategy, budget) && headless)
      return 1;
    if (headless) {
      window.waitForSearch(24 * 3600 * 1000);
      if (!window.searchError().isEmpty()) return 1;
    }
  } else if (!method.isEmpty() && window.workbench()->hasGraph()) {
    if (!window.startSearch(method, budget) && headless) return 1;
    if (headless) {
      window.waitForSearch(24 * 3600 * 1000);
      if (!window.searchError().isEmpty()) return 1;
    }
  }
  if (parser.isSet(compare_with_opt)) {
    if (!window.setComparisonEvaluator(parser.value(compare_with_opt)) && headless) return 1;
    if (headless) {
      window.waitForComparison(24 * 3600 * 1000);
      if (!window.comparisonError().isEmpty()) return 1;
    }
  }
  if (parser.isSet(table_opt)) {
    if (!window.loadCompareTable(parser.value(table_opt)) && headless) return 1;
  } else if (view == "compare" && headless && window.workbench()->hasGraph()) {
    if (!window.startCompare(parser.value(methods_opt).split(',', Qt::SkipEmptyParts),
                             compare_devices, budget))
      return 1;
    window.waitForCompare(24 * 3600 * 1000);
    if (!window.compareError().isEmpty()) return 1;
  }
  const QStringList curve_files = parser.values(curve_file_opt);
  for (int i = 0; i < curve_files.size(); ++i) {
    const QString error = window.curveView()->showCurveFile(curve_files[i], /*add=*/i > 0);
    if (!error.isEmpty()) {
      std::fprintf(stderr, "error: %s\n", error.toLocal8Bit().constData());
      if (headless) return 1;
    }
  }
  window.showView(view);  // a known name: checked with the other options
  if (parser.isSet(zoom_opt)) window.graphView()->zoomTo(zoom);
  if (parser.isSet(find_opt)) {
    const int op = window.graphView()->findOp(parser.value(find_opt));
    if (op < 0)
      std::fprintf(stderr, "warning: no op matches '%s'\n",
                   parser.value(find_opt).toLocal8Bit().constData());
  }
  if (parser.isSet(shot_opt)) {
    // Let layouts and charts settle, then grab the whole window.
    for (int i = 0; i < 5; ++i) QApplication::processEvents();
    QElapsedTimer settle;
    settle.start();
    while (settle.elapsed() < 300) QApplication::processEvents(QEventLoop::AllEvents, 50);
    // A saved compare table is drawn for a report: its chart alone.
    if (parser.isSet(table_opt)) {
      if (!aware::gui::MainWindow::savePng(window.compareView()->chartView()->grab(), parser.value(shot_opt))) {
        std::fprintf(stderr, "error: cannot write %s\n", parser.value(shot_opt).toLocal8Bit().constData());
        return 1;
      }
    } else if (!window.exportPng("window", parser.value(shot_opt))) {
      return 1;
    }
    std::printf("wrote %s\n", parser.value(shot_opt).toLocal8Bit().constData());
    return 0;
  }
  if (parser.isSet(quit_opt))
    QTimer::singleShot(static_cast<int>(std::min<long long>(quit_after_ms, 1 << 30)), &app, &QApplication::quit);
  return QApplication::exec();
}
