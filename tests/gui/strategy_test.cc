// The strategy choice beside the method: a strategy spec applied to the open
// graph and cluster on the search's worker thread, its rewritten step shown
// through the same views as a placement, and a bad spec reported, not thrown.
// Offscreen, like gui_test.cc (whose main() makes the QApplication).
#include <string>

#include <gtest/gtest.h>
#include <QApplication>

#include "core/placer.h"
#include "gui/graph_view.h"
#include "gui/gui_testing.h"
#include "gui/main_window.h"
#include "gui/parallel_view.h"
#include "gui/timeline_view.h"
#include "gui/workbench.h"
#include "gui/workers.h"
#include "strategies/strategy.h"

namespace aware::gui {
namespace {

// Bars of the main timeline that draw a transfer out of an op the strategy
// inserted (a collective's step) on a link channel's lane.
int collective_transfer_bars_on_links(const MainWindow& w) {
  const OpGraph& g = w.workbench()->graph();
  const Trace& trace = w.workbench()->trace();
  const TimelineView* tl = w.timelineView();
  int found = 0;
  for (int i = 0; i < tl->barCount(); ++i) {
    const auto bar = tl->bar(i);
    if (bar.transfer < 0) continue;
    const TransferSpan& t = trace.transfers.at(bar.transfer);
    if (g.op(t.src_op).block != kStrategyBlock || t.channels.empty()) continue;
    bool on_channel_lane = false;
    for (int channel : t.channels)
      if (tl->lanes().lane_of_channel.at(channel) == bar.lane) on_channel_lane = true;
    if (on_channel_lane && bar.lane >= tl->lanes().num_device_lanes) ++found;
  }
  return found;
}

TEST(Strategy, DataParallelShowsTheRewrittenStepThenNoneGoesBack) {
  REQUIRE_APP();
  MainWindow w;
  ASSERT_TRUE(open_model(w, "zoo:nmt2", "preset:k40x4"));
  const int original_ops = w.workbench()->graph().num_ops();

  w.setStrategy("dp:ring");
  EXPECT_EQ(w.strategy(), "dp:ring");
  ASSERT_TRUE(w.startPlace());
  ASSERT_TRUE(w.searchRunning());
  ASSERT_TRUE(w.waitForSearch(120000));
  ASSERT_TRUE(w.searchError().isEmpty()) << w.searchError().toStdString();
  ASSERT_TRUE(w.workbench()->hasPlacement());

  // The rewritten step is what the views show.
  const OpGraph& g = w.workbench()->graph();
  EXPECT_GT(g.num_ops(), original_ops);
  EXPECT_EQ(w.workbench()->baseGraphPtr()->num_ops(), original_ops);
  EXPECT_EQ(w.graphView()->nodeItemCount(), g.num_ops());
  EXPECT_EQ(static_cast<int>(w.workbench()->placement().size()), g.num_ops());
  EXPECT_NE(w.workbench()->strategy().find("collective=ring"), std::string::npos);

  const StepResult& r = w.workbench()->result();
  EXPECT_TRUE(r.feasible) << r.infeasible_reason;
  EXPECT_GT(r.step_time_us, 0);
  const auto outcome = w.strategyOutcome();
  ASSERT_NE(outcome, nullptr);
  EXPECT_EQ(outcome->strategy.replicas, 4);
  EXPECT_EQ(outcome->strategy.devices_used, 4);
  EXPECT_DOUBLE_EQ(outcome->strategy.global_batch, w.workbench()->baseGraphPtr()->batch());

  // The report: step per global batch and samples/s = global batch / step seconds.
  const QString report = w.strategyReport();
  EXPECT_TRUE(report.contains(QStringLiteral("per global batch"))) << report.toStdString();
  const QString samples_per_s = QString::number(
      outcome->strategy.global_batch / (r.step_time_us / 1e6), 'f', 1);
  EXPECT_TRUE(report.contains(samples_per_s + QStringLiteral(" samples/s")))
      << report.toStdString() << " lacks " << samples_per_s.toStdString();
  for (const std::string& note : outcome->strategy.notes)
    EXPECT_TRUE(report.contains(QString::fromStdString(note))) << note;

  // The ring's transfers are bars on the link lanes of the timeline.
  EXPECT_GT(w.timelineView()->barCount(), 0);
  EXPECT_GT(collective_transfer_bars_on_links(w), 0);

  // "none" places the loaded graph's ops again.
  if (!PlacerRegistry::instance().has("m-etf")) GTEST_SKIP() << "no m-etf placer";
  w.setStrategy(QStringLiteral("none (place ops)"));
  ASSERT_TRUE(w.startPlace());
  ASSERT_TRUE(w.waitForSearch(120000));
  ASSERT_TRUE(w.searchError().isEmpty()) << w.searchError().toStdString();
  EXPECT_EQ(w.workbench()->graph().num_ops(), original_ops);
  EXPECT_TRUE(w.workbench()->strategy().empty());
  EXPECT_TRUE(w.strategyReport().isEmpty());
  EXPECT_EQ(w.strategyOutcome(), nullptr);
  EXPECT_EQ(w.graphView()->nodeItemCount(), original_ops);
}

// A 3d strategy's step in the pipeline and grid views: a lane per device of the
// first replica with a bar per pass (4 micro-batches x 2 passes), and the grid's
// 2 x 2 x 2 devices; a placement without micro-batches says why instead.
TEST(Strategy, PipelineAndGridViewsShowAThreeDStep) {
  REQUIRE_APP();
  MainWindow w;
  w.setGraphvizMaxOps(0);  // our layered layout, the quicker one (Graphviz takes about a second here)
  ASSERT_TRUE(open_model(w, "zoo:gpt:layers=4,hidden=64,heads=4,ffn=256,vocab=500,seq_len=16,batch=8",
                         "preset:dgx-a100"));
  w.setStrategy("3d:dp=2,tp=2,pp=2,micro=4,schedule=1f1b");
  ASSERT_TRUE(w.startPlace());
  ASSERT_TRUE(w.waitForSearch(120000));
  ASSERT_TRUE(w.searchError().isEmpty()) << w.searchError().toStdString();
  const ParallelView* pipeline = w.pipelineView();
  EXPECT_TRUE(pipeline->message().isEmpty()) << pipeline->message().toStdString();
  ASSERT_EQ(pipeline->chart().lanes.size(), 4u);  // tp 2 x pp 2 devices of replica 0
  EXPECT_EQ(pipeline->chart().micro_batches, 4);
  for (const ScheduleLane& lane : pipeline->chart().lanes) EXPECT_EQ(lane.bars.size(), 8u) << lane.device;
  EXPECT_GT(pipeline->chart().bubble_fraction, 0);
  const ParallelView* grid = w.gridView();
  EXPECT_TRUE(grid->message().isEmpty());
  EXPECT_EQ(grid->grid().cells.size(), 8u);
  EXPECT_EQ(grid->grid().replicas, 2);
  EXPECT_EQ(grid->grid().stages, 2);
  EXPECT_EQ(grid->grid().ranks, 2);
  ASSERT_TRUE(w.showView(QStringLiteral("pipeline")));
  EXPECT_FALSE(w.viewWidget(QStringLiteral("pipeline"))->grab().isNull());
  ASSERT_TRUE(w.showView(QStringLiteral("grid")));
  EXPECT_FALSE(w.viewWidget(QStringLiteral("grid"))->grab().isNull());

  if (!PlacerRegistry::instance().has("single")) GTEST_SKIP() << "no single placer";
  w.setStrategy(QStringLiteral("none (place ops)"));
  ASSERT_TRUE(search_done(w, QStringLiteral("single"), 120000));
  EXPECT_TRUE(pipeline->chart().lanes.empty());
  EXPECT_TRUE(pipeline->message().startsWith(QStringLiteral("No pipeline here"))) << pipeline->message().toStdString();
  EXPECT_FALSE(grid->message().isEmpty());
}

TEST(Strategy, BadSpecsAreMessagesNotThrows) {
  REQUIRE_APP();
  MainWindow w;
  ASSERT_TRUE(open_model(w, "zoo:nmt2", "preset:k40x4"));
  const int original_ops = w.workbench()->graph().num_ops();
  // More replicas than the 4 devices, an unknown kind, a misspelt option, an
  // unknown hybrid method.
  for (const char* spec : {"dp:8", "nonsense:3", "dp:4,colective=ring", "hybrid:2xno-such-method"}) {
    SCOPED_TRACE(spec);
    w.setStrategy(QString::fromUtf8(spec));
    bool started = false;
    EXPECT_NO_THROW(started = w.startPlace());
    ASSERT_TRUE(started);
    ASSERT_TRUE(w.waitForSearch(60000));
    EXPECT_FALSE(w.searchError().isEmpty());
    EXPECT_TRUE(w.lastError().contains(QString::fromUtf8(spec))) << w.lastError().toStdString();
    EXPECT_EQ(w.workbench()->graph().num_ops(), original_ops);
    EXPECT_TRUE(w.workbench()->strategy().empty());
    EXPECT_EQ(w.strategyOutcome(), nullptr);
  }
  // dp:8 on 4 devices says why.
  w.setStrategy(QStringLiteral("dp:8"));
  ASSERT_TRUE(w.startPlace());
  ASSERT_TRUE(w.waitForSearch(60000));
  EXPECT_TRUE(w.lastError().contains(QStringLiteral("8 replicas"))) << w.lastError().toStdString();
}

TEST(Strategy, AFailingStrategyKeepsTheShownOne) {
  REQUIRE_APP();
  MainWindow w;
  ASSERT_TRUE(open_model(w, "zoo:nmt2", "preset:k40x4"));
  ASSERT_TRUE(w.startStrategy(QStringLiteral("dp:2")));
  ASSERT_TRUE(w.waitForSearch(120000));
  ASSERT_TRUE(w.searchError().isEmpty()) << w.searchError().toStdString();
  const int rewritten_ops = w.workbench()->graph().num_ops();
  const double step_us = w.workbench()->result().step_time_us;
  ASSERT_TRUE(w.startStrategy(QStringLiteral("dp:5")));
  ASSERT_TRUE(w.waitForSearch(60000));
  EXPECT_FALSE(w.searchError().isEmpty());
  EXPECT_EQ(w.workbench()->graph().num_ops(), rewritten_ops);
  EXPECT_DOUBLE_EQ(w.workbench()->result().step_time_us, step_us);
  EXPECT_NE(w.strategyOutcome(), nullptr);
  // A new cluster drops the rewrite (it was made for the old one).
  ASSERT_TRUE(w.openCluster("preset:k40x4"));
  EXPECT_TRUE(w.workbench()->strategy().empty());
  EXPECT_LT(w.workbench()->graph().num_ops(), rewritten_ops);
}

TEST(Strategy, HybridPlacesEachGroupWithTheMethod) {
  REQUIRE_APP();
  if (!PlacerRegistry::instance().has("round-robin")) GTEST_SKIP() << "no round-robin placer";
  MainWindow w;
  ASSERT_TRUE(open_model(w, "zoo:nmt2", "preset:k40x4"));
  const int original_ops = w.workbench()->graph().num_ops();
  ASSERT_TRUE(w.startStrategy(QStringLiteral("hybrid:2xround-robin"), 0, 7));
  ASSERT_TRUE(w.waitForSearch(120000));
  ASSERT_TRUE(w.searchError().isEmpty()) << w.searchError().toStdString();
  EXPECT_GT(w.workbench()->graph().num_ops(), original_ops);
  EXPECT_GT(w.workbench()->result().step_time_us, 0);
  ASSERT_NE(w.strategyOutcome(), nullptr);
  EXPECT_EQ(w.strategyOutcome()->strategy.replicas, 2);
}

}  // namespace
}  // namespace aware::gui
