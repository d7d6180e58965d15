// INTERNAL to `aware reproduce`'s report (reproduce_report*.cc): the cell
// readers, statistics and figure specs every section shares, and the sections.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/bounds.h"
#include "core/cluster.h"
#include "core/lists.h"
#include "datasets/load.h"
#include "experiments/cell_pack.h"
#include "experiments/reproduce.h"
#include "core/errors.h"
#include "core/formats.h"

namespace aware::reproduce::report {

namespace fs = std::filesystem;
using nlohmann::json;


inline constexpr double kNever = std::numeric_limits<double>::infinity();

inline std::string fmt(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}
inline std::string ms(double us) { return fmt("%.2f", us / 1000); }
inline std::string pct(double v) { return fmt("%+.1f%%", v); }

struct Stat {
  int n = 0;
  double mean = 0, sd = 0, lo = 0, hi = 0;
  bool ok() const { return n > 0; }
};
inline Stat stat_of(const std::vector<double>& xs) {
  Stat s;
  if (xs.empty()) return s;
  s.n = static_cast<int>(xs.size());
  s.lo = *std::min_element(xs.begin(), xs.end());
  s.hi = *std::max_element(xs.begin(), xs.end());
  double sum = 0, sq = 0;
  for (double x : xs) sum += x, sq += x * x;
  s.mean = sum / s.n;
  s.sd = std::sqrt(std::max(0.0, sq / s.n - s.mean * s.mean));
  return s;
}
inline std::string opt_ms(const std::optional<double>& v) { return v ? ms(*v) : "-"; }
inline std::string evals_text(double e) { return std::isinf(e) ? "never" : fmt("%.0f", e); }
inline std::string ms_pm(const Stat& s) { return s.ok() ? ms(s.mean) + " ± " + ms(s.sd) : "-"; }

// Learning curve: (evaluations, best-so-far µs) per update.
using Curve = std::vector<std::pair<double, double>>;

class Results {
 public:
  Results(const Plan& plan) : plan_(plan), files_(plan.cell_dir) {}

  // The cell's JSON, or null when it did not finish.
  const json* get(const std::string& key) {
    const auto it = cache_.find(key);
    if (it != cache_.end()) return it->second ? &*it->second : nullptr;
    std::optional<json> doc;
    if (const std::optional<std::string> text = files_.read(key + ".json"))
      doc = parse_json_text(*text, (plan_.cell_dir / (key + ".json")).string());
    auto& slot = cache_[key] = std::move(doc);
    return slot ? &*slot : nullptr;
  }
  // The cell's step time, when it finished with a feasible placement.
  std::optional<double> step_us(const std::string& key) {
    const json* j = get(key);
    if (!j || !j->is_object() || !j->value("feasible", true) || !j->contains("step_time_us")) return {};
    return j->at("step_time_us").get<double>();
  }
  Curve curve(const std::string& key) {
    Curve out;
    std::istringstream in(files_.read(key + ".curve.csv").value_or(""));
    std::string line;
    if (!std::getline(in, line)) return out;
    const std::vector<std::string> header = split(line);
    const auto col = [&](const std::string& name) {
      return static_cast<size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    const size_t ev = col("evaluations"), best = col("best_step_us");
    if (ev >= header.size() || best >= header.size()) return out;
    while (std::getline(in, line)) {
      const std::vector<std::string> f = split(line);
      if (f.size() <= std::max(ev, best)) continue;
      try {
        out.emplace_back(std::stod(f[ev]), std::stod(f[best]));
      } catch (const std::exception&) {
      }
    }
    return out;
  }

 private:
  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, ',')) out.push_back(field);
    return out;
  }
  const Plan& plan_;
  CellFiles files_;  // loose or packed (cell_pack.h)
  std::map<std::string, std::optional<json>> cache_;
};

// Finds the key of the plan's cell matching these fields in `table`.
inline std::optional<std::string> find_cell(const Plan& plan, const std::string& table, const std::string& kind,
                                     const std::string& model, const std::string& cluster,
                                     const std::string& method, int seed, const std::string& variant = "") {
  for (const Cell* c : plan.cells_of(table))
    if (c->kind == kind && c->model == model && c->cluster == cluster && c->method == method &&
        c->seed == seed && c->variant == variant)
      return c->key;
  return {};
}

// The step times of a method over the budget's seeds (learned agents from
// `search` cells, placers from `place` cells).
inline std::vector<double> over_seeds(Results& r, const Plan& plan, const std::string& table, const std::string& model,
                               const std::string& cluster, const std::string& method,
                               const std::string& variant = "") {
  std::vector<double> xs;
  const bool agent = method == "aware" || method == "placeto" || method == "hierarchical";
  for (int seed : plan.budget.seeds) {
    const auto key = find_cell(plan, table, agent ? "search" : "place", model, cluster, method, seed, variant);
    if (!key) continue;
    if (const auto v = r.step_us(*key)) xs.push_back(*v);
  }
  return xs;
}

inline double lower_bound_of(Results& r, const Plan& plan, const std::string& table, const std::string& model,
                      const std::string& cluster) {
  for (const Cell* c : plan.cells_of(table))
    if (c->model == model && c->cluster == cluster)
      if (const json* j = r.get(c->key); j && j->is_object() && j->contains("lower_bound_us"))
        return j->at("lower_bound_us").get<double>();
  return 0;
}

// The best certified solver-free bound of a zoo model on a cluster preset
// (core/bounds.h, as `aware compare`'s bound column), computed once per pair
// when the report is written, so a report of older cells gets it too. Null
// when the model or the cluster does not load.
inline const CertifiedBound* certified_of(const std::string& model, const std::string& cluster) {
  static std::map<std::pair<std::string, std::string>, std::optional<CertifiedBound>> cache;
  auto [it, added] = cache.try_emplace({model, cluster});
  if (added) {
    try {
      it->second = certified_bound(load_graph("zoo:" + model), load_cluster("preset:" + cluster));
    } catch (const Error&) {
    }
  }
  return it->second ? &*it->second : nullptr;
}

template <typename F>
std::vector<std::string> distinct(const std::vector<const Cell*>& cells, F field) {
  std::vector<std::string> out;
  for (const Cell* c : cells)
    if (std::find(out.begin(), out.end(), field(*c)) == out.end()) out.push_back(field(*c));
  return out;
}

// Figures: each a chart spec; the report names its PNG; drawn at the end.
struct Figures {
  fs::path dir;
  std::vector<std::pair<std::string, std::string>> specs;  // name, caption
  std::string add(const std::string& name, const std::string& caption, const json& spec) {
    fs::create_directories(dir / "figures");
    write_text_file_atomic((dir / "figures" / (name + ".plot.json")).string(), spec.dump(1));
    specs.emplace_back(name, caption);
    return image_line(name, caption) + "\n\n";
  }
  static std::string image_line(const std::string& name, const std::string& caption) {
    return "![" + caption + "](figures/" + name + ".png)";
  }
};

// Mean best-so-far over seeds at every evaluation count any seed reported, with
// the min-max band. Each seed's curve is a step function.
inline void mean_curve(const std::vector<Curve>& curves, json& points, json& band) {
  std::vector<double> xs;
  for (const Curve& c : curves)
    for (const auto& p : c) xs.push_back(p.first);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  points = json::array();
  band = json::array();
  for (double x : xs) {
    std::vector<double> ys;
    for (const Curve& c : curves) {
      double y = -1;
      for (const auto& p : c)
        if (p.first <= x) y = p.second;
      if (y >= 0) ys.push_back(y / 1000);
    }
    if (ys.size() != curves.size()) continue;  // every seed has reported
    const Stat s = stat_of(ys);
    points.push_back({x, s.mean});
    band.push_back({x, s.lo, s.hi});
  }
}

inline std::string seeds_text(const std::vector<int>& seeds) {
  std::string s;
  for (int x : seeds) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

// The least evidence a claim's verdict stands on: rows (or cases, or held-out
// runs) behind it, and evaluations per search run where the claim rests on
// searches. Below either, the verdict is "not enough evidence at this budget"
// (the smoke budget's one row of 20 evaluations shows that the pipeline works,
// not whether a claim holds); the small budget clears both.
inline constexpr int kClaimMinRows = 3;
inline constexpr long long kClaimMinEvals = 100;
inline constexpr const char* kNotEnoughEvidence = "not enough evidence at this budget";

// Runs argv with its output in `log`; returns a line saying what went wrong
// (empty on success) and the exit status (reproduce_report.cc).
std::string run_child(const std::vector<std::string>& argv, const fs::path& log, int& status_out);

// The sections, each a Markdown block (figures added to `figures`).
std::string compare_section(Results& r, const Plan& plan, const fs::path& dir, const std::string& gui);
std::string fusion_section(Results& r, const Plan& plan);
std::string simgrid_section(Results& r, const Plan& plan, Figures& figures);
std::string agents_section(Results& r, const Plan& plan, Figures& figures);
// reproduce_report_tables.cc: the paper's tables and the claims checklist.
std::string claims_section(Results& r, const Plan& plan);
std::string table1_section(Results& r, const Plan& plan, Figures& figures);
std::string presets_section(Results& r, const Plan& plan);
std::string transfer_section(Results& r, const Plan& plan, Figures& figures);
std::string ablation_section(Results& r, const Plan& plan);
// reproduce_report_systems.cc: strategies, hardware, mesh.
std::string strategies_section(Results& r, const Plan& plan, Figures& figures);
std::string hardware_section(Results& r, const Plan& plan, Figures& figures);
std::string mesh_section(Results& r, const Plan& plan, Figures& figures);

}  // namespace aware::reproduce::report
