#include "gui/curve_view.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <QFileInfo>
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
  // A search's curve (`aware place --curve`) has no samples: no mean, spread or entropy.
  const int ev = column("evaluations", true), mean = column("mean_step_us", false),
            best = column("best_step_us", true), entropy = column("entropy", false),
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
    // A best step time is a time, or -1 where no feasible placement was found yet
    // (pretrain's multi-graph curves); nan, inf or -5 drew an empty, broken chart.
    const auto step_time = [&](int c) {
      const double v = value(c);
      if (!std::isfinite(v) || (v < 0 && v != -1)) {
        throw std::runtime_error(path + ": line " + std::to_string(number) + ", column '" +
                                 header[static_cast<size_t>(c)] + "': '" +
                                 f[static_cast<size_t>(c)] +
                                 "' is not a step time (microseconds >= 0, or -1 for none yet)");
      }
      return v;
    };
    CurveRow r;
    r.evaluations = value(ev);
    if (!std::isfinite(r.evaluations) || r.evaluations < 0) {
      throw std::runtime_error(path + ": line " + std::to_string(number) +
                               ", column 'evaluations': '" + f[static_cast<size_t>(ev)] +
                               "' is not a count of evaluations");
    }
    r.mean_ms = mean >= 0 ? value(mean) / 1e3 : -1;
    r.best_ms = step_time(best) / 1e3;
    r.entropy = entropy >= 0 ? value(entropy) : -1;
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

int CurveView::runCount() const { return static_cast<int>(runs_.size()); }

int CurveView::pointCount(int run) const {
  if (run < 0 || run >= runCount()) return 0;
  return runs_[static_cast<size_t>(run)]->count();
}

int CurveView::samplePointCount() const { return live_mean_ == nullptr ? 0 : live_mean_->count(); }

namespace {
const QColor kBestColour(0x1f, 0x77, 0xb4), kMeanColour(0xff, 0x7f, 0x0e), kEntropyColour(0x2c, 0xa0, 0x2c);
}  // namespace

void CurveView::attach(QAbstractSeries* series, QValueAxis* y) {
  chart_->addSeries(series);
  series->attachAxis(x_axis_);
  series->attachAxis(y);
}

void CurveView::extendY(double ms) {
  if (!std::isfinite(ms) || ms < 0) return;
  min_y_ = min_y_ < 0 ? ms : std::min(min_y_, ms);
  max_y_ = std::max(max_y_, ms);
}

QValueAxis* CurveView::entropyAxis() {
  if (entropy_axis_ == nullptr) {
    entropy_axis_ = new QValueAxis(chart_);
    entropy_axis_->setTitleText(QStringLiteral("entropy (nats per decision)"));
    chart_->addAxis(entropy_axis_, Qt::AlignRight);
  }
  entropy_axis_->setVisible(true);
  return entropy_axis_;
}

void CurveView::removeExtras() {
  // The band's two lines are extras too (an area series owns neither); only
  // the band itself is on the chart.
  for (QAbstractSeries* s : extras_) {
    if (chart_->series().contains(s)) chart_->removeSeries(s);
    delete s;
  }
  extras_.clear();
  live_mean_ = live_lower_ = live_upper_ = live_entropy_ = nullptr;
  // The y range again from the runs' lines alone: the samples just removed
  // may have stretched it.
  min_y_ = max_y_ = -1;
  for (const QLineSeries* run : runs_)
    for (const QPointF& p : run->points()) extendY(p.y());
  max_entropy_ = 0;
  if (entropy_axis_ != nullptr) entropy_axis_->setVisible(false);
}

int CurveView::beginRun(const QString& name) {
  removeExtras();
  // Keep the newest 8 runs.
  while (runCount() >= 8) {
    chart_->removeSeries(runs_.front());
    delete runs_.front();
    runs_.erase(runs_.begin());
  }
  auto* series = new QLineSeries(chart_);
  series->setName(name);
  attach(series, y_axis_);
  runs_.push_back(series);
  return runCount() - 1;
}

void CurveView::addPoint(double evaluations, double best_ms) {
  if (runs_.empty() || best_ms < 0) return;
  runs_.back()->append(evaluations, best_ms);
  max_x_ = std::max(max_x_, evaluations);
  extendY(best_ms);
  rescale();
}

void CurveView::addSample(double evaluations, double mean_ms, double min_ms, double max_ms, double entropy) {
  if (runs_.empty() || mean_ms < 0) return;
  if (live_mean_ == nullptr) {
    live_mean_ = new QLineSeries(chart_);
    live_mean_->setName(QStringLiteral("sampled: mean"));
    live_mean_->setPen(QPen(kMeanColour, 1.5));
    attach(live_mean_, y_axis_);
    live_entropy_ = new QLineSeries(chart_);
    live_entropy_->setName(QStringLiteral("policy entropy (right axis)"));
    live_entropy_->setPen(QPen(kEntropyColour, 1.5, Qt::DashLine));
    attach(live_entropy_, entropyAxis());
    extras_ = {live_mean_, live_entropy_};
  }
  if (min_ms >= 0 && max_ms >= 0) {
    if (live_upper_ == nullptr) {  // the band, made with the first spread
      live_upper_ = new QLineSeries(chart_);
      live_lower_ = new QLineSeries(chart_);
      auto* band = new QAreaSeries(live_upper_, live_lower_);
      band->setName(QStringLiteral("sampled: fastest to slowest"));
      QColor fill = kMeanColour;
      fill.setAlpha(50);
      band->setBrush(fill);
      band->setPen(Qt::NoPen);
      attach(band, y_axis_);
      extras_.insert(extras_.begin(), {band, live_upper_, live_lower_});
    }
    live_lower_->append(evaluations, min_ms);
    live_upper_->append(evaluations, max_ms);
    extendY(min_ms);
    extendY(max_ms);
  }
  live_mean_->append(evaluations, mean_ms);
  extendY(mean_ms);
  if (entropy >= 0) {
    live_entropy_->append(evaluations, entropy);
    max_entropy_ = std::max(max_entropy_, entropy);
    entropy_axis_->setRange(0, std::max(max_entropy_ * 1.1, 1e-3));
  }
  max_x_ = std::max(max_x_, evaluations);
  rescale();
}

void CurveView::setLowerBound(double ms) {
  bound_ms_ = ms;
  rescale();
}

void CurveView::clearRuns() {
  removeExtras();
  for (QLineSeries* s : runs_) {
    chart_->removeSeries(s);
    delete s;
  }
  runs_.clear();
  files_ = 0;
  max_x_ = 1;
  min_y_ = max_y_ = -1;
  rescale();
}

QString CurveView::showCurveFile(const QString& path, bool add) {
  std::vector<CurveRow> rows;
  try {
    rows = read_curve_csv(path.toStdString());
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  if (!add || files_ == 0) clearRuns();
  ++files_;
  // The file is one run: its best-so-far line, with the sampled mean, spread
  // and entropy as a live run would have them (the newest file's only). Added
  // files keep the earlier ones' lines, each named by its file and coloured by
  // the chart.
  const QString base = QFileInfo(path).fileName();
  beginRun(files_ == 1 ? QStringLiteral("best so far") : base);
  if (files_ == 1) {
    runs_.back()->setPen(QPen(kBestColour, 2.5));
  } else {
    if (runs_.size() >= 2 && runs_[runs_.size() - 2]->name() == QStringLiteral("best so far"))
      runs_[runs_.size() - 2]->setName(first_file_);
    QPen pen = runs_.back()->pen();
    pen.setWidthF(2.5);
    runs_.back()->setPen(pen);
  }
  if (files_ == 1) first_file_ = base;
  const bool spread = rows.front().min_ms >= 0;
  for (const CurveRow& r : rows) {
    if (std::isfinite(r.mean_ms))
      addSample(r.evaluations, r.mean_ms, spread && std::isfinite(r.min_ms) ? r.min_ms : -1,
                spread && std::isfinite(r.max_ms) ? r.max_ms : -1, r.entropy);
    if (std::isfinite(r.best_ms)) addPoint(r.evaluations, r.best_ms);
  }
  if (files_ == 1) {
    chart_->setTitle(QStringLiteral("Learning curve: %1 (%2 updates)").arg(path).arg(rows.size()));
  } else {
    chart_->setTitle(QStringLiteral("Learning curves: %1 files, best step time so far").arg(files_));
  }
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
