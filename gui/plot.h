// Charts described by a small JSON spec, drawn with Qt Charts. `aware reproduce`
// writes the specs; `aware-plot` renders them headless to PNG (and SVG when Qt
// Svg is built in). The spec:
//
//   {"title": "...", "x_label": "...", "y_label": "...",
//    "kind": "line" | "scatter" | "bar",
//    "width": 1000, "height": 600,                 (pixels, optional)
//    "categories": ["a", "b"],                     (bar: the groups along x)
//    "series": [
//      {"name": "...", "points": [[x, y], ...],    (line, scatter)
//       "band": [[x, low, high], ...],             (line: a shaded spread, optional)
//       "style": "solid" | "dashed"},              (optional)
//      {"name": "...", "values": [y, ...]}],       (bar: one value per category)
//    "diagonal": true,                             (scatter: draw y = x)
//    "y_from_zero": true}                          (optional; bars always start at 0)
//
// A bad spec throws std::runtime_error naming the file and the field.
#pragma once

#include <string>

#include <QString>
#include <nlohmann/json.hpp>

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace aware::gui {

// Builds the chart (the caller owns it). `source` names the spec in errors.
QChart* build_plot(const nlohmann::json& spec, const std::string& source);

// Renders the spec to `png`, and to `svg` when that is not empty (throws when
// this build has no SVG support and one is asked for).
void render_plot(const nlohmann::json& spec, const std::string& source, const QString& png,
                 const QString& svg);

// Whether render_plot can write SVG in this build.
bool plot_svg_supported();

}  // namespace aware::gui
