// What if: ops moved by hand in the graph view are scored at once, the step
// equals the evaluator's on the edited placement, and undo walks back exactly.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <QApplication>
#include <QImage>
#include <QTableWidget>

#include "core/errors.h"
#include "core/evaluator.h"
#include "gui/compare_view.h"
#include "gui/graph_view.h"
#include "gui/gui_testing.h"
#include "gui/link_view.h"
#include "gui/main_window.h"
#include "gui/workbench.h"

namespace aware::gui {
namespace {

double analytic_step(const Workbench& wb) {
  return EvaluatorRegistry::instance().create("analytic")->evaluate(wb.graph(), wb.cluster(), wb.placement()).step_time_us;
}

TEST(WhatIf, MovedOpsAreScoredAtOnceAndUndoWalksBack) {
  REQUIRE_APP();
  MainWindow w;
  ASSERT_TRUE(open_model(w, "zoo:resnet50", "preset:k40x2"));
  Workbench& wb = *w.workbench();
  const int n = wb.graph().num_ops();
  // Nothing placed: a move is refused with the reason.
  w.graphView()->selectOps({0});
  EXPECT_FALSE(w.moveSelectionTo(1));
  EXPECT_TRUE(w.lastError().contains("place the graph first")) << w.lastError().toStdString();

  wb.setPlacement(Placement(std::vector<int>(static_cast<size_t>(n), 0)), "single");
  const double single = wb.result().step_time_us;
  EXPECT_DOUBLE_EQ(single, analytic_step(wb));
  EXPECT_FALSE(wb.canUndo());

  // One layer of the drawing to gpu1.
  const int op = n / 3;
  const int in_layer = w.graphView()->selectLayerOf(op);
  ASSERT_GE(in_layer, 1);
  const std::vector<int> first = w.graphView()->selectedOps();
  ASSERT_EQ(static_cast<int>(first.size()), in_layer);
  ASSERT_TRUE(w.moveSelectionTo(1)) << w.lastError().toStdString();
  const Placement after_first = wb.placement();
  for (int v = 0; v < n; ++v)
    EXPECT_EQ(after_first[v], std::binary_search(first.begin(), first.end(), v) ? 1 : 0) << v;
  EXPECT_DOUBLE_EQ(wb.result().step_time_us, analytic_step(wb));
  EXPECT_NE(wb.result().step_time_us, single);
  EXPECT_EQ(wb.method(), "hand-edited (from single)");
  EXPECT_EQ(w.graphView()->selectedOps(), first) << "the selection stays for the next move";

  // A second move: a box of ops (here: the first twenty) to gpu1 as well.
  std::vector<int> second;
  for (int v = 0; v < 20; ++v) second.push_back(v);
  w.graphView()->selectOps(second);
  ASSERT_TRUE(w.moveSelectionTo(1));
  EXPECT_EQ(wb.undoDepth(), 2);
  EXPECT_EQ(wb.method(), "hand-edited (from single)");
  EXPECT_DOUBLE_EQ(wb.result().step_time_us, analytic_step(wb));

  // Moving ops where they already are changes nothing and adds no undo step.
  ASSERT_TRUE(w.moveSelectionTo(1));
  EXPECT_EQ(wb.undoDepth(), 2);

  // A device the cluster does not have: refused, nothing changes.
  const Placement before_bad = wb.placement();
  EXPECT_FALSE(w.moveSelectionTo(7));
  EXPECT_TRUE(w.lastError().contains("device")) << w.lastError().toStdString();
  EXPECT_EQ(wb.placement(), before_bad);

  // Undo, twice: exactly the placements and steps before.
  ASSERT_TRUE(w.undoMove());
  EXPECT_EQ(wb.placement(), after_first);
  ASSERT_TRUE(w.undoMove());
  EXPECT_EQ(wb.placement(), Placement(std::vector<int>(static_cast<size_t>(n), 0)));
  EXPECT_DOUBLE_EQ(wb.result().step_time_us, single);
  EXPECT_EQ(wb.method(), "single");
  EXPECT_FALSE(w.undoMove());

  // A placement from elsewhere (a placer) starts a new history.
  w.graphView()->selectOps({0});
  ASSERT_TRUE(w.moveSelectionTo(1));
  EXPECT_TRUE(wb.canUndo());
  wb.setPlacement(Placement(std::vector<int>(static_cast<size_t>(n), 1)), "single");
  EXPECT_FALSE(wb.canUndo());

  // Nothing selected: refused with the reason.
  w.graphView()->selectOps({});
  EXPECT_FALSE(w.moveSelectionTo(0));
  EXPECT_TRUE(w.lastError().contains("select ops first")) << w.lastError().toStdString();
}

TEST(WhatIf, FusedGroupsAreSelectableAndAHandPlacementJoinsTheComparison) {
  REQUIRE_APP();
  MainWindow w;
  ASSERT_TRUE(open_model(w, "zoo:resnet50", "preset:k40x2"));
  Workbench& wb = *w.workbench();
  const int n = wb.graph().num_ops();
  // Without a selected op: refused.
  w.graphView()->selectOps({});
  EXPECT_EQ(w.selectFusedGroup(), 0);
  EXPECT_TRUE(w.lastError().contains("select an op")) << w.lastError().toStdString();
#ifdef AWARE_GUI_HAVE_FUSION
  // Every op's group holds it, groups partition the graph, and some group
  // holds several ops (fusion merges ResNet-50's chains).
  std::vector<int> covered(static_cast<size_t>(n), 0);
  size_t largest = 0;
  for (int op = 0; op < n; ++op) {
    const std::vector<int> group = wb.fusedGroupOf(op);
    ASSERT_TRUE(std::binary_search(group.begin(), group.end(), op)) << op;
    if (group.front() == op)
      for (int v : group) ++covered[static_cast<size_t>(v)];
    largest = std::max(largest, group.size());
  }
  for (int v = 0; v < n; ++v) EXPECT_EQ(covered[static_cast<size_t>(v)], 1) << v;
  EXPECT_GT(largest, 1u);
  EXPECT_LT(wb.fusedGroupCount(), n);
  int big = 0;
  while (wb.fusedGroupOf(big).size() < 2) ++big;
  w.graphView()->selectOp(big, false);
  EXPECT_EQ(w.selectFusedGroup(), static_cast<int>(wb.fusedGroupOf(big).size()));
  EXPECT_EQ(w.graphView()->selectedOps(), wb.fusedGroupOf(big));
  EXPECT_THROW(wb.fusedGroupOf(n), DeviceError);
#endif

#ifdef AWARE_GUI_HAVE_BASELINES
  // Nothing compared yet: refused with the reason.
  wb.setPlacement(Placement(std::vector<int>(static_cast<size_t>(n), 0)), "single");
  EXPECT_FALSE(w.addPlacementToCompare());
  EXPECT_TRUE(w.lastError().contains("comparison first")) << w.lastError().toStdString();
  ASSERT_TRUE(w.startCompare({"single", "m-etf"}, {2}));
  ASSERT_TRUE(w.waitForCompare(120000));
  // A hand edit of single: half the ops in id order to gpu1.
  std::vector<int> half;
  for (int v = 0; v < n / 2; ++v) half.push_back(v);
  w.graphView()->selectOps(half);
  ASSERT_TRUE(w.moveSelectionTo(1));
  ASSERT_TRUE(w.addPlacementToCompare()) << w.lastError().toStdString();
  const CompareTable& table = w.compareView()->table();
  ASSERT_EQ(table.methods.size(), 3u);
  EXPECT_EQ(table.methods[2], "hand-edited (from single)");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(table.rows[0].results[2].step_time_us, wb.result().step_time_us);
  EXPECT_EQ(w.compareView()->tableWidget()->columnCount(), 4 + 3 + 1);
  // Another cluster has no row in the table: refused, the table unchanged.
  ASSERT_TRUE(w.openCluster("preset:k40x4"));
  wb.setPlacement(Placement(std::vector<int>(static_cast<size_t>(n), 0)), "single");
  EXPECT_FALSE(w.addPlacementToCompare());
  EXPECT_TRUE(w.lastError().contains("no row for resnet50 on k40x4")) << w.lastError().toStdString();
  EXPECT_EQ(w.compareView()->table().methods.size(), 3u);
#endif
}

// The links view: bytes per step over each link, by hand on a star, and the
// mesh heat map's busiest link for a spiking network.
TEST(Links, BytesPerLinkByHandAndOnAMesh) {
  Cluster star("s");
  for (const char* d : {"a", "b", "c"}) {
    Device dev;
    dev.name = d;
    dev.peak_flops = 1e12;
    dev.memory_bytes = 1e9;
    dev.memory_Bps = 1e11;
    star.add_device(dev);
  }
  star.add_switch("sw");
  star.connect("a", "sw", 1e9, 1, "la");
  star.connect("b", "sw", 1e9, 1, "lb");
  star.connect("c", "sw", 1e9, 1, "lc");
  star.finalize();
  OpGraph g("three");
  for (const char* n : {"x", "y", "z"}) {
    Op op;
    op.name = n;
    op.type = "T";
    op.output_bytes = {100};
    g.add_op(op);
  }
  g.add_edge(0, 1, 0, 100);  // a -> b: la up, lb down
  g.add_edge(0, 2, 0, 40);   // a -> c: la up, lc down
  g.add_edge(1, 2, 0, 7);    // b -> b: stays
  const Placement p(std::vector<int>{0, 1, 1});
  const std::vector<double> bytes = channel_bytes(g, star, p);
  ASSERT_EQ(bytes.size(), 6u);
  EXPECT_DOUBLE_EQ(bytes[0] + bytes[1], 140) << "la carries both transfers";
  EXPECT_DOUBLE_EQ(bytes[2] + bytes[3], 140) << "lb receives both (c's op is on b)";
  EXPECT_DOUBLE_EQ(bytes[4] + bytes[5], 0);

  REQUIRE_APP();
  MainWindow w;
  ASSERT_TRUE(open_model(w, "snn:lattice:3000", "preset:mesh:4x4"));
  ASSERT_TRUE(search_done(w, "force-directed", 60000));
  ASSERT_TRUE(w.linkView()->isMesh());
  EXPECT_GT(w.linkView()->maxLinkBytes(), 0);
  const std::string busiest = w.linkView()->busiestLink();
  EXPECT_TRUE(busiest[0] == 'x' || busiest[0] == 'y') << busiest << ": a router-to-router link of the mesh";
  const QString png = QString::fromStdString(tmp_path("links-mesh.png"));
  ASSERT_TRUE(w.exportPng("links", png));
  EXPECT_FALSE(QImage(png).isNull());
}

// Issue 39: aware-gui --placement FILE (and File > Open placement) shows a
// placement file as a method's result is shown: the same placement, scored by
// the window's evaluator, with the file named as its method. A file that does
// not fit the graph changes nothing.
TEST(PlacementFile, AnExportedPlacementOpensAsItWas) {
  REQUIRE_APP();
  MainWindow w;
  ASSERT_TRUE(open_model(w, "zoo:resnet50", "preset:k40x2"));
  ASSERT_TRUE(search_done(w, "m-etf", 60000));
  ASSERT_TRUE(w.workbench()->hasPlacement()) << w.searchError().toStdString();
  const Placement metf = w.workbench()->placement();
  const double metf_step = w.workbench()->result().step_time_us;
  const std::string path = tmp_path("placement-file-metf.json");
  ASSERT_TRUE(w.exportPlacement(QString::fromStdString(path))) << w.lastError().toStdString();

  ASSERT_TRUE(search_done(w, "single", 60000));
  ASSERT_FALSE(w.workbench()->placement() == metf)
      << "the test needs a different placement in between";

  ASSERT_TRUE(w.openPlacement(QString::fromStdString(path))) << w.lastError().toStdString();
  EXPECT_TRUE(w.workbench()->placement() == metf);
  EXPECT_DOUBLE_EQ(w.workbench()->result().step_time_us, metf_step);
  EXPECT_DOUBLE_EQ(analytic_step(*w.workbench()), metf_step);
  EXPECT_EQ(w.workbench()->method(), "placement " + path);

  // Another graph's placement: refused with the reader's message, nothing changed.
  ASSERT_TRUE(w.openGraph("zoo:inception_v3"));
  ASSERT_TRUE(search_done(w, "single", 60000));
  const Placement before = w.workbench()->placement();
  EXPECT_FALSE(w.openPlacement(QString::fromStdString(path)));
  EXPECT_NE(w.lastError().toStdString().find(path + ": op '"), std::string::npos)
      << w.lastError().toStdString();
  EXPECT_NE(w.lastError().toStdString().find("is not an op of graph 'inception_v3'"),
            std::string::npos)
      << w.lastError().toStdString();
  EXPECT_TRUE(w.workbench()->placement() == before);
}

}  // namespace
}  // namespace aware::gui
