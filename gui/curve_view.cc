#include "gui/curve_view.h"

#include <algorithm>

#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

namespace aware::gui {

CurveView::CurveView(QWidget* parent) : QChartView(parent) {
  chart_ = new QChart();
  chart_->setTitle(QStringLiteral("Learning curve: best step time found so far"));
  x_axis_ = new QValueAxis(chart_);
  x_axis_->setTitleText(QStringLiteral("evaluations"));
  x_axis_->setLabelFormat(QStringLiteral("%.0f"));
  y_axis_ = new QValueAxis(chart_);
  y_axis_->setTitleText(QStringLiteral("best step time (ms)"));
  chart_->addAxis(x_axis_, Qt::AlignBottom);
  chart_->addAxis(y_axis_, Qt::AlignLeft);
  bound_ = new QLineSeries(chart_);
  bound_->setName(QStringLiteral("lower bound"));
  QPen pen(Qt::gray, 1.5, Qt::DashLine);
  bound_->setPen(pen);
  chart_->addSeries(bound_);
  bound_->attachAxis(x_axis_);
  bound_->attachAxis(y_axis_);
  setChart(chart_);
  setRenderHint(QPainter::Antialiasing);
  rescale();
}

int CurveView::runCount() const { return static_cast<int>(chart_->series().size()) - 1; }

int CurveView::pointCount(int run) const {
  const auto series = chart_->series();
  if (run < 0 || run + 1 >= series.size()) return 0;
  return static_cast<QLineSeries*>(series[run + 1])->count();
}

int CurveView::beginRun(const QString& name) {
  // Keep the newest 8 runs; the bound is series 0.
  while (runCount() >= 8) {
    QAbstractSeries* old = chart_->series()[1];
    chart_->removeSeries(old);
    delete old;
  }
  auto* series = new QLineSeries(chart_);
  series->setName(name);
  chart_->addSeries(series);
  series->attachAxis(x_axis_);
  series->attachAxis(y_axis_);
  return runCount() - 1;
}

void CurveView::addPoint(double evaluations, double best_ms) {
  if (runCount() == 0 || best_ms < 0) return;
  auto* series = static_cast<QLineSeries*>(chart_->series().back());
  series->append(evaluations, best_ms);
  max_x_ = std::max(max_x_, evaluations);
  min_y_ = min_y_ < 0 ? best_ms : std::min(min_y_, best_ms);
  max_y_ = std::max(max_y_, best_ms);
  rescale();
}

void CurveView::setLowerBound(double ms) {
  bound_ms_ = ms;
  rescale();
}

void CurveView::clearRuns() {
  while (runCount() > 0) {
    QAbstractSeries* old = chart_->series().back();
    chart_->removeSeries(old);
    delete old;
  }
  max_x_ = 1;
  min_y_ = max_y_ = -1;
  rescale();
}

void CurveView::rescale() {
  x_axis_->setRange(0, max_x_ * 1.05);
  double lo = min_y_, hi = max_y_;
  if (bound_ms_ > 0) {
    lo = lo < 0 ? bound_ms_ : std::min(lo, bound_ms_);
    hi = std::max(hi, bound_ms_);
  }
  if (lo < 0) lo = 0, hi = 1;
  const double pad = std::max((hi - lo) * 0.08, hi * 0.01 + 1e-6);
  y_axis_->setRange(std::max(0.0, lo - pad), hi + pad);
  bound_->clear();
  if (bound_ms_ > 0) {
    bound_->append(0, bound_ms_);
    bound_->append(max_x_ * 1.05, bound_ms_);
  }
}

}  // namespace aware::gui
