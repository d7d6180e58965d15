// aware-plot: renders chart specs (gui/plot.h) headless.
//   aware-plot [--svg] SPEC.plot.json ...
// writes SPEC.png (and SPEC.svg) next to each spec, each by rename, so a
// stopped run leaves no half-written figure.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <QApplication>

#include "gui/plot.h"

namespace {

std::string stem_of(const std::string& spec) {
  std::string base = spec;
  for (const char* suffix : {".json", ".plot"})
    if (base.size() > std::string(suffix).size() &&
        base.compare(base.size() - std::string(suffix).size(), std::string::npos, suffix) == 0)
      base.resize(base.size() - std::string(suffix).size());
  return base;
}

}  // namespace

int main(int argc, char** argv) {
  bool svg = false;
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--svg") {
      svg = true;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: aware-plot [--svg] SPEC.plot.json ...\n"
                  "Renders each chart spec to SPEC.png (and SPEC.svg with --svg); the spec format is "
                  "described in gui/plot.h.\n");
      return 0;
    } else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr, "error: aware-plot: unknown option %s\n", a.c_str());
      return 2;
    } else {
      specs.push_back(a);
    }
  }
  if (specs.empty()) {
    std::fprintf(stderr, "error: aware-plot: give at least one SPEC.plot.json\n");
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  if (svg && !aware::gui::plot_svg_supported()) {
    std::fprintf(stderr, "error: aware-plot: --svg: this build has no SVG support (install qt6-svg-dev and rebuild)\n");
    return 2;
  }
  int failed = 0;
  for (const std::string& spec : specs) {
    try {
      std::ifstream in(spec);
      if (!in) throw std::runtime_error(spec + ": cannot open");
      nlohmann::json doc;
      try {
        doc = nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(spec + ": not JSON: " + e.what());
      }
      const std::string base = stem_of(spec);
      const std::string png_tmp = base + ".png.tmp", svg_tmp = base + ".svg.tmp";
      aware::gui::render_plot(doc, spec, QString::fromStdString(png_tmp),
                              svg ? QString::fromStdString(svg_tmp) : QString());
      std::filesystem::rename(png_tmp, base + ".png");
      if (svg) std::filesystem::rename(svg_tmp, base + ".svg");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}
