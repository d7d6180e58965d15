// The learning curve: best step time (ms) against evaluations, one line per
// search run, drawn live from ProgressObserver updates, with the lower bound
// as a dashed line. It also shows a saved curve file (aware search --curve):
// best so far, the sampled mean with its spread, and the policy's entropy.
// GUI thread only.
#pragma once

#include <string>
#include <vector>

#include <QString>
#include <QtCharts/QChartView>

class QLineSeries;
class QValueAxis;

namespace aware::gui {

// One row of a learning-curve CSV: one policy update.
struct CurveRow {
  double evaluations = 0;
  double mean_ms = 0, best_ms = 0, entropy = 0;
  double min_ms = -1, max_ms = -1;  // the update's fastest and slowest sample (-1: not in the file)
};
// Reads `aware search --curve` output. Throws std::runtime_error naming the file,
// the line and the column for a missing column or a bad number.
std::vector<CurveRow> read_curve_csv(const std::string& path);

class CurveView : public QChartView {
  Q_OBJECT

 public:
  explicit CurveView(QWidget* parent = nullptr);

  // Starts a new line; returns its index. Older runs stay overlaid (at most 8).
  int beginRun(const QString& name);
  // Adds a point to the newest run (ignored without one or when best_ms < 0).
  void addPoint(double evaluations, double best_ms);
  void setLowerBound(double ms);  // < 0 hides it
  void clearRuns();
  // Replaces the runs by a saved curve file; returns "" or the error.
  QString showCurveFile(const QString& path);

  int runCount() const;
  int pointCount(int run) const;

 private:
  void rescale();

  QChart* chart_;
  QValueAxis* x_axis_;
  QValueAxis* y_axis_;
  QValueAxis* entropy_axis_ = nullptr;
  QLineSeries* bound_ = nullptr;
  double bound_ms_ = -1;
  double max_x_ = 1, min_y_ = -1, max_y_ = -1;
};

}  // namespace aware::gui
