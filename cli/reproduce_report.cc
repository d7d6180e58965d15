// aware reproduce: the report, from the finished cells. Each table's section
// reads its cells' JSON (and learning curves); figures are chart specs drawn by
// aware-plot (and the compare charts by aware-gui).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "agents/baselines/compare.h"
#include "cli/cli_common.h"
#include "cli/reproduce.h"
#include "core/errors.h"
#include "core/formats.h"

namespace aware::cli::reproduce {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kNever = std::numeric_limits<double>::infinity();

std::string fmt(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}
std::string ms(double us) { return fmt("%.2f", us / 1000); }
std::string pct(double v) { return fmt("%+.1f%%", v); }

struct Stat {
  int n = 0;
  double mean = 0, sd = 0, lo = 0, hi = 0;
  bool ok() const { return n > 0; }
};
Stat stat_of(const std::vector<double>& xs) {
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
std::string ms_pm(const Stat& s) { return s.ok() ? ms(s.mean) + " ± " + ms(s.sd) : "-"; }

// Learning curve: (evaluations, best-so-far µs) per update.
using Curve = std::vector<std::pair<double, double>>;

class Results {
 public:
  Results(const Plan& plan) : plan_(plan) {}

  // The cell's JSON, or null when it did not finish.
  const json* get(const std::string& key) {
    const auto it = cache_.find(key);
    if (it != cache_.end()) return it->second ? &*it->second : nullptr;
    const fs::path file = plan_.cell_dir / (key + ".json");
    std::optional<json> doc;
    if (fs::exists(file)) doc = parse_json_text(read_text_file(file.string()), file.string());
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
    std::ifstream in(plan_.cell_dir / (key + ".curve.csv"));
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
  std::map<std::string, std::optional<json>> cache_;
};

// Finds the key of the plan's cell matching these fields in `table`.
std::optional<std::string> find_cell(const Plan& plan, const std::string& table, const std::string& kind,
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
std::vector<double> over_seeds(Results& r, const Plan& plan, const std::string& table, const std::string& model,
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

double lower_bound_of(Results& r, const Plan& plan, const std::string& table, const std::string& model,
                      const std::string& cluster) {
  for (const Cell* c : plan.cells_of(table))
    if (c->model == model && c->cluster == cluster)
      if (const json* j = r.get(c->key); j && j->is_object() && j->contains("lower_bound_us"))
        return j->at("lower_bound_us").get<double>();
  return 0;
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
void mean_curve(const std::vector<Curve>& curves, json& points, json& band) {
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

std::string seeds_text(const std::vector<int>& seeds) {
  std::string s;
  for (int x : seeds) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

// ---------------------------------------------------------------- compare

CompareTable compare_table_of(Results& r, const std::vector<const Cell*>& cells, const std::string& cluster) {
  CompareTable table;
  std::vector<std::string> models;
  for (const Cell* c : cells) {
    if (c->cluster != cluster) continue;
    if (std::find(table.methods.begin(), table.methods.end(), c->method) == table.methods.end())
      table.methods.push_back(c->method);
    if (std::find(models.begin(), models.end(), c->model) == models.end()) models.push_back(c->model);
    table.budget_evals = c->evals;
    table.seed = static_cast<std::uint64_t>(c->seed);
  }
  for (const std::string& model : models) {
    CompareRow row;
    row.model = model;
    row.cluster = cluster;
    double best = kNever;
    for (const std::string& method : table.methods) {
      MethodResult m;
      m.method = method;
      m.status = "error";
      std::vector<double> xs;
      for (const Cell* c : cells) {
        if (c->cluster != cluster || c->model != model || c->method != method) continue;
        const json* j = r.get(c->key);
        if (!j) continue;
        if (j->contains("devices") && j->at("devices").is_array())
          row.devices = static_cast<int>(j->at("devices").size());
        row.lower_bound_us = j->value("lower_bound_us", 0.0);
        if (table.evaluator.empty()) table.evaluator = j->value("evaluator", "");
        if (!j->value("feasible", false)) {
          m.status = "oom";
          continue;
        }
        xs.push_back(j->value("step_time_us", 0.0));
      }
      if (!xs.empty()) {
        m.status = "ok";
        m.step_time_us = stat_of(xs).mean;
        if (m.step_time_us < best) best = m.step_time_us, row.winner = method;
      }
      row.results.push_back(m);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::string run_child(const std::vector<std::string>& argv_in, const fs::path& log, int& status_out) {
  std::vector<std::string> copy = argv_in;
  std::vector<char*> argv;
  for (std::string& s : copy) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw Error("reproduce: fork failed");
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  status_out = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  std::ifstream in(log);
  std::string line, error, last;
  while (std::getline(in, line))
    if (line.rfind("error:", 0) == 0 && error.empty()) error = line;
    else if (!line.empty()) last = line;
  return error.empty() ? last : error;
}

std::string compare_section(Results& r, const Plan& plan, const fs::path& dir, const std::string& gui) {
  const auto cells = plan.cells_of("compare");
  std::ostringstream out;
  out << "## compare: step time (ms) per placer\n\n"
      << "Each cell is `aware place --graph zoo:MODEL --cluster preset:CLUSTER --method METHOD "
         "--budget-evals "
      << plan.budget.compare_evals << " --seed S --json` (seeds " << seeds_text(plan.budget.compare_seeds)
      << "); the mean over seeds, the best in bold, `-` where the cell failed or ran out of memory.\n\n";
  for (const std::string& cluster : distinct(cells, [](const Cell& c) { return c.cluster; })) {
    const CompareTable table = compare_table_of(r, cells, cluster);
    out << "### " << cluster << "\n\n| model | lower bound |";
    for (const std::string& m : table.methods) out << " " << m << " |";
    out << "\n|---|---:|";
    for (size_t i = 0; i < table.methods.size(); ++i) out << "---:|";
    out << "\n";
    for (const CompareRow& row : table.rows) {
      out << "| " << row.model << " | " << (row.lower_bound_us > 0 ? fmt("%.1f", row.lower_bound_us / 1000) : "-")
          << " |";
      for (const MethodResult& m : row.results) {
        if (!m.ok()) {
          out << " - |";
          continue;
        }
        out << " " << fmt(m.method == row.winner ? "**%.1f**" : "%.1f", m.step_time_us / 1000) << " |";
      }
      out << "\n";
    }
    out << "\n";
    // The chart: aware-gui's compare view over the same table.
    const fs::path table_file = dir / ("compare-" + cluster + ".json");
    write_json_file(table_file.string(), compare_to_json(table));
    if (gui.empty()) continue;
    fs::create_directories(dir / "figures");
    const fs::path png = dir / "figures" / ("compare-" + cluster + ".png");
    const fs::path log = dir / "figures" / (".compare-" + cluster + ".log");
    int status = 0;
    const std::string why = run_child({gui, "--compare-table", table_file.string(), "--view", "compare", "--size",
                                       "1400x900", "--screenshot", png.string()},
                                      log, status);
    if (status == 0 && fs::exists(png)) {
      fs::remove(log);
      out << "![compare on " << cluster << "](figures/compare-" << cluster << ".png)\n\n";
    } else {
      out << "(The figure for " << cluster << " was not drawn: " << why << ")\n\n";
    }
  }
  if (gui.empty())
    out << "(No compare charts: aware-gui is not built here. The chart data are in compare-CLUSTER.json.)\n\n";
  return out.str();
}

// ---------------------------------------------------------------- fusion

std::string fusion_section(Results& r, const Plan& plan) {
  std::ostringstream out;
  out << "## fusion: anneal on the full and on the fused graph\n\n"
      << "`aware fuse report --models MODEL --cluster " << plan.budget.fusion_cluster << " --budget-evals "
      << plan.budget.fusion_evals
      << " --json`: ops before and after fusion, and the best step time (ms, on the full graph) anneal finds "
         "at the same budget on the full graph, on the fused graph, and on the fused graph with every "
         "candidate scored on the full graph.\n\n"
      << "| model | ops | fused ops | lower bound | single | anneal fine | anneal fused | vs fine | fused, "
         "fine-scored | vs fine |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const Cell* c : plan.cells_of("fusion")) {
    const json* j = r.get(c->key);
    if (!j || !j->is_array() || j->empty()) {
      out << "| " << c->model << " | failed | | | | | | | | |\n";
      continue;
    }
    const json& f = j->at(0);
    const double fine = f.value("fine_step_us", 0.0), fused = f.value("fused_step_us", 0.0),
                 scored = f.value("fine_scored_step_us", 0.0);
    out << "| " << c->model << " | " << f.value("ops", 0) << " | " << f.value("fused_ops", 0) << " | "
        << ms(f.value("lower_bound_us", 0.0)) << " | " << ms(f.value("single_device_us", 0.0)) << " | " << ms(fine)
        << " | " << ms(fused) << " | " << pct(100 * (fused - fine) / fine) << " | " << ms(scored) << " | "
        << pct(100 * (scored - fine) / fine) << " |\n";
  }
  return out.str() + "\n";
}

// ---------------------------------------------------------------- simgrid

std::string simgrid_section(Results& r, const Plan& plan, Figures& figures) {
  std::ostringstream out;
  out << "## simgrid: the analytic simulator against SimGrid\n\n"
      << "m-ETF's placement of each model, its step time under the analytic simulator (contention mode) and "
         "under the SimGrid evaluator (`aware simulate --placement FILE --evaluator simgrid`, defaults).\n\n"
      << "| model | cluster | analytic ms | simgrid ms | simgrid / analytic |\n|---|---|---:|---:|---:|\n";
  std::map<std::string, json> by_cluster;
  std::vector<double> ratios;
  for (const Cell* c : plan.cells_of("simgrid")) {
    if (c->kind != "simgrid") continue;
    const auto analytic = r.step_us(c->needs.front());
    const auto sim = r.step_us(c->key);
    if (!analytic || !sim) {
      out << "| " << c->model << " | " << c->cluster << " | " << (analytic ? ms(*analytic) : "-") << " | - | |\n";
      continue;
    }
    ratios.push_back(*sim / *analytic);
    out << "| " << c->model << " | " << c->cluster << " | " << ms(*analytic) << " | " << ms(*sim) << " | "
        << fmt("%.3f", *sim / *analytic) << " |\n";
    by_cluster[c->cluster].push_back({*analytic / 1000, *sim / 1000});
  }
  out << "\n";
  if (!ratios.empty()) {
    const Stat s = stat_of(ratios);
    out << "SimGrid / analytic over " << s.n << " placements: " << fmt("%.3f", s.lo) << " to "
        << fmt("%.3f", s.hi) << ", mean " << fmt("%.3f", s.mean) << ".\n\n";
  }
  if (!by_cluster.empty()) {
    json spec = {{"title", "m-ETF placements: analytic vs SimGrid step time"},
                 {"x_label", "analytic simulator (ms)"}, {"y_label", "SimGrid (ms)"}, {"kind", "scatter"},
                 {"diagonal", true}, {"series", json::array()}};
    for (const auto& [cluster, points] : by_cluster) spec["series"].push_back({{"name", cluster}, {"points", points}});
    out << figures.add("simgrid-scatter", "analytic vs SimGrid", spec);
  }
  return out.str();
}

// ---------------------------------------------------------------- agents

std::string agents_section(Results& r, const Plan& plan, Figures& figures) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  out << "## agents: learned agents and searches at an equal budget\n\n"
      << b.evals << " evaluations per method and run on " << b.agent_cluster << ", seeds " << seeds_text(b.seeds)
      << ", analytic simulator (contention). Learned agents: `aware search --agent A --budget-evals " << b.evals
      << "` (the result is the better of the best sample and the final greedy placement); the others `aware "
         "place`. random-sampling is the best of uniform random placements; random-search and anneal start "
         "from the best cheap placer. The figure draws the learned agents' best *sampled* placement per update "
         "(the curve files); their final greedy placement, which the table counts, can be better.\n\n"
      << "| model | method | step ms (mean ± std) | min – max | ratio to bound | wall-clock s (mean) |\n"
      << "|---|---|---:|---:|---:|---:|\n";
  std::string figure_lines;  // after the table, which one image line would cut in two
  for (const std::string& model : b.agent_models) {
    const double bound = lower_bound_of(r, plan, "agents", model, b.agent_cluster);
    json series = json::array();
    std::vector<std::pair<std::string, double>> finals;
    double max_x = 0;
    for (const std::string& method : b.agent_methods) {
      const std::vector<double> xs = over_seeds(r, plan, "agents", model, b.agent_cluster, method);
      std::vector<double> wall;
      std::vector<Curve> curves;
      for (int seed : b.seeds) {
        const bool agent = method == "aware" || method == "placeto" || method == "hierarchical";
        const auto key = find_cell(plan, "agents", agent ? "search" : "place", model, b.agent_cluster, method, seed);
        if (!key) continue;
        if (const json* j = r.get(*key); j && j->is_object())
          wall.push_back(j->value(agent ? "train_seconds" : "place_time_s", 0.0));
        if (agent) {
          Curve c = r.curve(*key);
          if (!c.empty()) curves.push_back(std::move(c));
        }
      }
      const Stat s = stat_of(xs);
      if (!s.ok()) {
        out << "| " << model << " | " << method << " | failed | | | |\n";
        continue;
      }
      out << "| " << model << " | " << method << " | " << ms_pm(s) << " | " << ms(s.lo) << " – " << ms(s.hi)
          << " | " << (bound > 0 ? fmt("%.3f", s.mean / bound) : "-") << " | " << fmt("%.1f", stat_of(wall).mean)
          << " |\n";
      if (!curves.empty()) {
        json points, band;
        mean_curve(curves, points, band);
        if (!points.empty()) max_x = std::max(max_x, points.back()[0].get<double>());
        series.push_back({{"name", method}, {"points", points}, {"band", band}});
      } else {
        finals.emplace_back(method, s.mean);
      }
    }
    if (!series.empty()) {
      for (const auto& [method, value] : finals)
        series.push_back({{"name", method + " (end)"},
                          {"points", {{0, value / 1000}, {std::max(max_x, 1.0), value / 1000}}},
                          {"style", "dashed"}});
      const std::string name = "curves-" + model + "-" + b.agent_cluster;
      figure_lines += figures.add(name, "learning curves on " + model,
                         {{"title", model + " on " + b.agent_cluster +
                                        ": best sampled step time so far (mean over seeds, band = min to max); dashed: final results"},
                          {"x_label", "evaluations"}, {"y_label", "step time (ms)"}, {"kind", "line"},
                          {"series", series}});
    }
  }
  return out.str() + "\n" + figure_lines;
}

// ---------------------------------------------------------------- table 1

struct Table1Row {
  std::string model, cluster;
  Stat aware, placeto, hierarchical, best_nl;
  std::string best_nl_method;
  double bound = 0;
  bool complete() const { return aware.ok() && placeto.ok() && hierarchical.ok(); }
  double gain_p() const { return 100 * (placeto.mean - aware.mean) / placeto.mean; }
  double gain_h() const { return 100 * (hierarchical.mean - aware.mean) / hierarchical.mean; }
};

std::vector<Table1Row> table1_rows(Results& r, const Plan& plan) {
  std::vector<Table1Row> rows;
  const Budget& b = plan.budget;
  for (const std::string& cluster : b.table1_clusters)
    for (const std::string& model : b.table1_models) {
      Table1Row row;
      row.model = model;
      row.cluster = cluster;
      row.bound = lower_bound_of(r, plan, "table1", model, cluster);
      row.aware = stat_of(over_seeds(r, plan, "table1", model, cluster, "aware"));
      row.placeto = stat_of(over_seeds(r, plan, "table1", model, cluster, "placeto"));
      row.hierarchical = stat_of(over_seeds(r, plan, "table1", model, cluster, "hierarchical"));
      for (const std::string& m : nonlearned_placers()) {
        const Stat s = stat_of(over_seeds(r, plan, "table1", model, cluster, m));
        if (s.ok() && (!row.best_nl.ok() || s.mean < row.best_nl.mean)) row.best_nl = s, row.best_nl_method = m;
      }
      rows.push_back(row);
    }
  return rows;
}

std::string verdict_p(double g) { return g > 0.5 ? "beats P" : (g < -0.5 ? "loses to P" : "ties P"); }
std::string verdict_h(double g) {
  return g > 8 ? "beats H by >8%" : (g > 0.5 ? "beats H by <8%" : (g < -0.5 ? "loses to H" : "ties H"));
}

std::string table1_section(Results& r, const Plan& plan, Figures& figures) {
  const Budget& b = plan.budget;
  const std::vector<Table1Row> rows = table1_rows(r, plan);
  std::ostringstream out;
  out << "## table1: the Aware paper's Table 1 (step time per model and GPU count)\n\n"
      << "Aware, Placeto and Hierarchical (`aware search`) against the best non-learned placer of ";
  for (size_t i = 0; i < nonlearned_placers().size(); ++i) out << (i ? ", " : "") << nonlearned_placers()[i];
  out << " (`aware place`), " << b.evals << " evaluations per method and run, seeds " << seeds_text(b.seeds)
      << ", analytic simulator (contention); mean ± population std over seeds; gains = (other − Aware) / other "
         "of the means; within 0.5% is a tie.\n\n"
      << "| model | cluster | Aware ms | Placeto ms | Hierarchical ms | best non-learned ms | Aware vs Placeto | "
         "Aware vs Hierarchical | paper claim (≤5% vs P, >8% vs H) |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  json categories = json::array(), aware = json::array(), placeto = json::array(), hier = json::array(),
       best = json::array(), bound = json::array();
  for (const Table1Row& row : rows) {
    out << "| " << row.model << " | " << row.cluster << " | " << ms_pm(row.aware) << " | " << ms_pm(row.placeto)
        << " | " << ms_pm(row.hierarchical) << " | "
        << (row.best_nl.ok() ? row.best_nl_method + " " + ms_pm(row.best_nl) : "-") << " | ";
    if (row.complete())
      out << pct(row.gain_p()) << " | " << pct(row.gain_h()) << " | " << verdict_p(row.gain_p()) << " / "
          << verdict_h(row.gain_h()) << " |\n";
    else
      out << "n/a | n/a | n/a |\n";
    if (!row.complete() || !row.best_nl.ok()) continue;
    categories.push_back(row.model + " " + row.cluster);
    aware.push_back(row.aware.mean / 1000);
    placeto.push_back(row.placeto.mean / 1000);
    hier.push_back(row.hierarchical.mean / 1000);
    best.push_back(row.best_nl.mean / 1000);
    bound.push_back(row.bound / 1000);
  }
  out << "\n";
  if (!categories.empty())
    out << figures.add("table1-bars", "Table 1: step time per method",
                       {{"title", "Table 1: step time per method (mean over seeds) against the lower bound"},
                        {"x_label", "model and cluster"}, {"y_label", "step time (ms)"}, {"kind", "bar"},
                        {"width", std::max(1000, 90 * static_cast<int>(categories.size()))}, {"height", 700},
                        {"categories", categories},
                        {"series", {{{"name", "Aware"}, {"values", aware}},
                                    {{"name", "Placeto"}, {"values", placeto}},
                                    {{"name", "Hierarchical"}, {"values", hier}},
                                    {{"name", "best non-learned"}, {"values", best}},
                                    {{"name", "lower bound"}, {"values", bound}}}}});
  return out.str();
}

// ---------------------------------------------------------------- tables 2 and 3

struct TransferRow {
  std::string family, graph;
  int seed = 0;
  std::optional<double> single, zero_shot, zero_shot_balanced, pretrained, scratch, placeto, best_nl;
  std::string best_nl_method;
  double target = 0, scratch_to = kNever, pretrained_to = kNever;
  bool has_curves = false;
};

double evals_to(const Curve& c, double target) {
  for (const auto& p : c)
    if (p.second <= target) return p.first;
  return kNever;
}

std::vector<TransferRow> transfer_rows(Results& r, const Plan& plan, const std::vector<std::string>& models) {
  std::vector<TransferRow> rows;
  const Budget& b = plan.budget;
  const std::string& cluster = b.transfer_cluster;
  for (const std::string& model : models)
    for (int seed : b.seeds) {
      TransferRow row;
      row.graph = model;
      row.seed = seed;
      auto step = [&](const std::string& kind, const std::string& method, int s, const std::string& variant)
          -> std::optional<double> {
        const auto key = find_cell(plan, "transfer", kind, model, cluster, method, s, variant);
        return key ? r.step_us(*key) : std::nullopt;
      };
      row.single = step("simulate", "single", 1, "");
      row.zero_shot = step("search", "aware", seed, "zero-shot");
      row.zero_shot_balanced = step("search", "aware", seed, "zero-shot-balanced");
      row.pretrained = step("search", "aware", seed, "pretrained");
      row.scratch = step("search", "aware", seed, "");
      row.placeto = step("search", "placeto", seed, "");
      for (const std::string& m : nonlearned_placers()) {
        const auto v = step("place", m, seed, "");
        if (v && (!row.best_nl || *v < *row.best_nl)) row.best_nl = v, row.best_nl_method = m;
      }
      const auto k_scratch = find_cell(plan, "transfer", "search", model, cluster, "aware", seed, "");
      const auto k_pre = find_cell(plan, "transfer", "search", model, cluster, "aware", seed, "pretrained");
      if (k_scratch && k_pre) {
        const Curve cs = r.curve(*k_scratch), cp = r.curve(*k_pre);
        if (!cs.empty() && !cp.empty()) {
          row.has_curves = true;
          row.target = 1.05 * std::min(cs.back().second, cp.back().second);
          row.scratch_to = evals_to(cs, row.target);
          row.pretrained_to = evals_to(cp, row.target);
        }
      }
      rows.push_back(row);
    }
  return rows;
}

std::vector<std::string> held_out(const Plan& plan, const std::string& family) {
  std::vector<std::string> out;
  for (int m = 4; m <= plan.budget.family_count; m += 4) out.push_back(family + "-" + std::to_string(m));
  return out;
}

std::string opt_ms(const std::optional<double>& v) { return v ? ms(*v) : "-"; }
std::string evals_text(double e) { return std::isinf(e) ? "never" : fmt("%.0f", e); }

std::string transfer_section(Results& r, const Plan& plan, Figures& figures) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  const int train = b.family_count - b.family_count / 4;
  out << "## transfer: the Aware paper's Tables 2 and 3 (transplantation, pre-training)\n\n"
      << "On " << b.transfer_cluster << ". Per family and seed, one Aware policy is pre-trained over the family's "
      << train << " training members (`aware pretrain --count " << b.family_count << "`, " << b.pretrain_per_graph
      << " evaluations per member); each held-out member (every fourth) is then placed zero-shot (the policy's "
         "greedy placement, one evaluation: the paper's argmax decode, and `decode=balanced`, the load-aware one), "
         "fine-tuned from the policy, and searched from scratch, "
      << b.evals << " evaluations each; beside them Placeto, one GPU and the best non-learned placer.\n\n"
      << "### Table 2: transplantation\n\n"
      << "| held-out graph | seed | single GPU ms | zero-shot ms | zero-shot, balanced decode ms | pre-trained + "
         "fine-tune ms | from scratch ms | Placeto ms | best non-learned ms |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<TransferRow> all;
  for (const std::string& family : b.families) {
    const auto rows = transfer_rows(r, plan, held_out(plan, family));
    all.insert(all.end(), rows.begin(), rows.end());
  }
  int zs_better = 0, zsb_better = 0, zsb_n = 0, ft_better = 0, ft_nl = 0, n = 0;
  for (const TransferRow& row : all) {
    out << "| " << row.graph << " | " << row.seed << " | " << opt_ms(row.single) << " | " << opt_ms(row.zero_shot)
        << " | " << opt_ms(row.zero_shot_balanced) << " | " << opt_ms(row.pretrained) << " | " << opt_ms(row.scratch) << " | " << opt_ms(row.placeto) << " | "
        << (row.best_nl ? row.best_nl_method + " " + ms(*row.best_nl) : "-") << " |\n";
    if (row.single && row.zero_shot_balanced) ++zsb_n, zsb_better += *row.zero_shot_balanced < *row.single * 0.999;
    if (!row.single || !row.zero_shot || !row.pretrained || !row.scratch) continue;
    ++n;
    zs_better += *row.zero_shot < *row.single * 0.999;
    ft_better += *row.pretrained < *row.scratch;
    ft_nl += row.best_nl && *row.pretrained <= *row.best_nl;
  }
  out << "\nZero-shot better than one GPU on " << zs_better << " of " << n << " (balanced decode: " << zsb_better
      << " of " << zsb_n << ")"
      << "; pre-trained + fine-tune better than from scratch on " << ft_better << " of " << n
      << "; pre-trained + fine-tune at or below the best non-learned placer on " << ft_nl << " of " << n << ".\n\n";

  out << "### Table 3: does pre-training speed up convergence?\n\n"
      << "Evaluations until a run's best-so-far first comes within 5% of the better of the two runs' final "
         "results (curve points are one update apart).\n\n"
      << "| graph | seed | from scratch: evaluations to target (final ms) | pre-trained: evaluations to target "
         "(final ms) | target ms |\n|---|---|---:|---:|---:|\n";
  std::vector<TransferRow> t3 = all;
  if (!b.transfer_zoo_model.empty()) {
    const auto zoo = transfer_rows(r, plan, {b.transfer_zoo_model});
    t3.insert(t3.end(), zoo.begin(), zoo.end());
  }
  json categories = json::array(), scratch_bars = json::array(), pre_bars = json::array();
  for (const TransferRow& row : t3) {
    if (!row.has_curves) {
      out << "| " << row.graph << " | " << row.seed << " | - | - | - |\n";
      continue;
    }
    out << "| " << row.graph << (row.graph == b.transfer_zoo_model ? " (zoo, cifar10 policy)" : "") << " | "
        << row.seed << " | " << evals_text(row.scratch_to) << " (" << opt_ms(row.scratch) << ") | "
        << evals_text(row.pretrained_to) << " (" << opt_ms(row.pretrained) << ") | " << ms(row.target) << " |\n";
    categories.push_back(row.graph + " s" + std::to_string(row.seed));
    const double cap = static_cast<double>(b.evals) * 1.1;
    scratch_bars.push_back(std::isinf(row.scratch_to) ? cap : row.scratch_to);
    pre_bars.push_back(std::isinf(row.pretrained_to) ? cap : row.pretrained_to);
  }
  out << "\n";
  if (!categories.empty())
    out << figures.add("evals-to-target", "evaluations to target",
                       {{"title", "Evaluations to reach the target (never = drawn at 1.1 x the budget)"},
                        {"x_label", "held-out graph and seed"}, {"y_label", "evaluations"}, {"kind", "bar"},
                        {"width", std::max(1000, 70 * static_cast<int>(categories.size()))},
                        {"categories", categories},
                        {"series", {{{"name", "from scratch"}, {"values", scratch_bars}},
                                    {{"name", "pre-trained"}, {"values", pre_bars}}}}});
  // Learning curves of the first held-out member of each family: scratch vs pre-trained.
  for (const std::string& family : b.families) {
    const std::string model = held_out(plan, family).front();
    json series = json::array();
    for (const std::string& variant : {std::string(""), std::string("pretrained")}) {
      std::vector<Curve> curves;
      for (int seed : b.seeds)
        if (const auto key = find_cell(plan, "transfer", "search", model, b.transfer_cluster, "aware", seed, variant)) {
          Curve c = r.curve(*key);
          if (!c.empty()) curves.push_back(std::move(c));
        }
      if (curves.empty()) continue;
      json points, band;
      mean_curve(curves, points, band);
      series.push_back({{"name", variant.empty() ? "Aware from scratch" : "Aware pre-trained"},
                        {"points", points}, {"band", band}});
    }
    if (series.empty()) continue;
    out << figures.add("transfer-curves-" + model, "pre-trained vs scratch on " + model,
                       {{"title", model + " on " + b.transfer_cluster +
                                      ": best sampled step time so far (mean over seeds, band = min to max)"},
                        {"x_label", "evaluations"}, {"y_label", "step time (ms)"}, {"kind", "line"},
                        {"series", series}});
  }
  return out.str();
}

// ---------------------------------------------------------------- table 4

std::string ablation_section(Results& r, const Plan& plan) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  out << "## ablation: the Aware paper's Table 4\n\n"
      << "Aware with its fusion or its position-aware features switched off (`--agent-option fusion=off`, "
         "`position=off`), "
      << b.evals << " evaluations per run, seeds " << seeds_text(b.seeds) << ", mean ± population std.\n\n"
      << "| model | cluster | Aware ms | fusion=off ms | position=off ms |\n|---|---|---:|---:|---:|\n";
  for (const std::string& cluster : b.ablation_clusters)
    for (const std::string& model : b.ablation_models) {
      out << "| " << model << " | " << cluster;
      for (const char* variant : {"", "fusion=off", "position=off"})
        out << " | " << ms_pm(stat_of(over_seeds(r, plan, "ablation", model, cluster, "aware", variant)));
      out << " |\n";
    }
  return out.str() + "\n";
}

// ---------------------------------------------------------------- strategies

std::string strategies_section(Results& r, const Plan& plan, Figures& figures) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  out << "## strategies: place, replicate, or both?\n\n"
      << "Time per global batch (the zoo model's batch), ms, analytic simulator. Placements: the best of ";
  for (size_t i = 0; i < strategy_placers().size(); ++i) out << (i ? ", " : "") << strategy_placers()[i];
  out << " (`aware place`); strategies: `aware simulate --strategy SPEC` (the graph rewritten for the cluster "
         "and placed by the strategy; docs/strategies.md). OOM: the strategy's placement does not fit in "
         "memory.\n\n| model | cluster | single | best placement |";
  for (const std::string& spec : b.strategy_specs) out << " " << spec << " |";
  out << " winner | speed-up over single |\n|---|---|---:|---:|";
  for (size_t i = 0; i < b.strategy_specs.size(); ++i) out << "---:|";
  out << "---|---:|\n";
  std::string figure_lines;  // after the table
  for (const std::string& cluster : b.strategy_clusters) {
    json categories = json::array(), single_bars = json::array(), place_bars = json::array(),
         best_strategy_bars = json::array();
    for (const std::string& model : b.strategy_models) {
      const auto single = [&]() -> std::optional<double> {
        const auto key = find_cell(plan, "strategies", "place", model, cluster, "single", 1);
        return key ? r.step_us(*key) : std::nullopt;
      }();
      std::optional<double> best_place;
      std::string best_place_method;
      for (const std::string& m : strategy_placers()) {
        const auto key = find_cell(plan, "strategies", "place", model, cluster, m, 1);
        const auto v = key ? r.step_us(*key) : std::nullopt;
        if (v && (!best_place || *v < *best_place)) best_place = v, best_place_method = m;
      }
      std::optional<double> best = best_place;
      std::string winner = best_place ? best_place_method : "-";
      std::optional<double> best_strategy;
      out << "| " << model << " | " << cluster << " | " << opt_ms(single) << " | "
          << (best_place ? ms(*best_place) + " (" + best_place_method + ")" : "-") << " |";
      for (const std::string& spec : b.strategy_specs) {
        const auto key = find_cell(plan, "strategies", "strategy", model, cluster, spec, 1);
        const json* j = key ? r.get(*key) : nullptr;
        if (j == nullptr || !j->is_object()) {
          out << " - |";
          continue;
        }
        if (!j->value("feasible", false)) {
          out << " OOM |";
          continue;
        }
        const double v = j->value("step_time_us", 0.0);
        out << " " << ms(v) << " |";
        if (!best_strategy || v < *best_strategy) best_strategy = v;
        if (!best || v < *best) best = v, winner = spec;
      }
      out << " " << winner << " | " << (single && best ? fmt("%.2fx", *single / *best) : "-") << " |\n";
      if (single && best_place && best_strategy) {
        categories.push_back(model);
        single_bars.push_back(*single / 1000);
        place_bars.push_back(*best_place / 1000);
        best_strategy_bars.push_back(*best_strategy / 1000);
      }
    }
    if (!categories.empty())
      figure_lines += figures.add(
          "strategies-" + cluster, "strategies on " + cluster,
          {{"title", "Time per global batch on " + cluster + ": one device, the best placement, the best strategy"},
           {"x_label", "model"}, {"y_label", "ms per global batch"}, {"kind", "bar"}, {"categories", categories},
           {"series", {{{"name", "single device"}, {"values", single_bars}},
                       {{"name", "best placement"}, {"values", place_bars}},
                       {{"name", "best strategy"}, {"values", best_strategy_bars}}}}});
  }
  return out.str() + "\n" + figure_lines;
}

// ---------------------------------------------------------------- claims

std::string claims_section(Results& r, const Plan& plan) {
  const Budget& b = plan.budget;
  std::ostringstream out;
  out << "## claims: the Aware abstract's claims, checked\n\n"
      << "At this report's budget (" << b.evals << " evaluations per run, seeds " << seeds_text(b.seeds)
      << "). A verdict is *reproduced* when every row behind it agrees, *partly* when some do, *not reproduced* "
         "when none do; *not run* when its table was not run or has no finished rows.\n\n"
      << "| claim | verdict | the rows behind it |\n|---|---|---|\n";
  auto verdict = [](int yes, int n) {
    return n == 0 ? std::string("not run") : yes == n ? "reproduced" : yes > 0 ? "partly" : "not reproduced";
  };
  if (plan.has("table1")) {
    int ahead = 0, ties = 0, behind = 0, over8 = 0, n = 0;
    double lo = kNever, hi = -kNever, lo_h = kNever, hi_h = -kNever;
    for (const Table1Row& row : table1_rows(r, plan)) {
      if (!row.complete()) continue;
      ++n;
      const double g = row.gain_p(), h = row.gain_h();
      ahead += g > 0.5, ties += std::abs(g) <= 0.5, behind += g < -0.5, over8 += h > 8;
      lo = std::min(lo, g), hi = std::max(hi, g), lo_h = std::min(lo_h, h), hi_h = std::max(hi_h, h);
    }
    out << "| Aware's step time is up to 5% lower than Placeto's | " << verdict(ahead + ties, n)
        << " (Aware at least as fast in " << ahead + ties << " of " << n << " rows) | table1: Aware ahead in "
        << ahead << ", tied (±0.5%) in " << ties << ", behind in " << behind << " of " << n
        << " rows; gains " << (n ? pct(lo) + " to " + pct(hi) : "n/a") << " |\n";
    out << "| Aware's step time is more than 8% lower than Hierarchical's | " << verdict(over8, n) << " | table1: "
        << over8 << " of " << n << " rows more than 8% ahead; gains " << (n ? pct(lo_h) + " to " + pct(hi_h) : "n/a")
        << " |\n";
  } else {
    out << "| up to 5% lower than Placeto; more than 8% lower than Hierarchical | not run | table1 not run |\n";
  }
  if (plan.has("transfer")) {
    int zs = 0, n = 0, zsb = 0, nb = 0, earlier = 0, later = 0, m = 0;
    for (const std::string& family : b.families)
      for (const TransferRow& row : transfer_rows(r, plan, held_out(plan, family))) {
        if (row.single && row.zero_shot) ++n, zs += *row.zero_shot < *row.single * 0.999;
        if (row.single && row.zero_shot_balanced) ++nb, zsb += *row.zero_shot_balanced < *row.single * 0.999;
        if (row.has_curves) ++m, earlier += row.pretrained_to < row.scratch_to, later += row.pretrained_to > row.scratch_to;
      }
    out << "| A policy trained on some networks transplants to similar ones (zero-shot, no training on the "
           "graph) | "
        << verdict(zs, n) << " | transfer, Table 2: zero-shot better than one GPU on " << zs << " of " << n
        << " held-out runs (the paper's argmax decode); with the load-aware decode (not the paper's) on " << zsb
        << " of " << nb << " |\n";
    const std::string v = m == 0 ? "not run" : (earlier > 0 && later == 0) ? "reproduced" : earlier > later ? "partly"
                                                              : earlier > 0 ? "partly" : "not reproduced";
    out << "| Pre-training speeds up convergence | " << v << " | transfer, Table 3: the pre-trained run reaches "
        << "the target earlier in " << earlier << ", later in " << later << ", at the same point in "
        << m - earlier - later << " of " << m << " held-out runs |\n";
  } else {
    out << "| transplantation; pre-training speeds up convergence | not run | transfer not run |\n";
  }
  if (plan.has("table1")) {
    int nl = 0, n = 0;
    for (const Table1Row& row : table1_rows(r, plan))
      if (row.aware.ok() && row.best_nl.ok()) ++n, nl += row.best_nl.mean < row.aware.mean;
    out << "\nNot a claim of the paper, but the question a reader asks next: the best non-learned placer is "
           "faster than Aware in "
        << nl << " of " << n << " Table 1 rows.\n";
  }
  return out.str() + "\n";
}

// Draws every figure spec with aware-plot; a figure that is not drawn becomes
// a line saying why.
std::string draw_figures(const Figures& figures, const std::string& plot, std::string report) {
  std::string why;
  if (plot.empty()) {
    why = "aware-plot is not built here (Qt6 Charts); the chart specs are in figures/*.plot.json";
  } else if (!figures.specs.empty()) {
    std::vector<std::string> argv = {plot, "--svg"};
    for (const auto& [name, caption] : figures.specs) argv.push_back((figures.dir / "figures" / (name + ".plot.json")).string());
    const fs::path log = figures.dir / "figures" / ".plot.log";
    int status = 0;
    std::string line = run_child(argv, log, status);
    if (status == 2) {  // no SVG support: PNG only
      argv.erase(argv.begin() + 1);
      line = run_child(argv, log, status);
    }
    if (status == 0) fs::remove(log);
    why = line;
  }
  for (const auto& [name, caption] : figures.specs) {
    if (fs::exists(figures.dir / "figures" / (name + ".png"))) continue;
    const std::string image = Figures::image_line(name, caption);
    const size_t at = report.find(image);
    if (at != std::string::npos) report.replace(at, image.size(), "(Figure " + name + " was not drawn: " + why + ")");
  }
  return report;
}

}  // namespace

// ---------------------------------------------------------------- hardware

std::string hardware_section(Results& r, const Plan& plan, Figures& figures) {
  std::ostringstream out;
  out << "## hardware: the simulators against measured steps (cpu executor)\n\n";
  const Cell *cal = nullptr, *measured = nullptr, *consumer = nullptr;
  for (const Cell* c : plan.cells_of("hardware"))
    (c->kind == "calibrate" ? cal : c->method == "measured" ? measured : consumer) = c;
  const json* jc = cal ? r.get(cal->key) : nullptr;
  const json* jm = measured ? r.get(measured->key) : nullptr;
  const json* jr = consumer ? r.get(consumer->key) : nullptr;
  if (!jc || !jm) {
    out << "Not measured: the calibration or the measurement cell did not finish (see `cells/*.failed.txt`).\n\n";
    return out.str();
  }
  const Budget& b = plan.budget;
  out << "The `cpu` executor ran each placement for real on two pinned cores: single on each core, round-robin, "
      << b.hw_methods.size() << " placers and " << b.hw_random << " seeded random placements per graph, "
      << b.hw_rounds << " round" << (b.hw_rounds == 1 ? "" : "s") << " of " << b.hw_repeats
      << " steps, in a shuffled order. Each simulator predicted the same placements on the calibrated cluster "
         "with the profiled cost table (`aware calibrate`, `aware validate`; scripts/hw-validate runs the same). "
         "These cells ran alone: nothing else shared the cores.\n\n";
  double gemm = 0;
  if (jc->contains("gemm"))
    for (const json& g : jc->at("gemm")) gemm = std::max(gemm, g.value("flops_per_s", 0.0));
  out << "Calibration: GEMM up to " << fmt("%.1f", gemm / 1e9) << " GFLOP/s, streaming "
      << fmt("%.1f", jc->value("memory_Bps", 0.0) / 1e9) << " GB/s; two cores at once stretch a GEMM ×"
      << fmt("%.2f", jc->value("concurrent_gemm_slowdown", 0.0)) << " and a streaming op ×"
      << fmt("%.2f", jc->value("concurrent_stream_slowdown", 0.0)) << ".\n\n";
  out << "| graph | simulator | placements | median abs error | mean | max | Kendall τ |\n"
         "|---|---|---:|---:|---:|---:|---:|\n";
  const auto rows = [&](const json& doc, const std::string& rename_analytic) {
    if (!doc.contains("summary")) return;
    for (const auto& [graph, sims] : doc.at("summary").items())
      for (const auto& [label, st] : sims.items()) {
        if (!rename_analytic.empty() && label != "analytic") continue;
        out << "| " << graph << " | " << (label == "analytic" && !rename_analytic.empty() ? rename_analytic : label)
            << " | " << st.value("count", 0) << " | " << fmt("%.1f%%", 100 * st.value("median_abs_rel_error", 0.0))
            << " | " << fmt("%.1f%%", 100 * st.value("mean_abs_rel_error", 0.0)) << " | "
            << fmt("%.1f%%", 100 * st.value("max_abs_rel_error", 0.0)) << " | "
            << fmt("%.3f", st.value("kendall_tau", 0.0)) << " |\n";
      }
  };
  rows(*jm, "");
  if (jr) rows(*jr, "analytic, slowdowns + copies on the consumer");
  out << "\nThe measurement's own spread (median IQR / median over a placement's steps): "
      << fmt("%.1f%%", 100 * jm->value("measurement_spread_median_iqr_over_median", 0.0))
      << ". A placement pair closer than that cannot be ranked reliably, which bounds τ.\n\n";
  // Measured against predicted, per simulator configuration.
  json spec = {{"title", "Measured vs predicted step time (cpu executor, 2 cores)"},
               {"x_label", "measured (ms)"}, {"y_label", "predicted (ms)"}, {"kind", "scatter"},
               {"diagonal", true}, {"series", json::array()}};
  const auto points = [&](const json& doc, const std::string& label, const std::string& name) {
    json pts = json::array();
    if (doc.contains("rows"))
      for (const json& row : doc.at("rows"))
        if (row.contains("predicted_us") && row.at("predicted_us").contains(label))
          pts.push_back({row.value("measured_us", 0.0) / 1000, row.at("predicted_us").at(label).get<double>() / 1000});
    if (!pts.empty()) spec["series"].push_back({{"name", name}, {"points", pts}});
  };
  points(*jm, "analytic", "analytic, calibrated");
  points(*jm, "simgrid", "SimGrid, calibrated");
  if (jr) points(*jr, "analytic", "analytic + slowdowns + copies on the consumer");
  if (!spec["series"].empty()) out << figures.add("hardware-scatter", "measured vs predicted", spec);
  return out.str();
}

// ---------------------------------------------------------------- mesh

std::string mesh_section(Results& r, const Plan& plan, Figures& figures) {
  std::ostringstream out;
  out << "## mesh: spiking networks on a neuromorphic mesh\n\n"
      << "Each network (`snn:...`, datasets/snn.h) is split into groups of 64 neurons; each mapping puts the groups "
         "onto the cores of a W x H mesh (256 neurons per core, XY routing) and is scored by the spike traffic times "
         "the hops it travels, and by the load of the busiest directed link (`aware mesh map`). Meshes up to 16,384 "
         "cores (the cluster form's limit) are also simulated: one biological step (1 ms) in the contention "
         "simulator. Best traffic x hops in bold.\n\n"
      << "| network | mesh | groups | method | traffic x hops (MB/s x hops) | vs sequential | busiest link (MB/s) | "
         "cores used | step (µs) | place (s) |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
  int cases = 0, fd_beats_simple = 0, fd_beats_metis = 0, fd_link_beats_simple = 0;
  int step_cases = 0, fd_step_beats_simple = 0;
  json categories = json::array();
  std::map<std::string, json> ratio_bars;
  const std::vector<std::string> order = {"sequential", "random", "metis", "hilbert", "force-directed"};
  for (const Cell* c : plan.cells_of("mesh")) {
    const json* j = r.get(c->key);
    if (!j || !j->contains("cases") || j->at("cases").empty()) {
      out << "| " << c->model << " | " << c->cluster << " | | not run | | | | | | |\n";
      continue;
    }
    const json& k = j->at("cases")[0];
    std::map<std::string, json> by;
    for (const json& m : k.at("results")) by[m.at("method").get<std::string>()] = m;
    const double seq = by.count("sequential") ? by["sequential"].value("traffic_hops", 0.0) : 0;
    const std::string winner = k.value("winner", "");
    for (const std::string& method : order) {
      if (!by.count(method)) continue;
      const json& m = by[method];
      const double th = m.value("traffic_hops", 0.0);
      const bool bold = method == winner;
      out << "| " << k.value("network", "") << " | " << k.value("mesh", "") << " | " << k.value("groups", 0) << " | "
          << method << " | " << (bold ? "**" : "") << fmt("%.4g", th / 1e6) << (bold ? "**" : "") << " | "
          << (seq > 0 ? fmt("%.2f", th / seq) : "-") << " | " << fmt("%.3g", m.value("max_link_Bps", 0.0) / 1e6)
          << " | " << m.value("cores_used", 0) << " | "
          << (m.contains("step_us") ? fmt("%.0f", m.at("step_us").get<double>()) : "-") << " | "
          << fmt("%.2f", m.value("place_s", 0.0)) << " |\n";
      if (seq > 0) ratio_bars[method].push_back(th / seq);
    }
    categories.push_back(k.value("network", "") + " on " + k.value("mesh", ""));
    if (by.count("force-directed") && by.count("sequential") && by.count("random")) {
      ++cases;
      const auto th = [&](const std::string& m) { return by[m].value("traffic_hops", 0.0); };
      const auto link = [&](const std::string& m) { return by[m].value("max_link_Bps", 0.0); };
      fd_beats_simple += th("force-directed") < th("sequential") && th("force-directed") < th("random");
      fd_link_beats_simple += link("force-directed") < link("sequential") && link("force-directed") < link("random");
      fd_beats_metis += by.count("metis") && th("force-directed") < th("metis");
      const auto step = [&](const std::string& m) { return by[m].value("step_us", -1.0); };
      if (step("force-directed") > 0 && step("sequential") > 0 && step("random") > 0) {
        ++step_cases;
        fd_step_beats_simple += step("force-directed") < step("sequential") && step("force-directed") < step("random");
      }
    }
  }
  out << "\n";
  if (cases > 0) {
    const std::string verdict = fd_beats_simple == cases ? "reproduced" : fd_beats_simple > 0 ? "partly" : "not reproduced";
    out << "**Claim (seed family F6): Hilbert placement refined by force-directed moves beats the simple mappings.** "
        << verdict << ": on traffic x hops, hilbert + force-directed beats both sequential and random in "
        << fd_beats_simple << " of " << cases << " cases, and METIS in " << fd_beats_metis << " of " << cases
        << "; on the busiest link it beats both simple mappings in " << fd_link_beats_simple << " of " << cases;
    if (step_cases > 0)
      out << ", and on the simulated step in " << fd_step_beats_simple << " of " << step_cases;
    out << ".\n\n";
  }
  if (!categories.empty()) {
    json series = json::array();
    for (const std::string& method : order)
      if (ratio_bars.count(method)) series.push_back({{"name", method}, {"values", ratio_bars[method]}});
    out << figures.add("mesh-traffic", "traffic x hops against sequential",
                       {{"title", "Traffic x hops of each mapping, relative to sequential (lower is better)"},
                        {"x_label", "network on mesh"}, {"y_label", "traffic x hops / sequential's"}, {"kind", "bar"},
                        {"width", std::max(1000, 220 * static_cast<int>(categories.size()))},
                        {"categories", categories}, {"series", series}});
  }
  return out.str();
}

std::string write_report_sections(const Plan& plan, const fs::path& dir, const std::string& plot,
                                  const std::string& gui) {
  Results results(plan);
  Figures figures;
  figures.dir = dir;
  std::ostringstream out;
  if (plan.has("table1") || plan.has("transfer")) out << claims_section(results, plan);
  if (plan.has("compare")) out << compare_section(results, plan, dir, gui);
  if (plan.has("fusion")) out << fusion_section(results, plan);
  if (plan.has("simgrid")) out << simgrid_section(results, plan, figures);
  if (plan.has("agents")) out << agents_section(results, plan, figures);
  if (plan.has("table1")) out << table1_section(results, plan, figures);
  if (plan.has("transfer")) out << transfer_section(results, plan, figures);
  if (plan.has("ablation")) out << ablation_section(results, plan);
  if (plan.has("strategies")) out << strategies_section(results, plan, figures);
  if (plan.has("hardware")) out << hardware_section(results, plan, figures);
  if (plan.has("mesh")) out << mesh_section(results, plan, figures);
  if (!plan.left_out.empty()) {
    out << "## left out\n\n";
    for (const std::string& why : plan.left_out) out << "- " << why << "\n";
    out << "\n";
  }
  return draw_figures(figures, plot, out.str());
}

}  // namespace aware::cli::reproduce
