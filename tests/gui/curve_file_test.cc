// The curve view's saved-curve mode: a learning-curve CSV read back by name,
// drawn with its spread and entropy; bad files named by line and column.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <QApplication>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include "core/placer.h"
#include "gui/curve_view.h"
#include "gui/gui_testing.h"
#include "gui/main_window.h"
#include "tests/expect_error.h"

namespace aware::gui {
namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = tmp_path(name);
  std::ofstream(path) << text;
  return path;
}

const char* kCurve =
    "evaluations,seconds,mean_step_us,best_step_us,entropy,loss,min_step_us,max_step_us\n"
    "9,0.5,900000,800000,1.38,0.1,800000,1000000\n"
    "17,1.0,850000,780000,1.20,0.2,780000,950000\n"
    "25,1.5,790000,780000,0.40,0.3,785000,795000\n";

TEST(CurveFile, RowsAreReadByColumnName) {
  const auto rows = read_curve_csv(write_file("curve-ok.csv", kCurve));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].evaluations, 17);
  EXPECT_DOUBLE_EQ(rows[1].mean_ms, 850);
  EXPECT_DOUBLE_EQ(rows[1].best_ms, 780);
  EXPECT_DOUBLE_EQ(rows[2].entropy, 0.40);
  EXPECT_DOUBLE_EQ(rows[2].min_ms, 785);
  EXPECT_DOUBLE_EQ(rows[2].max_ms, 795);
  // A curve written before the spread was kept: no band, the rest the same.
  const auto old = read_curve_csv(
      write_file("curve-old.csv", "evaluations,seconds,mean_step_us,best_step_us,entropy,loss,graph\n"
                                  "9,0.5,900000,800000,1.38,0.1,cifar10-1\n"));
  ASSERT_EQ(old.size(), 1u);
  EXPECT_LT(old[0].min_ms, 0);
  EXPECT_DOUBLE_EQ(old[0].best_ms, 800);
  // A search's curve (`aware place --curve`): the best so far alone.
  const auto search = read_curve_csv(
      write_file("curve-search.csv", "evaluations,seconds,best_step_us\n10,0.01,386807.5\n20,0.02,380000\n"));
  ASSERT_EQ(search.size(), 2u);
  EXPECT_DOUBLE_EQ(search[1].best_ms, 380);
  EXPECT_LT(search[1].mean_ms, 0);
  EXPECT_LT(search[1].entropy, 0);
  EXPECT_LT(search[1].min_ms, 0);
}

TEST(CurveFile, BadFilesNameTheLineAndColumn) {
  const std::pair<std::string, std::string> cases[] = {
      {"evaluations,seconds,mean_step_us,entropy\n9,1,2,3\n", "no column 'best_step_us'"},
      {"evaluations,seconds,mean_step_us,best_step_us,entropy\n9,1,2,x,3\n", "line 2, column 'best_step_us'"},
      {"evaluations,seconds,mean_step_us,best_step_us,entropy\n9,1,2\n", "line 2, column 'best_step_us': missing"},
      {"evaluations,seconds,mean_step_us,best_step_us,entropy\n", "no updates"},
      {"", "empty"}};
  for (const auto& [text, expected] : cases) {
    const std::string path = write_file("curve-bad.csv", text);
    SCOPED_TRACE(text);
    testing::expect_error<std::runtime_error>([&] { read_curve_csv(path); }, {path, expected});
  }
  EXPECT_THROW(read_curve_csv(tmp_path("no-such-curve.csv")), std::runtime_error);
}

TEST(CurveFile, TheViewDrawsBestMeanSpreadAndEntropy) {
  REQUIRE_APP();
  CurveView view;
  view.beginRun("a live run");
  view.addPoint(1, 5);
  ASSERT_TRUE(view.showCurveFile(QString::fromStdString(write_file("curve-view.csv", kCurve))).isEmpty());
  int lines = 0, areas = 0;
  QLineSeries* entropy = nullptr;
  for (QAbstractSeries* s : view.chart()->series()) {
    if (auto* area = qobject_cast<QAreaSeries*>(s)) {
      ++areas;
      EXPECT_EQ(area->upperSeries()->count(), 3);
      EXPECT_DOUBLE_EQ(area->lowerSeries()->at(2).y(), 785);
    } else if (auto* line = qobject_cast<QLineSeries*>(s)) {
      ++lines;
      if (line->name().startsWith("policy entropy")) entropy = line;
    }
  }
  EXPECT_EQ(areas, 1);
  EXPECT_EQ(lines, 4) << "lower bound, mean, best, entropy (the live run is gone)";
  ASSERT_NE(entropy, nullptr);
  EXPECT_DOUBLE_EQ(entropy->at(2).y(), 0.40);
  // The entropy has its own axis, on the right.
  const auto axes = entropy->attachedAxes();
  ASSERT_EQ(axes.size(), 2);
  bool right = false;
  for (QAbstractAxis* a : axes) right = right || a->alignment() == Qt::AlignRight;
  EXPECT_TRUE(right);
  // A bad file leaves an error and the view as it was.
  EXPECT_TRUE(view.showCurveFile("/no/such/curve.csv").contains("/no/such/curve.csv"));
}

// A search's curve has no samples: the best-so-far line alone (and the bound).
TEST(CurveFile, TheViewDrawsASearchCurveAsItsBestLine) {
  REQUIRE_APP();
  CurveView view;
  ASSERT_TRUE(view.showCurveFile(QString::fromStdString(write_file(
                  "curve-search-view.csv", "evaluations,seconds,best_step_us\n10,0.01,386807.5\n20,0.02,380000\n")))
                  .isEmpty());
  int lines = 0, areas = 0;
  for (QAbstractSeries* s : view.chart()->series()) {
    areas += qobject_cast<QAreaSeries*>(s) != nullptr;
    lines += qobject_cast<QLineSeries*>(s) != nullptr;
  }
  EXPECT_EQ(areas, 0);
  EXPECT_EQ(lines, 2) << "lower bound and best";
  EXPECT_EQ(view.pointCount(0), 2);
  EXPECT_EQ(view.samplePointCount(), 0);
}

// Added files overlay: one best-so-far line per file, named by it, the samples
// of the newest file only; opening without adding starts again.
TEST(CurveFile, AddedFilesOverlayTheirBestLines) {
  REQUIRE_APP();
  CurveView view;
  const QString agent = QString::fromStdString(write_file("overlay-aware.csv", kCurve));
  const QString search = QString::fromStdString(
      write_file("overlay-anneal.csv", "evaluations,seconds,best_step_us\n10,0.01,790000\n20,0.02,760000\n30,0.03,700000\n"));
  ASSERT_TRUE(view.showCurveFile(agent).isEmpty());
  ASSERT_TRUE(view.showCurveFile(search, /*add=*/true).isEmpty());
  ASSERT_EQ(view.runCount(), 2);
  EXPECT_EQ(view.pointCount(0), 3);
  EXPECT_EQ(view.pointCount(1), 3);
  EXPECT_EQ(view.samplePointCount(), 0) << "the newest file (a search) has no samples";
  QStringList names;
  for (QAbstractSeries* s : view.chart()->series()) names << s->name();
  EXPECT_TRUE(names.contains("overlay-aware.csv")) << names.join(", ").toStdString();
  EXPECT_TRUE(names.contains("overlay-anneal.csv")) << names.join(", ").toStdString();
  EXPECT_TRUE(view.chart()->title().contains("2 files")) << view.chart()->title().toStdString();
  // The first file's samples (up to 1,000 ms) are gone, and so is their stretch of the y axis.
  bool checked = false;
  for (QAbstractAxis* a : view.chart()->axes(Qt::Vertical)) {
    if (auto* y = qobject_cast<QValueAxis*>(a); y != nullptr && y->titleText().contains("step time")) {
      EXPECT_LT(y->max(), 900) << "best lines reach 800 ms at most";
      checked = true;
    }
  }
  EXPECT_TRUE(checked) << "no step-time axis";
  // A bad added file leaves the overlay as it was.
  EXPECT_FALSE(view.showCurveFile("/no/such/curve.csv", true).isEmpty());
  EXPECT_EQ(view.runCount(), 2);
  ASSERT_TRUE(view.showCurveFile(search).isEmpty());
  EXPECT_EQ(view.runCount(), 1);
}


TEST(CurveLive, UpdatesDrawMeanSpreadAndEntropyOfTheNewestRunOnly) {
  REQUIRE_APP();
  CurveView view;
  view.addSample(1, 5, 4, 6, 1.0);  // no run yet: ignored
  EXPECT_EQ(view.samplePointCount(), 0);
  view.beginRun("first");
  view.addPoint(8, 900);
  view.addSample(8, 950, 900, 1000, 1.2);
  view.addSample(16, 920, 880, 990, 0.9);
  view.addSample(24, 885, 880, 890, 0.1);
  view.addSample(30, -1, -1, -1, 0.1);  // no mean: ignored
  EXPECT_EQ(view.samplePointCount(), 3);
  QAreaSeries* band = nullptr;
  QLineSeries* entropy = nullptr;
  for (QAbstractSeries* s : view.chart()->series()) {
    if (auto* a = qobject_cast<QAreaSeries*>(s)) band = a;
    if (auto* l = qobject_cast<QLineSeries*>(s); l != nullptr && l->name().startsWith("policy entropy")) entropy = l;
  }
  ASSERT_NE(band, nullptr);
  ASSERT_EQ(band->lowerSeries()->count(), 3);
  EXPECT_DOUBLE_EQ(band->lowerSeries()->at(2).y(), 880);
  EXPECT_DOUBLE_EQ(band->upperSeries()->at(0).y(), 1000);
  ASSERT_NE(entropy, nullptr);
  EXPECT_DOUBLE_EQ(entropy->at(2).y(), 0.1);
  // A new run keeps the first run's best line and drops its samples.
  const int before = static_cast<int>(view.chart()->series().size());
  view.beginRun("second");
  EXPECT_EQ(view.runCount(), 2);
  EXPECT_EQ(view.pointCount(0), 1);
  EXPECT_EQ(view.samplePointCount(), 0);
  EXPECT_EQ(static_cast<int>(view.chart()->series().size()), before - 3 + 1)
      << "band, mean and entropy removed; the second run's best line added";
  // Updates without a spread (a non-learned search never sends any) draw no band.
  view.addSample(8, 950, -1, -1, 1.0);
  int areas = 0;
  for (QAbstractSeries* s : view.chart()->series()) areas += qobject_cast<QAreaSeries*>(s) != nullptr;
  EXPECT_EQ(areas, 0);
  EXPECT_EQ(view.samplePointCount(), 1);
}

TEST(CurveLive, ALearnedAgentsSearchIsDrawnUpdateByUpdate) {
  REQUIRE_APP();
  MainWindow w;
  w.setInteractive(false);
  if (!PlacerRegistry::instance().has("hierarchical")) GTEST_SKIP() << "built without the learned agents";
  ASSERT_TRUE(w.openCluster("preset:k40x2"));
  ASSERT_TRUE(w.openGraph("family:cifar10:1"));
  ASSERT_TRUE(w.startSearch("hierarchical", 48));
  ASSERT_TRUE(w.waitForSearch(120000)) << w.searchError().toStdString();
  // Hierarchical samples several placements per update: one point per update,
  // each a mean within its spread; the entropy axis is shown.
  const int points = w.curveView()->samplePointCount();
  EXPECT_GE(points, 2);
  EXPECT_LT(points, 48);
  int areas = 0;
  for (QAbstractSeries* s : w.curveView()->chart()->series()) areas += qobject_cast<QAreaSeries*>(s) != nullptr;
  EXPECT_EQ(areas, 1);
}

}  // namespace
}  // namespace aware::gui
