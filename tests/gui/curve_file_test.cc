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

#include "gui/curve_view.h"

namespace aware::gui {
namespace {

QApplication* app() { return qobject_cast<QApplication*>(QCoreApplication::instance()); }

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = std::string(AWARE_TEST_TMPDIR) + "/" + name;
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
}

TEST(CurveFile, BadFilesNameTheLineAndColumn) {
  const std::pair<std::string, std::string> cases[] = {
      {"evaluations,seconds,best_step_us,entropy\n9,1,2,3\n", "no column 'mean_step_us'"},
      {"evaluations,seconds,mean_step_us,best_step_us,entropy\n9,1,2,x,3\n", "line 2, column 'best_step_us'"},
      {"evaluations,seconds,mean_step_us,best_step_us,entropy\n9,1,2\n", "line 2, column 'best_step_us': missing"},
      {"evaluations,seconds,mean_step_us,best_step_us,entropy\n", "no updates"},
      {"", "empty"}};
  for (const auto& [text, expected] : cases) {
    const std::string path = write_file("curve-bad.csv", text);
    try {
      read_curve_csv(path);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(read_curve_csv(std::string(AWARE_TEST_TMPDIR) + "/no-such-curve.csv"), std::runtime_error);
}

TEST(CurveFile, TheViewDrawsBestMeanSpreadAndEntropy) {
  if (app() == nullptr) GTEST_SKIP() << "no QApplication (no Qt platform plugin)";
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

}  // namespace
}  // namespace aware::gui
