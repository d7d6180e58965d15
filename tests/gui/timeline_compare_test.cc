// The timeline tab's comparison: the same graph, cluster and placement from a
// second evaluator, evaluated on a worker and shown under the first on one
// time axis. Hand graphs of timed ops (tests/test_graphs.h) keep it fast: the
// CPU executor spins each op for its compute_us. Offscreen, like gui_test.cc.
#include <string>

#include <gtest/gtest.h>
#include <QApplication>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QScrollBar>

#include "core/evaluator.h"
#include "core/formats.h"
#include "core/placer.h"
#include "gui/graph_view.h"
#include "gui/gui_testing.h"
#include "gui/main_window.h"
#include "gui/timeline_page.h"
#include "gui/timeline_view.h"
#include "gui/workbench.h"
#include "gui/workers.h"
#include "hw/executor.h"
#include "test_graphs.h"

namespace aware::gui {
namespace {

// Opens `graph` on `cluster` through files, as a user would, and places it by hand.
void open_and_place(MainWindow& w, const OpGraph& graph, const Cluster& cluster,
                    const Placement& placement) {
  const std::string graph_file = tmp_path("compare_" + graph.name() + ".json");
  const std::string cluster_file = tmp_path("compare_cluster.json");
  write_graph_file(graph, graph_file);
  write_cluster_file(cluster, cluster_file);
  ASSERT_TRUE(w.openCluster(QString::fromStdString(cluster_file)));
  ASSERT_TRUE(w.openGraph(QString::fromStdString(graph_file)));
  w.workbench()->setPlacement(placement, "hand");
}

// ops of 1 ms each: a -> b -> c (what the CPU executor spins for).
OpGraph millisecond_chain() {
  OpGraph g = testing::chain_graph();
  for (int i = 0; i < g.num_ops(); ++i) g.mutable_op(i).compute_us = 1000;
  return g;
}

TEST(TimelineCompare, SameEvaluatorTwiceDrawsTheSameBars) {
  REQUIRE_APP();
  MainWindow w;
  w.setInteractive(false);
  w.show();
  // Chosen before anything is placed: the bottom shows, waiting for a placement.
  ASSERT_TRUE(w.setComparisonEvaluator("analytic"));
  EXPECT_TRUE(w.timelinePage()->comparisonShown());
  open_and_place(w, testing::diamond_graph(), testing::star_cluster(2), Placement({0, 0, 1, 0}));
  // The placement started an evaluation on a worker; it reports through the event loop.
  EXPECT_TRUE(w.comparisonRunning());
  ASSERT_TRUE(w.waitForComparison(10000));
  ASSERT_TRUE(w.comparisonError().isEmpty()) << w.comparisonError().toStdString();
  ASSERT_NE(w.comparisonOutcome(), nullptr);

  TimelineView* top = w.timelineView();
  TimelineView* bottom = w.comparisonView();
  ASSERT_GT(top->barCount(), 0);
  ASSERT_EQ(bottom->barCount(), top->barCount());
  for (int i = 0; i < top->barCount(); ++i) {
    const auto a = top->bar(i), b = bottom->bar(i);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.transfer, b.transfer);
    EXPECT_EQ(a.lane, b.lane);
    EXPECT_DOUBLE_EQ(a.start_us, b.start_us);
    EXPECT_DOUBLE_EQ(a.end_us, b.end_us);
    EXPECT_EQ(a.critical, b.critical);
  }
  EXPECT_EQ(top->lanes().names, bottom->lanes().names);
  const std::string step = format_time_us(w.workbench()->result().step_time_us);
  EXPECT_EQ(w.timelinePage()->mainCaption().toStdString(),
            "hand · analytic (simulated): step " + step);
  EXPECT_EQ(w.timelinePage()->comparisonCaption().toStdString(),
            "hand · analytic (simulated): step " + step);
  EXPECT_DOUBLE_EQ(top->pixelsPerUs(), bottom->pixelsPerUs());
}

TEST(TimelineCompare, MeasuredCpuStepBelowTheSimulatedOneOnOneTimeScale) {
  REQUIRE_APP();
  ASSERT_TRUE(EvaluatorRegistry::instance().has("cpu"));
  MainWindow w;
  w.setInteractive(false);
  w.resize(1000, 700);
  w.show();
  w.showView("timeline");
  const OpGraph graph = millisecond_chain();
  open_and_place(w, graph, testing::star_cluster(2), Placement({0, 1, 0}));
  ASSERT_TRUE(w.setComparisonEvaluator("cpu"));
  EXPECT_TRUE(w.timelinePage()->comparisonBusy());
  ASSERT_TRUE(w.waitForComparison(30000));
  ASSERT_TRUE(w.comparisonError().isEmpty()) << w.comparisonError().toStdString();
  ASSERT_NE(w.comparisonOutcome(), nullptr);
  EXPECT_FALSE(w.timelinePage()->comparisonBusy());

  // One bar per op (transfers add theirs after them).
  TimelineView* top = w.timelineView();
  TimelineView* bottom = w.comparisonView();
  std::vector<int> op_bars(graph.num_ops(), 0);
  for (int i = 0; i < bottom->barCount(); ++i)
    if (bottom->bar(i).transfer < 0) ++op_bars.at(bottom->bar(i).op);
  EXPECT_EQ(op_bars, std::vector<int>(graph.num_ops(), 1));

  // The caption names the executor and its measured step, which is at least the
  // three 1 ms spins one after another.
  const StepResult& measured = w.comparisonOutcome()->result;
  EXPECT_EQ(measured.evaluator, "cpu");
  EXPECT_GE(measured.step_time_us, 3000);
  EXPECT_EQ(w.timelinePage()->comparisonCaption().toStdString(),
            "hand · cpu (measured): step " + format_time_us(measured.step_time_us));

  // One time axis: both fit the longer step at the same µs per pixel, and a
  // zoom or scroll in one moves the other.
  EXPECT_DOUBLE_EQ(top->pixelsPerUs(), bottom->pixelsPerUs());
  EXPECT_DOUBLE_EQ(top->fitSpanUs(), std::max(top->endUs(), bottom->endUs()));
  bottom->zoomTimeBy(4);
  EXPECT_DOUBLE_EQ(top->pixelsPerUs(), bottom->pixelsPerUs());
  EXPECT_NEAR(top->leftUs(), bottom->leftUs(), 1.0 / top->pixelsPerUs());
  // Scrolled to the end: the other reaches the same time (equal scroll ranges).
  bottom->horizontalScrollBar()->setValue(bottom->horizontalScrollBar()->maximum());
  EXPECT_NEAR(top->leftUs(), bottom->leftUs(), 1.0 / top->pixelsPerUs());
  top->zoomTimeBy(0.5);
  EXPECT_DOUBLE_EQ(top->pixelsPerUs(), bottom->pixelsPerUs());
  EXPECT_NEAR(top->leftUs(), bottom->leftUs(), 1.0 / top->pixelsPerUs());

  // Back to none: the second timeline goes, the first fits its own step again.
  ASSERT_TRUE(w.setComparisonEvaluator("none"));
  EXPECT_FALSE(w.timelinePage()->comparisonShown());
  EXPECT_FALSE(bottom->isVisibleTo(&w));
  EXPECT_EQ(bottom->barCount(), 0);
  EXPECT_EQ(w.comparisonOutcome(), nullptr);
  EXPECT_DOUBLE_EQ(top->fitSpanUs(), top->endUs());
}

TEST(TimelineCompare, SearchWithAMeasuredEvaluatorIsScoredOnTheWorker) {
  REQUIRE_APP();
  if (!PlacerRegistry::instance().has("single")) GTEST_SKIP() << "no baseline placers";
  MainWindow w;
  w.setInteractive(false);
  open_and_place(w, millisecond_chain(), testing::star_cluster(2), Placement({0, 1, 0}));
  ASSERT_TRUE(w.setEvaluator("cpu"));
  ASSERT_TRUE(search_done(w, "single", 30000));
  ASSERT_TRUE(w.searchError().isEmpty()) << w.searchError().toStdString();
  const StepResult& r = w.workbench()->result();
  EXPECT_EQ(r.evaluator, "cpu");
  EXPECT_GE(r.step_time_us, 3000);
  EXPECT_EQ(w.timelineView()->barCount(), 3);  // one device: no transfers
  EXPECT_EQ(w.timelinePage()->mainCaption().toStdString(),
            "single · cpu (measured): step " + format_time_us(r.step_time_us));
}

TEST(TimelineCompare, SelectionFollowsAcrossBothTimelinesAndTheGraph) {
  REQUIRE_APP();
  MainWindow w;
  w.setInteractive(false);
  open_and_place(w, testing::fork_join_graph(), testing::star_cluster(2),
                 Placement({0, 0, 0, 1, 1, 0}));
  ASSERT_TRUE(w.setComparisonEvaluator("analytic"));
  ASSERT_TRUE(w.waitForComparison(10000));
  // A click on an op's bar in the bottom timeline (what the scene does on a click).
  const int op = 3;
  QGraphicsItem* bar_item = nullptr;
  for (QGraphicsItem* item : w.comparisonView()->scene()->items()) {
    if (!(item->flags() & QGraphicsItem::ItemIsSelectable)) continue;
    item->setSelected(true);
    if (w.comparisonView()->selectedOp() == op) {
      bar_item = item;
      break;
    }
    item->setSelected(false);
  }
  ASSERT_NE(bar_item, nullptr);
  EXPECT_EQ(w.timelineView()->selectedOp(), op);
  EXPECT_EQ(w.graphView()->selectedOp(), op);
  // And from the graph: both timelines select it.
  w.graphView()->scene()->clearSelection();
  w.graphView()->nodeItem(1)->setSelected(true);
  EXPECT_EQ(w.timelineView()->selectedOp(), 1);
  EXPECT_EQ(w.comparisonView()->selectedOp(), 1);
}

TEST(TimelineCompare, AFailingEvaluatorIsAMessageNotACrash) {
  REQUIRE_APP();
  // What cuda does without a GPU: creating it throws HardwareError, one line.
  const std::string name = "gui-test-no-device";
  EvaluatorRegistry::instance().add(
      RegistryInfo{name, "always fails: no device", {}, {{"measured", "1"}}},
      [](const Options&) -> std::unique_ptr<Evaluator> {
        throw HardwareError("no device: this test's evaluator never has one");
      });
  {
    MainWindow w;
    w.setInteractive(false);
    open_and_place(w, testing::chain_graph(), testing::star_cluster(2), Placement({0, 1, 0}));
    ASSERT_TRUE(w.setComparisonEvaluator(QString::fromStdString(name)));
    ASSERT_TRUE(w.waitForComparison(10000));
    const std::string expected = name + ": no device: this test's evaluator never has one";
    EXPECT_EQ(w.comparisonError().toStdString(), expected);
    EXPECT_EQ(w.lastError().toStdString(), "compare with " + expected);
    EXPECT_EQ(w.timelinePage()->comparisonCaption().toStdString(), expected);
    EXPECT_EQ(w.comparisonView()->barCount(), 0);
    EXPECT_EQ(w.comparisonOutcome(), nullptr);
    // The top timeline is untouched.
    EXPECT_GT(w.timelineView()->barCount(), 0);
    // An unknown name is refused up front.
    EXPECT_FALSE(w.setComparisonEvaluator("no-such-evaluator"));
    EXPECT_EQ(w.comparisonEvaluator().toStdString(), name);
  }
  EvaluatorRegistry::instance().remove(name);
}

TEST(TimelineCompare, CudaWithoutAGpuSaysWhy) {
  REQUIRE_APP();
  if (!EvaluatorRegistry::instance().has("cuda")) GTEST_SKIP() << "no cuda evaluator in this build";
  std::string reason;
  try {
    EvaluatorRegistry::instance().create("cuda");
  } catch (const std::exception& e) {
    reason = e.what();
  }
  if (reason.empty()) GTEST_SKIP() << "a GPU is present: cuda would run";
  MainWindow w;
  w.setInteractive(false);
  open_and_place(w, testing::chain_graph(), testing::star_cluster(2), Placement({0, 1, 0}));
  ASSERT_TRUE(w.setComparisonEvaluator("cuda"));
  ASSERT_TRUE(w.waitForComparison(10000));
  EXPECT_EQ(w.comparisonError().toStdString(), "cuda: " + reason);
  EXPECT_EQ(w.comparisonView()->barCount(), 0);
}

}  // namespace
}  // namespace aware::gui
