// aware reproduce: the report, from the finished cells. Each table's section
// reads its cells' JSON (and learning curves); figures are chart specs drawn by
// aware-plot (and the compare charts by aware-gui). The sections are split over
// reproduce_report.cc (compare, fusion, SimGrid, agents), reproduce_report_tables.cc
// (the paper's tables and the claims) and reproduce_report_systems.cc (strategies,
// hardware, mesh); reproduce_report.h holds what they share.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/compare.h"
#include "experiments/reproduce_report.h"

namespace aware::reproduce::report {
namespace {

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

// ---------------------------------------------------------------- compare

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
      << "); the mean over seeds, the best in bold, `-` where the cell failed or ran out of memory; (N.NNx) is "
         "its gap, the step over the best certified lower bound without a solver (`aware bound`'s solver-free "
         "terms, docs/bounds.md), whose binding term the bound column names.\n\n";
  for (const std::string& cluster : distinct(cells, [](const Cell& c) { return c.cluster; })) {
    const CompareTable table = compare_table_of(r, cells, cluster);
    out << "### " << cluster << "\n\n| model | bound (binding) |";
    for (const std::string& m : table.methods) out << " " << m << " |";
    out << "\n|---|---:|";
    for (size_t i = 0; i < table.methods.size(); ++i) out << "---:|";
    out << "\n";
    for (const CompareRow& row : table.rows) {
      const CertifiedBound* bound = certified_of(row.model, cluster);
      const double certified = bound ? bound->best_us() : 0;
      out << "| " << row.model << " | "
          << (certified > 0 ? fmt("%.1f", certified / 1000) + " (" + bound->binding() + ")" : "-") << " |";
      for (const MethodResult& m : row.results) {
        if (!m.ok()) {
          out << " - |";
          continue;
        }
        out << " " << fmt(m.method == row.winner ? "**%.1f**" : "%.1f", m.step_time_us / 1000)
            << (certified > 0 ? fmt(" (%.2fx)", m.step_time_us / certified) : "") << " |";
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
         "(the curve files; their final greedy placement, which the table counts, can be better) and the "
         "searches' best so far; a method without a curve is drawn dashed at its final result.\n\n"
      << "| model | method | step ms (mean ± std) | min – max | gap (step / certified bound) | wall-clock s (mean) |\n"
      << "|---|---|---:|---:|---:|---:|\n";
  std::string figure_lines;  // after the table, which one image line would cut in two
  for (const std::string& model : b.agent_models) {
    const CertifiedBound* certified = certified_of(model, b.agent_cluster);
    const double bound = certified ? certified->best_us() : 0;
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
        // Searches write their best-so-far curve too (`aware place --curve`);
        // cells made before that have none and are drawn as their final result.
        Curve c = r.curve(*key);
        if (!c.empty()) curves.push_back(std::move(c));
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
                                        ": best step time so far (agents: best sampled; mean over seeds, band = min to max); dashed: final results"},
                          {"x_label", "evaluations"}, {"y_label", "step time (ms)"}, {"kind", "line"},
                          {"series", series}});
    }
  }
  return out.str() + "\n" + figure_lines;
}

}  // namespace aware::reproduce::report

namespace aware::reproduce {

using namespace report;

std::string write_report_sections(const Plan& plan, const fs::path& dir, const std::string& plot,
                                  const std::string& gui) {
  Results results(plan);
  Figures figures;
  figures.dir = dir;
  std::ostringstream out;
  if (plan.has("table1") || plan.has("transfer") || plan.has("presets")) out << claims_section(results, plan);
  if (plan.has("compare")) out << compare_section(results, plan, dir, gui);
  if (plan.has("fusion")) out << fusion_section(results, plan);
  if (plan.has("simgrid")) out << simgrid_section(results, plan, figures);
  if (plan.has("agents")) out << agents_section(results, plan, figures);
  if (plan.has("table1")) out << table1_section(results, plan, figures);
  if (plan.has("presets")) out << presets_section(results, plan);
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

}  // namespace aware::reproduce
