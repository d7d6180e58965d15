// The learning curve: best step time (ms) against evaluations, one line per
// search run, drawn live from ProgressObserver updates, with the lower bound
// as a dashed line. GUI thread only.
#pragma once

#include <QString>
#include <QtCharts/QChartView>

class QLineSeries;
class QValueAxis;

namespace aware::gui {

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

  int runCount() const;
  int pointCount(int run) const;

 private:
  void rescale();

  QChart* chart_;
  QValueAxis* x_axis_;
  QValueAxis* y_axis_;
  QLineSeries* bound_ = nullptr;
  double bound_ms_ = -1;
  double max_x_ = 1, min_y_ = -1, max_y_ = -1;
};

}  // namespace aware::gui
