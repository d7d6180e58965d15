// The learning curve: best step time (ms) against evaluations, one line per
// search run, drawn live from ProgressObserver updates, with the lower bound
// as a dashed line. A learned agent's newest run also shows, per policy
// update, the sampled mean with its spread (fastest to slowest) and the
// policy's entropy on a right-hand axis: a policy learning, or collapsing onto
// one device. It also shows a saved curve file (aware search --curve) the
// same way. GUI thread only.
#pragma once

#include <string>
#include <vector>

#include <QString>
#include <QtCharts/QChartView>

class QLineSeries;
class QValueAxis;

namespace aware::gui {

// One row of a learning-curve CSV: one policy update, or one progress report of
// a search (which has no samples: mean_ms and entropy -1).
struct CurveRow {
  double evaluations = 0;
  double mean_ms = 0, best_ms = 0, entropy = 0;
  double min_ms = -1, max_ms = -1;  // the update's fastest and slowest sample (-1: not in the file)
};
// Reads `aware search --curve` or `aware place --curve` output. Throws std::runtime_error naming the file,
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
  // Adds one policy update to the newest run: its samples' mean, fastest and
  // slowest step time (ms) and the policy entropy (nats per decision). The
  // series are made on the first call; an older run's are removed when a new
  // run begins. Ignored without a run or when mean_ms < 0.
  void addSample(double evaluations, double mean_ms, double min_ms, double max_ms, double entropy);
  void setLowerBound(double ms);  // < 0 hides it
  void clearRuns();
  // Replaces the runs by a saved curve file (with `add`, after the files shown
  // so far, each its own line named by its file, up to 8); returns "" or the error.
  QString showCurveFile(const QString& path, bool add = false);

  int runCount() const;
  int pointCount(int run) const;
  // Points in the newest run's sampled-mean line (0 when it has none).
  int samplePointCount() const;

 private:
  void rescale();
  void removeExtras();
  void attach(QAbstractSeries* series, QValueAxis* y);
  void extendY(double ms);
  QValueAxis* entropyAxis();

  QChart* chart_;
  QValueAxis* x_axis_;
  QValueAxis* y_axis_;
  QValueAxis* entropy_axis_ = nullptr;
  QLineSeries* bound_ = nullptr;
  std::vector<QLineSeries*> runs_;          // best so far, one per run, oldest first
  int files_ = 0;                           // curve files shown since the runs were cleared
  QString first_file_;
  std::vector<QAbstractSeries*> extras_;    // the newest run's mean, spread and entropy
  QLineSeries* live_mean_ = nullptr;
  QLineSeries* live_lower_ = nullptr;
  QLineSeries* live_upper_ = nullptr;
  QLineSeries* live_entropy_ = nullptr;
  double max_entropy_ = 0;
  double bound_ms_ = -1;
  double max_x_ = 1, min_y_ = -1, max_y_ = -1;
};

}  // namespace aware::gui
