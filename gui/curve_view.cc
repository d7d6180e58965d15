#include "gui/curve_view.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

namespace aware::gui {

std::vector<CurveRow> read_curve_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  const auto split = [](const std::string& line) {
    std::vector<std::string> out;
    std::string field;
    std::istringstream fields(line);
    while (std::getline(fields, field, ',')) out.push_back(field);
    return out;
  };
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path + ": empty (no header line)");
  const std::vector<std::string> header = split(line);
  const auto column = [&](const std::string& name, bool required) -> int {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      if (required) throw std::runtime_error(path + ": line 1: no column '" + name + "' (not a learning-curve CSV)");
      return -1;
    }
    return static_cast<int>(it - header.begin());
  };
  const int ev = column("evaluations", true), mean = column("mean_step_us", true),
            best = column("best_step_us", true), entropy = column("entropy", true),
            lo = column("min_step_us", false), hi = column("max_step_us", false);
  std::vector<CurveRow> rows;
  for (int number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> f = split(line);
    const auto value = [&](int c) {
      const std::string where = path + ": line " + std::to_string(number) + ", column '" + header[static_cast<size_t>(c)] + "'";
      if (static_cast<size_t>(c) >= f.size()) throw std::runtime_error(where + ": missing");
      try {
        size_t used = 0;
        const double v = std::stod(f[static_cast<size_t>(c)], &used);
        if (used != f[static_cast<size_t>(c)].size()) throw std::invalid_argument("trailing text");
        return v;
      } catch (const std::exception&) {
        throw std::runtime_error(where + ": not a number ('" + f[static_cast<size_t>(c)] + "')");
      }
    };
    CurveRow r;
    r.evaluations = value(ev);
    r.mean_ms = value(mean) / 1e3;
    r.best_ms = value(best) / 1e3;
    r.entropy = value(entropy);
    if (lo >= 0 && hi >= 0) {
      r.min_ms = value(lo) / 1e3;
      r.max_ms = value(hi) / 1e3;
    }
    rows.push_back(r);
  }
  if (rows.empty()) throw std::runtime_error(path + ": no updates (only a header)");
  return rows;
}

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
  if (entropy_axis_ != nullptr) entropy_axis_->setVisible(false);
  max_x_ = 1;
  min_y_ = max_y_ = -1;
  rescale();
}

QString CurveView::showCurveFile(const QString& path) {
  std::vector<CurveRow> rows;
  try {
    rows = read_curve_csv(path.toStdString());
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  clearRuns();
  const QColor best_colour(0x1f, 0x77, 0xb4), mean_colour(0xff, 0x7f, 0x0e), entropy_colour(0x2c, 0xa0, 0x2c);
  auto attach = [&](QAbstractSeries* series, QValueAxis* y) {
    chart_->addSeries(series);
    series->attachAxis(x_axis_);
    series->attachAxis(y);
  };
  const bool spread = rows.front().min_ms >= 0;
  if (spread) {
    auto* upper = new QLineSeries(chart_);
    auto* lower = new QLineSeries(chart_);
    for (const CurveRow& r : rows)
      if (std::isfinite(r.min_ms) && std::isfinite(r.max_ms)) {
        lower->append(r.evaluations, r.min_ms);
        upper->append(r.evaluations, r.max_ms);
        min_y_ = min_y_ < 0 ? r.min_ms : std::min(min_y_, r.min_ms);
        max_y_ = std::max(max_y_, r.max_ms);
      }
    auto* band = new QAreaSeries(upper, lower);
    band->setName(QStringLiteral("sampled: fastest to slowest"));
    QColor fill = mean_colour;
    fill.setAlpha(50);
    band->setBrush(fill);
    band->setPen(Qt::NoPen);
    attach(band, y_axis_);
  }
  auto* mean = new QLineSeries(chart_);
  mean->setName(QStringLiteral("sampled: mean"));
  mean->setPen(QPen(mean_colour, 2));
  auto* best = new QLineSeries(chart_);
  best->setName(QStringLiteral("best so far"));
  best->setPen(QPen(best_colour, 2.5));
  auto* entropy = new QLineSeries(chart_);
  entropy->setName(QStringLiteral("policy entropy (right axis)"));
  entropy->setPen(QPen(entropy_colour, 1.8, Qt::DashLine));
  double max_entropy = 0;
  for (const CurveRow& r : rows) {
    if (std::isfinite(r.mean_ms)) {
      mean->append(r.evaluations, r.mean_ms);
      min_y_ = min_y_ < 0 ? r.mean_ms : std::min(min_y_, r.mean_ms);
      max_y_ = std::max(max_y_, r.mean_ms);
    }
    if (std::isfinite(r.best_ms)) {
      best->append(r.evaluations, r.best_ms);
      min_y_ = min_y_ < 0 ? r.best_ms : std::min(min_y_, r.best_ms);
      max_y_ = std::max(max_y_, r.best_ms);
    }
    entropy->append(r.evaluations, r.entropy);
    max_entropy = std::max(max_entropy, r.entropy);
    max_x_ = std::max(max_x_, r.evaluations);
  }
  attach(mean, y_axis_);
  attach(best, y_axis_);
  if (entropy_axis_ == nullptr) {
    entropy_axis_ = new QValueAxis(chart_);
    entropy_axis_->setTitleText(QStringLiteral("entropy (nats per decision)"));
    chart_->addAxis(entropy_axis_, Qt::AlignRight);
  }
  entropy_axis_->setVisible(true);
  entropy_axis_->setRange(0, std::max(max_entropy * 1.1, 1e-3));
  attach(entropy, entropy_axis_);
  chart_->setTitle(QStringLiteral("Learning curve: %1 (%2 updates)").arg(path).arg(rows.size()));
  y_axis_->setTitleText(QStringLiteral("step time (ms)"));
  rescale();
  return {};
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
