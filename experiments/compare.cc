#include "experiments/compare.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <map>
#include <iomanip>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agents/common/placer_common.h"
#include "agents/baselines/register.h"
#include "core/bounds.h"
#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/placer.h"
#include "strategies/strategy.h"
#include "core/progress.h"
#include "datasets/load.h"

namespace aware {
namespace {

// "k40x4" + 8 -> the "k40x8" preset when there is one; otherwise the first n
// devices of the named cluster.
Cluster cluster_for(const std::string& family, int devices) {
  if (devices <= 0) return load_cluster(family);
  std::smatch m;
  static const std::regex sized("^(preset:)?(.*x)([0-9]+)$");
  if (std::regex_match(family, m, sized)) {
    const std::string candidate = m[2].str() + std::to_string(devices);
    const std::vector<std::string> presets = cluster_preset_names();
    if (std::find(presets.begin(), presets.end(), candidate) != presets.end())
      return make_cluster_preset(candidate);
  }
  Cluster full = load_cluster(family);
  if (full.num_devices() == devices) return full;
  return restrict_devices(full, devices);
}

std::string graph_spec(const std::string& model) {
  return model.find(':') != std::string::npos || model.find('/') != std::string::npos ||
                 model.find(".json") != std::string::npos
             ? model
             : "zoo:" + model;
}

std::string format_fixed(double value, int decimals) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(decimals) << value;
  return s.str();
}

std::string step_cell(const CompareRow& row, const MethodResult& r) {
  if (r.status == "oom") return "OOM";
  if (r.status == "infeasible") return "infeasible";
  if (r.status == "error") return "error";
  if (r.status == "not run") return "-";  // a column added for another row (add_method_result)
  std::string cell = format_fixed(r.step_time_us / 1000.0, 3);
  if (row.lower_bound_us > 0) cell += " (" + format_fixed(r.step_time_us / row.lower_bound_us, 2) + "x)";
  if (r.method == row.winner) cell += " *";
  return cell;
}

// Rows of cells -> aligned text or Markdown.
void write_grid(const std::vector<std::vector<std::string>>& grid, bool markdown, std::ostream& out) {
  if (grid.empty()) return;
  std::vector<size_t> width(grid[0].size(), 0);
  for (const auto& row : grid)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (size_t r = 0; r < grid.size(); ++r) {
    for (size_t c = 0; c < grid[r].size(); ++c) {
      const std::string& cell = grid[r][c];
      if (markdown) out << "| ";
      // Numbers right-aligned, names left-aligned.
      const bool left = c < 2 || r == 0;
      if (!left) out << std::string(width[c] - cell.size(), ' ');
      out << cell;
      if (left) out << std::string(width[c] - cell.size(), ' ');
      out << (markdown ? " " : "  ");
    }
    if (markdown) out << "|";
    out << "\n";
    if (markdown && r == 0) {
      for (size_t c = 0; c < width.size(); ++c) out << "|" << std::string(width[c] + 2, '-');
      out << "|\n";
    }
  }
}

std::vector<std::vector<std::string>> step_grid(const CompareTable& table) {
  std::vector<std::vector<std::string>> grid;
  std::vector<std::string> header = {"model", "devices", "bound ms (gap: step / bound)"};
  for (const auto& m : table.methods) header.push_back(m);
  header.push_back("winner");
  grid.push_back(header);
  for (const CompareRow& row : table.rows) {
    std::vector<std::string> line = {row.model, std::to_string(row.devices),
                                     !row.error.empty()        ? "error"
                                     : row.lower_bound_us > 0 ? format_fixed(row.lower_bound_us / 1000.0, 3)
                                                              : "- (none for this evaluator)"};
    for (size_t i = 0; i < table.methods.size(); ++i)
      line.push_back(i < row.results.size() ? step_cell(row, row.results[i]) : "-");
    line.push_back(row.winner.empty() ? "-" : row.winner);
    grid.push_back(line);
  }
  return grid;
}

std::vector<std::vector<std::string>> time_grid(const CompareTable& table) {
  std::vector<std::vector<std::string>> grid;
  std::vector<std::string> header = {"model", "devices"};
  for (const auto& m : table.methods) header.push_back(m);
  grid.push_back(header);
  for (const CompareRow& row : table.rows) {
    std::vector<std::string> line = {row.model, std::to_string(row.devices)};
    for (size_t i = 0; i < table.methods.size(); ++i)
      line.push_back(i < row.results.size() && row.results[i].status != "error"
                         ? format_fixed(row.results[i].place_time_s, 3)
                         : "-");
    grid.push_back(line);
  }
  return grid;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c == '\n' ? ' ' : c;
  }
  return quoted + "\"";
}

// The resume journal: one JSON object per finished cell.
class CellJournal {
 public:
  CellJournal(const std::string& path, const std::string& settings) : path_(path), settings_(settings) {
    if (path_.empty()) return;
    std::ifstream in(path_);
    std::string line;
    long long number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty()) continue;
      try {
        const nlohmann::json cell = nlohmann::json::parse(line);
        cells_[cell.at("key").get<std::string>()] = cell;
      } catch (const std::exception&) {
        // A line torn by a kill (the start of a record: records begin with their
        // key): that cell runs again. Anything else is not our journal, and
        // appending records to someone's file would damage it.
        static const std::string kStart = "{\"key\":";
        const bool torn = line.compare(0, kStart.size(), kStart, 0, std::min(line.size(), kStart.size())) == 0;
        if (!torn)
          throw ConfigError("--resume " + path_ + ": line " + std::to_string(number) +
                            " is not a compare journal record ('" + line.substr(0, 40) +
                            (line.size() > 40 ? "...'" : "'") +
                            "): give a journal an earlier compare wrote, or a new file");
      }
    }
    // A kill mid-line leaves no newline: end that line so the next record stands alone.
    bool torn = false;
    {
      std::ifstream tail(path_, std::ios::binary | std::ios::ate);
      if (tail && tail.tellg() > 0) {
        tail.seekg(-1, std::ios::end);
        torn = tail.get() != '\n';
      }
    }
    out_.open(path_, std::ios::app);
    if (!out_) throw ConfigError("--resume " + path_ + ": cannot write there");
    if (torn) out_ << "\n";
  }
  std::string key(const std::string& model, const std::string& cluster, const std::string& method) const {
    return model + "|" + cluster + "|" + method + "|" + settings_;
  }
  bool find(const std::string& key, MethodResult* r) const {
    const auto it = cells_.find(key);
    if (it == cells_.end()) return false;
    const nlohmann::json& c = it->second;
    r->status = c.at("status").get<std::string>();
    r->reason = c.at("reason").get<std::string>();
    r->step_time_us = c.at("step_time_us").get<double>();
    r->place_time_s = c.at("place_time_s").get<double>();
    r->placement = Placement(c.at("placement").get<std::vector<int>>());
    return true;
  }
  void record(const std::string& key, const MethodResult& r) {
    if (path_.empty()) return;
    const nlohmann::json cell = {{"key", key},
                                 {"status", r.status},
                                 {"reason", r.reason},
                                 {"step_time_us", r.step_time_us},
                                 {"place_time_s", r.place_time_s},
                                 {"placement", r.placement.device_of_op}};
    out_ << cell.dump() << "\n";
    out_.flush();
    if (!out_) throw Error("--resume " + path_ + ": write failed (disk full?)");
  }
  long long reused = 0;

 private:
  std::string path_;
  std::string settings_;
  std::map<std::string, nlohmann::json> cells_;
  std::ofstream out_;
};

}  // namespace

// A scored cell: "ok", or "oom" / "infeasible" with the evaluator's reason.
void record_step(const StepResult& step, MethodResult* r) {
  r->step_time_us = step.step_time_us;
  if (step.feasible) {
    r->status = "ok";
    return;
  }
  r->reason = step.infeasible_reason;
  r->status = step.infeasible_reason.find("memory") != std::string::npos ? "oom" : "infeasible";
}

namespace {
// Bagging trains N different models (no exchange), so it is shown but never the
// winner: the others all train the one model of the step.
bool is_bagging(const CompareTable& table, const std::string& method) {
  return std::find(table.strategies.begin(), table.strategies.end(), method) != table.strategies.end() &&
         parse_strategy_spec(method).kind == "bagging";
}
}  // namespace

bool add_method_result(CompareTable& table, const std::string& model, const std::string& cluster,
                       const MethodResult& result) {
  const auto row = std::find_if(table.rows.begin(), table.rows.end(), [&](const CompareRow& r) {
    return r.model == model && r.cluster == cluster && r.error.empty();
  });
  if (row == table.rows.end()) return false;
  auto column = std::find(table.methods.begin(), table.methods.end(), result.method);
  if (column == table.methods.end()) {
    table.methods.push_back(result.method);
    for (CompareRow& r : table.rows)
      if (r.error.empty()) {
        MethodResult none;
        none.method = result.method;
        none.status = "not run";
        r.results.push_back(none);
      }
    column = table.methods.end() - 1;
  }
  const size_t c = static_cast<size_t>(column - table.methods.begin());
  if (row->results.size() <= c) row->results.resize(c + 1);
  row->results[c] = result;
  // The winner as run_compare picks it: the fastest feasible cell, never bagging.
  row->winner.clear();
  double best = 0;
  for (const MethodResult& r : row->results)
    if (r.ok() && !is_bagging(table, r.method) && (row->winner.empty() || r.step_time_us < best)) {
      best = r.step_time_us;
      row->winner = r.method;
    }
  return true;
}

CompareTable run_compare(const CompareRequest& request) {
  CompareTable table;
  table.seed = request.seed;
  table.budget_evals = request.budget_evals;
  if (request.budget_evals < 0)
    throw ConfigError("compare: budget must be >= 0 evaluations (0 = default)");
  for (const std::string& m : request.methods) {
    if (m == "all") {
      for (const std::string& name : baseline_placer_names())
        if (std::find(table.methods.begin(), table.methods.end(), name) == table.methods.end())
          table.methods.push_back(name);
    } else if (std::find(table.methods.begin(), table.methods.end(), m) == table.methods.end()) {
      PlacerRegistry::instance().create(m);  // throws ConfigError on an unknown name
      table.methods.push_back(m);
    }
  }
  for (const std::string& spec : request.strategies) {
    // Before any work, as `strategy apply` does: an unknown kind or option, and a
    // count, method or option value no graph could take ("dp:0").
    check_strategy_spec(spec);
    if (std::find(table.methods.begin(), table.methods.end(), spec) == table.methods.end()) {
      table.methods.push_back(spec);
      table.strategies.push_back(spec);
    }
  }
  if (table.methods.empty()) throw ConfigError("compare: no methods given");
  // Options for a method are checked against its registry entry before any work.
  for (const auto& [method, options] : request.method_options) {
    if (std::find(table.methods.begin(), table.methods.end(), method) != table.methods.end())
      PlacerRegistry::instance().check_options(method, options);
  }
  std::unique_ptr<Evaluator> evaluator =
      EvaluatorRegistry::instance().create(request.evaluator, request.evaluator_options);
  table.evaluator = evaluator->describe();
  // Everything besides model, cluster and method that decides a cell's result.
  nlohmann::json settings = {{"seed", request.seed},
                             {"budget_evals", request.budget_evals},
                             {"evaluator", table.evaluator},
                             {"method_options", request.method_options}};
  CellJournal journal(request.resume_path, settings.dump());

  std::vector<int> device_counts = request.devices;
  if (device_counts.empty()) device_counts.push_back(0);
  for (int n : device_counts)
    if (n < 0) throw ConfigError("compare: device count must be positive, got " + std::to_string(n));
  // Clusters first, so a bad preset fails before any placement work.
  std::vector<Cluster> clusters;
  for (int n : device_counts) clusters.push_back(cluster_for(request.cluster, n));

  const long long cells = static_cast<long long>(request.models.size() * clusters.size() *
                                                 table.methods.size());
  long long done = 0;
  const auto begin = std::chrono::steady_clock::now();
  auto report = [&](const std::string& task) {
    if (request.progress == nullptr) return;
    Progress p;
    p.task = task;
    p.done = done;
    p.total = cells;
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    p.eta_s = done > 0 ? p.elapsed_s / done * (cells - done) : -1;
    request.progress->on_progress(p);
  };

  // Every model loads before any cell runs: a misspelt name fails at once, with a
  // non-zero exit, instead of as an "error" cell after the work.
  std::vector<OpGraph> graphs;
  for (const std::string& model : request.models) {
    try {
      graphs.push_back(request.load_graph ? request.load_graph(graph_spec(model))
                                          : load_graph(graph_spec(model)));
    } catch (const Error& e) {
      throw ConfigError("compare: model '" + model + "': " + e.what());
    }
  }
  // The certified bound (docs/bounds.md) is a bound on the analytic simulator in
  // contention mode, with its cost table if it has one; other evaluators, Placeto's
  // mode and slowdown options below 1 get no bound (and no gap column).
  bool bound_holds = request.evaluator == "analytic";
  CostTable bound_table;
  for (const auto& [key, value] : request.evaluator_options) {
    if (key == "mode" && value != "contention") bound_holds = false;
    if ((key == "slowdown.compute" || key == "slowdown.memory") && !(std::strtod(value.c_str(), nullptr) >= 1))
      bound_holds = false;
    if (key == "costs") bound_table = read_cost_table_file(value);
  }
  if (bound_holds && least_stretch(bound_table) < 1) {
    auto copies = request.evaluator_options.find("copies");
    if (copies != request.evaluator_options.end() && copies->second == "consumer") bound_holds = false;
  }
  for (const OpGraph& graph : graphs) {
    for (const Cluster& cluster : clusters) {
      if (request.progress != nullptr && request.progress->cancelled()) {
        table.cancelled = true;
        table.resumed_cells = journal.reused;
        return table;
      }
      CompareRow row;
      row.model = graph.name();
      row.cluster = cluster.name();
      row.devices = cluster.num_devices();
      row.batch = graph.batch();
      if (bound_holds) {
        const OpCostMatrix costs(graph, cluster, bound_table.empty() ? nullptr : &bound_table);
        const CertifiedBound bound = certified_bound(graph, cluster, costs, least_stretch(bound_table));
        row.lower_bound_us = bound.best_us();
        row.bound_name = bound.binding();
      }
      std::string too_big;
      try {
        placing::check_graph_can_fit(graph, cluster);
      } catch (const ConfigError& e) {
        too_big = e.what();
      }
      double best = -1;
      for (const std::string& method : table.methods) {
        MethodResult r;
        r.method = method;
        report(method + " on " + graph.name() + " / " + cluster.name());
        const std::string cell_key = journal.key(graph.name(), cluster.name(), method);
        const bool strategy = std::find(table.strategies.begin(), table.strategies.end(),
                                        method) != table.strategies.end();
        if (journal.find(cell_key, &r)) {
          ++journal.reused;
        } else if (strategy) {
          // The rewrite and its own placement; the evaluator decides memory.
          StrategyContext context;
          context.evaluator = evaluator.get();
          context.seed = request.seed;
          context.budget_evals = request.budget_evals;
          context.progress = request.progress;
          const auto start = std::chrono::steady_clock::now();
          try {
            const StrategyResult applied = apply_strategy(graph, cluster, method, context);
            r.place_time_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            const StepResult s = evaluator->evaluate(applied.graph, cluster, applied.placement);
            record_step(s, &r);
          } catch (const Error& e) {
            r.status = "error";
            r.reason = e.what();
          }
          if (request.progress == nullptr || !request.progress->cancelled())
            journal.record(cell_key, r);
        } else if (!too_big.empty()) {
          r.status = "oom";
          r.reason = too_big;
        } else {
          PlaceContext context;
          context.evaluator = evaluator.get();
          context.seed = request.seed;
          context.budget_evals = request.budget_evals;
          context.progress = request.progress;
          auto opts = request.method_options.find(method);
          if (opts != request.method_options.end()) context.options = opts->second;
          const auto start = std::chrono::steady_clock::now();
          try {
            std::unique_ptr<Placer> placer = PlacerRegistry::instance().create(method);
            r.placement = placer->place(graph, cluster, context);
            r.place_time_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            check_placement(graph, cluster, r.placement, method);
            const StepResult s = evaluator->evaluate(graph, cluster, r.placement);
            record_step(s, &r);
          } catch (const Error& e) {
            r.place_time_s =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            r.status = "error";
            r.reason = e.what();
          }
          // Only a finished cell is recorded: a cancelled search's is not final.
          if (request.progress == nullptr || !request.progress->cancelled())
            journal.record(cell_key, r);
        }
        // Bagging trains N different models (no exchange), so it is shown but never the
        // winner: the others all train the one model of the step.
        const bool trains_same_model = !strategy || parse_strategy_spec(method).kind != "bagging";
        if (r.ok() && trains_same_model && (best < 0 || r.step_time_us < best)) {
          best = r.step_time_us;
          row.winner = method;
        }
        row.results.push_back(std::move(r));
        ++done;
      }
      table.rows.push_back(std::move(row));
    }
  }
  report("compare done");
  table.resumed_cells = journal.reused;
  return table;
}

void write_compare_text(const CompareTable& table, std::ostream& out) {
  out << "step time, ms (ratio to lower bound; * = winner) — evaluator: " << table.evaluator << "\n";
  write_grid(step_grid(table), false, out);
  if (!table.strategies.empty()) {
    out << "(strategies split the global batch, so they may beat the lower bound, which is for "
           "placements of the unsplit step)\n";
  }
  out << "\nplacement time, s\n";
  write_grid(time_grid(table), false, out);
  // Why cells failed, below the tables and each reason once: one cause (a graph
  // without a batch, say) shared by many cells would otherwise fill the screen.
  std::vector<std::pair<std::string, std::vector<std::string>>> reasons;  // reason, its cells
  const auto note = [&reasons](const std::string& reason, const std::string& cell) {
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == reason; });
    if (it == reasons.end()) it = reasons.insert(reasons.end(), {reason, {}});
    it->second.push_back(cell);
  };
  for (const CompareRow& row : table.rows) {
    if (!row.error.empty()) note(row.error, row.model);
    for (const MethodResult& r : row.results)
      if (!r.ok() && !r.reason.empty()) note(r.reason, row.model + " / " + row.cluster + " / " + r.method);
  }
  if (!reasons.empty()) out << "\n";
  for (const auto& [reason, cells] : reasons) {
    constexpr size_t kShown = 3;
    for (size_t i = 0; i < cells.size() && i < kShown; ++i) out << (i == 0 ? "" : ", ") << cells[i];
    if (cells.size() > kShown) out << " and " << cells.size() - kShown << " more";
    out << ": " << reason << "\n";
  }
}

void write_compare_markdown(const CompareTable& table, std::ostream& out) {
  out << "Step time, ms (ratio to lower bound; * = winner). Evaluator: " << table.evaluator
      << "\n\n";
  write_grid(step_grid(table), true, out);
  if (!table.strategies.empty()) {
    out << "\nStrategies split the global batch, so they may beat the lower bound, which is for "
           "placements of the unsplit step.\n";
  }
  out << "\nPlacement time, s\n\n";
  write_grid(time_grid(table), true, out);
}

void write_compare_csv(const CompareTable& table, std::ostream& out) {
  out << "model,cluster,devices,lower_bound_us,method,status,step_time_us,ratio_to_bound,"
         "place_time_s,winner,reason\n";
  for (const CompareRow& row : table.rows) {
    if (!row.error.empty()) {
      out << csv_field(row.model) << "," << csv_field(row.cluster) << "," << row.devices
          << ",,,error,,,,," << csv_field(row.error) << "\n";
      continue;
    }
    for (const MethodResult& r : row.results) {
      out << csv_field(row.model) << "," << csv_field(row.cluster) << "," << row.devices << ","
          << format_fixed(row.lower_bound_us, 3) << "," << csv_field(r.method) << "," << r.status << ",";
      if (r.step_time_us >= 0) out << format_fixed(r.step_time_us, 3);
      out << ",";
      if (r.ok() && row.lower_bound_us > 0) out << format_fixed(r.step_time_us / row.lower_bound_us, 4);
      out << "," << format_fixed(r.place_time_s, 6) << "," << (r.method == row.winner ? "1" : "0")
          << "," << csv_field(r.reason) << "\n";
    }
  }
}

nlohmann::json compare_to_json(const CompareTable& table) {
  nlohmann::json doc;
  doc["evaluator"] = table.evaluator;
  doc["seed"] = table.seed;
  doc["budget_evals"] = table.budget_evals;
  doc["methods"] = table.methods;
  doc["strategies"] = table.strategies;
  doc["cancelled"] = table.cancelled;
  doc["rows"] = nlohmann::json::array();
  for (const CompareRow& row : table.rows) {
    nlohmann::json j;
    j["model"] = row.model;
    j["cluster"] = row.cluster;
    j["devices"] = row.devices;
    j["lower_bound_us"] = row.lower_bound_us;
    j["bound"] = row.bound_name;
    if (row.batch > 0) j["batch"] = row.batch;
    j["winner"] = row.winner.empty() ? nlohmann::json() : nlohmann::json(row.winner);
    if (!row.error.empty()) j["error"] = row.error;
    j["results"] = nlohmann::json::array();
    for (const MethodResult& r : row.results) {
      nlohmann::json c;
      c["method"] = r.method;
      c["status"] = r.status;
      c["step_time_us"] = r.step_time_us >= 0 ? nlohmann::json(r.step_time_us) : nlohmann::json();
      c["ratio_to_bound"] = r.ok() && row.lower_bound_us > 0
                                ? nlohmann::json(r.step_time_us / row.lower_bound_us)
                                : nlohmann::json();
      c["place_time_s"] = r.place_time_s;
      if (r.ok() && row.batch > 0 && r.step_time_us > 0)
        c["samples_per_s"] = row.batch / (r.step_time_us * 1e-6);
      if (!r.reason.empty()) c["reason"] = r.reason;
      j["results"].push_back(c);
    }
    doc["rows"].push_back(j);
  }
  return doc;
}

CompareTable compare_from_json(const nlohmann::json& doc, const std::string& source) {
  auto fail = [&](const std::string& where) -> ParseError {
    return ParseError(source + ": " + where + " (a table of aware compare --format json)");
  };
  try {
    if (!doc.is_object() || !doc.contains("methods") || !doc.contains("rows"))
      throw fail("fields 'methods' and 'rows' are required");
    CompareTable table;
    table.methods = doc.at("methods").get<std::vector<std::string>>();
    if (doc.contains("strategies")) table.strategies = doc.at("strategies").get<std::vector<std::string>>();
    table.evaluator = doc.value("evaluator", "");
    table.seed = doc.value("seed", std::uint64_t{1});
    table.budget_evals = doc.value("budget_evals", 0LL);
    table.cancelled = doc.value("cancelled", false);
    int index = 0;
    for (const nlohmann::json& j : doc.at("rows")) {
      const std::string where = "row " + std::to_string(index++);
      CompareRow row;
      row.model = j.at("model").get<std::string>();
      row.cluster = j.value("cluster", "");
      row.devices = j.value("devices", 0);
      row.lower_bound_us = j.value("lower_bound_us", 0.0);
      row.bound_name = j.value("bound", std::string());
      row.batch = j.value("batch", 0.0);
      if (j.contains("winner") && j.at("winner").is_string()) row.winner = j.at("winner").get<std::string>();
      row.error = j.value("error", "");
      for (const nlohmann::json& c : j.at("results")) {
        MethodResult r;
        r.method = c.at("method").get<std::string>();
        r.status = c.at("status").get<std::string>();
        if (c.contains("step_time_us") && c.at("step_time_us").is_number())
          r.step_time_us = c.at("step_time_us").get<double>();
        r.place_time_s = c.value("place_time_s", 0.0);
        r.reason = c.value("reason", "");
        row.results.push_back(std::move(r));
      }
      if (row.results.size() != table.methods.size())
        throw fail(where + " (model '" + row.model + "'): field 'results' has " +
                   std::to_string(row.results.size()) + " entries for " +
                   std::to_string(table.methods.size()) + " methods");
      table.rows.push_back(std::move(row));
    }
    return table;
  } catch (const nlohmann::json::exception& e) {
    throw fail(std::string("a field is missing or of the wrong type: ") + e.what());
  }
}

}  // namespace aware
