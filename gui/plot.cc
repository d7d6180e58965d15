#include "gui/plot.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include <QPainter>
#include <QPixmap>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#ifdef AWARE_GUI_HAVE_SVG
#include <QSvgGenerator>
#endif

namespace aware::gui {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& source, const std::string& field, const std::string& what) {
  throw std::runtime_error(source + ": field '" + field + "': " + what);
}

std::string text_field(const json& spec, const std::string& source, const char* key) {
  if (!spec.contains(key)) return "";
  if (!spec.at(key).is_string()) bad(source, key, "must be a string");
  return spec.at(key).get<std::string>();
}

double number_at(const json& v, const std::string& source, const std::string& field) {
  if (!v.is_number()) bad(source, field, "must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) bad(source, field, "must be finite");
  return x;
}

// Rows of `n` numbers each: [[x, y], ...] or [[x, lo, hi], ...].
std::vector<std::vector<double>> rows_of(const json& v, const std::string& source,
                                         const std::string& field, size_t n) {
  if (!v.is_array()) bad(source, field, "must be an array of [" + std::to_string(n) + " numbers]");
  std::vector<std::vector<double>> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = field + "[" + std::to_string(i) + "]";
    if (!v[i].is_array() || v[i].size() != n) bad(source, at, "must hold " + std::to_string(n) + " numbers");
    std::vector<double> row;
    for (size_t k = 0; k < n; ++k) row.push_back(number_at(v[i][k], source, at));
    out.push_back(std::move(row));
  }
  return out;
}

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

// Pads a data range for an axis and puts the ticks on round numbers (1, 2 or 5
// times a power of ten); a single value gets a window around it.
void set_range(QValueAxis* axis, Range r, bool from_zero, double pad_fraction = 0.04) {
  if (r.empty()) r = {0, 1};
  if (from_zero) r.lo = std::min(0.0, r.lo);
  double pad = (r.hi - r.lo) * pad_fraction;
  if (r.hi <= r.lo) pad = std::max(std::abs(r.hi) * 0.05, 1e-6);  // one value: a window around it
  double lo = from_zero ? r.lo : r.lo - pad, hi = r.hi + pad;
  if (r.lo >= 0 && lo < 0) lo = 0;
  const double raw = (hi - lo) / 5;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  lo = std::floor(lo / step + 1e-9) * step;
  hi = std::ceil(hi / step - 1e-9) * step;
  axis->setRange(lo, hi);
  axis->setTickCount(static_cast<int>(std::lround((hi - lo) / step)) + 1);
}

QColor colour(int i) {
  static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e),
                                   QColor(0x2c, 0xa0, 0x2c), QColor(0xd6, 0x27, 0x28),
                                   QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                   QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f),
                                   QColor(0xbc, 0xbd, 0x22), QColor(0x17, 0xbe, 0xcf)};
  return palette[static_cast<size_t>(i) % (sizeof palette / sizeof palette[0])];
}

void hide_from_legend(QChart* chart, QAbstractSeries* series) {
  for (QLegendMarker* m : chart->legend()->markers(series)) m->setVisible(false);
}

void build_xy(QChart* chart, const json& spec, const std::string& source, bool scatter) {
  auto* x_axis = new QValueAxis(chart);
  auto* y_axis = new QValueAxis(chart);
  chart->addAxis(x_axis, Qt::AlignBottom);
  chart->addAxis(y_axis, Qt::AlignLeft);
  Range xr, yr;
  const json& series = spec.at("series");
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string field = "series[" + std::to_string(i) + "]";
    const json& s = series[i];
    if (!s.is_object()) bad(source, field, "must be an object");
    if (!s.contains("points")) bad(source, field + ".points", "missing");
    const auto points = rows_of(s.at("points"), source, field + ".points", 2);
    const QColor c = colour(static_cast<int>(i));
    if (s.contains("band")) {
      const auto band = rows_of(s.at("band"), source, field + ".band", 3);
      if (!band.empty()) {
        auto* upper = new QLineSeries(chart);
        auto* lower = new QLineSeries(chart);
        for (const auto& b : band) {
          lower->append(b[0], b[1]);
          upper->append(b[0], b[2]);
          xr.add(b[0]);
          yr.add(b[1]);
          yr.add(b[2]);
        }
        auto* area = new QAreaSeries(upper, lower);
        QColor fill = c;
        fill.setAlpha(55);
        area->setBrush(fill);
        area->setPen(Qt::NoPen);
        chart->addSeries(area);
        area->attachAxis(x_axis);
        area->attachAxis(y_axis);
        hide_from_legend(chart, area);
      }
    }
    QXYSeries* xy = nullptr;
    if (scatter) {
      auto* sc = new QScatterSeries(chart);
      sc->setMarkerSize(11);
      sc->setColor(c);
      sc->setBorderColor(c.darker(130));
      xy = sc;
    } else {
      auto* line = new QLineSeries(chart);
      QPen pen(c, 2.2);
      const std::string style = text_field(s, source, "style");
      if (style == "dashed") pen.setStyle(Qt::DashLine);
      else if (!style.empty() && style != "solid") bad(source, field + ".style", "must be solid or dashed");
      line->setPen(pen);
      xy = line;
    }
    xy->setName(QString::fromStdString(text_field(s, source, "name")));
    for (const auto& p : points) {
      xy->append(p[0], p[1]);
      xr.add(p[0]);
      yr.add(p[1]);
    }
    chart->addSeries(xy);
    xy->attachAxis(x_axis);
    xy->attachAxis(y_axis);
  }
  if (scatter && spec.value("diagonal", false) && !xr.empty()) {
    const double lo = std::min(xr.lo, yr.lo), hi = std::max(xr.hi, yr.hi);
    auto* diagonal = new QLineSeries(chart);
    diagonal->setName(QStringLiteral("y = x"));
    diagonal->setPen(QPen(Qt::gray, 1.2, Qt::DashLine));
    diagonal->append(lo, lo);
    diagonal->append(hi, hi);
    chart->addSeries(diagonal);
    diagonal->attachAxis(x_axis);
    diagonal->attachAxis(y_axis);
    xr.add(lo);
    xr.add(hi);
    yr.add(lo);
    yr.add(hi);
  }
  x_axis->setTitleText(QString::fromStdString(text_field(spec, source, "x_label")));
  y_axis->setTitleText(QString::fromStdString(text_field(spec, source, "y_label")));
  set_range(x_axis, xr, false, scatter ? 0.04 : 0.0);  // a curve's x range is its data
  set_range(y_axis, yr, spec.value("y_from_zero", false));
  x_axis->setLabelFormat(QStringLiteral("%g"));
  y_axis->setLabelFormat(QStringLiteral("%g"));
}

void build_bars(QChart* chart, const json& spec, const std::string& source) {
  if (!spec.contains("categories") || !spec.at("categories").is_array())
    bad(source, "categories", "a bar chart needs an array of category names");
  QStringList categories;
  for (size_t i = 0; i < spec.at("categories").size(); ++i) {
    const json& c = spec.at("categories")[i];
    if (!c.is_string()) bad(source, "categories[" + std::to_string(i) + "]", "must be a string");
    categories << QString::fromStdString(c.get<std::string>());
  }
  auto* bars = new QBarSeries(chart);
  Range yr;
  const json& series = spec.at("series");
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string field = "series[" + std::to_string(i) + "]";
    const json& s = series[i];
    if (!s.is_object() || !s.contains("values") || !s.at("values").is_array())
      bad(source, field + ".values", "a bar series needs an array of values");
    if (s.at("values").size() != static_cast<size_t>(categories.size()))
      bad(source, field + ".values", "needs one value per category (" + std::to_string(categories.size()) + ")");
    auto* set = new QBarSet(QString::fromStdString(text_field(s, source, "name")));
    set->setColor(colour(static_cast<int>(i)));
    for (size_t k = 0; k < s.at("values").size(); ++k) {
      const double v = number_at(s.at("values")[k], source, field + ".values[" + std::to_string(k) + "]");
      *set << v;
      yr.add(v);
    }
    bars->append(set);
  }
  chart->addSeries(bars);
  auto* x_axis = new QBarCategoryAxis(chart);
  x_axis->append(categories);
  x_axis->setTitleText(QString::fromStdString(text_field(spec, source, "x_label")));
  // Long names side by side would overlap: upright, each under its own group.
  if (categories.size() > 8) x_axis->setLabelsAngle(-90);
  x_axis->setTruncateLabels(false);
  auto* y_axis = new QValueAxis(chart);
  y_axis->setTitleText(QString::fromStdString(text_field(spec, source, "y_label")));
  y_axis->setLabelFormat(QStringLiteral("%g"));
  chart->addAxis(x_axis, Qt::AlignBottom);
  chart->addAxis(y_axis, Qt::AlignLeft);
  bars->attachAxis(x_axis);
  bars->attachAxis(y_axis);
  set_range(y_axis, yr, true);
}

}  // namespace

QChart* build_plot(const json& spec, const std::string& source) {
  if (!spec.is_object()) throw std::runtime_error(source + ": a plot spec must be a JSON object");
  const std::string kind = text_field(spec, source, "kind");
  if (kind != "line" && kind != "scatter" && kind != "bar")
    bad(source, "kind", "must be line, scatter or bar (got '" + kind + "')");
  if (!spec.contains("series") || !spec.at("series").is_array() || spec.at("series").empty())
    bad(source, "series", "needs at least one series");
  auto chart = std::make_unique<QChart>();
  chart->setTitle(QString::fromStdString(text_field(spec, source, "title")));
  chart->legend()->setAlignment(Qt::AlignBottom);
  if (kind == "bar") {
    build_bars(chart.get(), spec, source);
  } else {
    build_xy(chart.get(), spec, source, kind == "scatter");
  }
  return chart.release();
}

bool plot_svg_supported() {
#ifdef AWARE_GUI_HAVE_SVG
  return true;
#else
  return false;
#endif
}

void render_plot(const json& spec, const std::string& source, const QString& png, const QString& svg) {
  const int width = spec.value("width", 1000), height = spec.value("height", 600);
  if (width < 100 || width > 8000 || height < 100 || height > 8000)
    bad(source, "width/height", "must be 100..8000 pixels");
  QChartView view;
  view.setRenderHint(QPainter::Antialiasing);
  view.setChart(build_plot(spec, source));
  view.resize(width, height);
  const QPixmap pixmap = view.grab();
  if (pixmap.isNull() || !pixmap.save(png, "PNG"))
    throw std::runtime_error(source + ": cannot write " + png.toStdString());
  if (svg.isEmpty()) return;
#ifdef AWARE_GUI_HAVE_SVG
  QSvgGenerator generator;
  generator.setFileName(svg);
  generator.setSize(QSize(width, height));
  generator.setViewBox(QRect(0, 0, width, height));
  generator.setTitle(view.chart()->title());
  QPainter painter;
  if (!painter.begin(&generator)) throw std::runtime_error(source + ": cannot write " + svg.toStdString());
  view.render(&painter);
  painter.end();
#else
  throw std::runtime_error(source + ": this build has no SVG support (Qt Svg was not found)");
#endif
}

}  // namespace aware::gui
