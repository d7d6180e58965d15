// The compare runner behind `aware compare` and the GUI's comparison view: every
// requested method on every (model, device count), scored by one evaluator, with
// the lower bound of each row, and writers for text, Markdown, CSV and JSON.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

class ProgressObserver;

struct CompareRequest {
  // Model names: "nmt4" means "zoo:nmt4"; a name with ':' ("family:cifar10:3",
  // "zoo:gnmt") or a JSON file path goes to the loader unchanged.
  std::vector<std::string> models;
  // Loads a graph by the (possibly prefixed) name; null: aware::load_graph.
  std::function<OpGraph(const std::string&)> load_graph;
  // Cluster family: "k40x4" with devices {2, 4, 8} means presets k40x2, k40x4,
  // k40x8; any other preset or cluster file is cut to its first n devices
  // (restrict_devices). Empty `devices`: the cluster as it is.
  std::string cluster = "k40x4";
  std::vector<int> devices;
  // Method names from PlacerRegistry, or {"all"} for every baseline placer.
  std::vector<std::string> methods = {"all"};
  std::map<std::string, Options> method_options;  // per method, passed in PlaceContext
  // Strategy specs ("dp:ring", "hybrid:2xm-etf", "pipeline:4,micro=16"; see
  // strategies/strategy.h), each a column after the methods: the graph is
  // rewritten and the strategy's own placement scored. Its name is the spec.
  std::vector<std::string> strategies;
  std::string evaluator = "analytic";             // EvaluatorRegistry name
  Options evaluator_options;
  long long budget_evals = 0;  // for search methods; 0 = their default
  std::uint64_t seed = 1;
  ProgressObserver* progress = nullptr;  // may be null; also handed to search methods
  // A journal of finished cells (JSON lines), for runs that may be killed: each
  // cell is appended and flushed as it finishes, and a cell already in the
  // journal (same model, cluster, method, seed, budget, evaluator and options) is
  // taken from it instead of being run again. A torn last line is ignored.
  // Empty: no journal.
  std::string resume_path;
};

struct MethodResult {
  std::string method;
  // "ok" (feasible), "oom" (out of memory, or the graph cannot fit at all),
  // "infeasible" (another evaluator verdict), "error" (the method threw).
  std::string status;
  std::string reason;        // empty when ok
  double step_time_us = -1;  // evaluator's step time; < 0 when no placement was scored
  double place_time_s = 0;   // wall-clock time of Placer::place
  Placement placement;       // empty when the method threw
  bool ok() const { return status == "ok"; }
};

struct CompareRow {
  std::string model;    // graph name
  std::string cluster;  // cluster name actually used (e.g. "k40x8")
  int devices = 0;
  double batch = 0;           // samples per step (the global batch); 0 when the graph has none
  double lower_bound_us = 0;  // the best certified bound (core/bounds.h's certified_bound)
  std::string bound_name;     // which of its terms binds ("idle-ends", "critical-path", ...)
  std::vector<MethodResult> results;  // in CompareTable::methods order
  std::string winner;         // fastest feasible method; empty when none
  std::string error;          // the graph or cluster failed to load (then no results)
};

struct CompareTable {
  std::vector<std::string> methods;     // methods, then strategies (CompareRequest order)
  std::vector<std::string> strategies;  // which of `methods` are strategy specs
  std::string evaluator;  // Evaluator::describe()
  std::uint64_t seed = 1;
  long long budget_evals = 0;
  std::vector<CompareRow> rows;
  bool cancelled = false;  // the observer cancelled; rows hold what was done
  long long resumed_cells = 0;  // cells taken from CompareRequest::resume_path
};

// Runs the comparison. Throws ConfigError for an unknown method, model,
// evaluator or cluster preset (before any work); per-cell failures are recorded
// in the cell. The placers and evaluators must be registered (register_builtins()).
// Not thread-safe with itself on one observer.
CompareTable run_compare(const CompareRequest& request);

// Aligned plain-text tables: step time (ms, "OOM", "infeasible", "error") with
// the ratio to the lower bound, then placement times (s).
void write_compare_text(const CompareTable& table, std::ostream& out);
// The same as GitHub Markdown tables.
void write_compare_markdown(const CompareTable& table, std::ostream& out);
// One line per (row, method): model,cluster,devices,lower_bound_us,method,status,
// step_time_us,ratio_to_bound,place_time_s,winner,reason.
void write_compare_csv(const CompareTable& table, std::ostream& out);
nlohmann::json compare_to_json(const CompareTable& table);
// The table compare_to_json() wrote (placements are not stored: they stay empty).
// Throws ParseError naming `source` and the field that is missing or mistyped.
CompareTable compare_from_json(const nlohmann::json& doc, const std::string& source);

// The status of a scored placement: "ok" when feasible, else "oom" (a memory
// verdict) or "infeasible", with the evaluator's reason. Sets step_time_us too.
void record_step(const StepResult& step, MethodResult* result);

// Puts `result` (its method names the column) into the row for `model` on
// `cluster`: a new column when the table has no such method (the other rows
// get status "not run"), replacing the cell when it has. The row's winner is
// recomputed. Returns false, changing nothing, when no row matches.
// How a placement made elsewhere (by hand in the GUI) joins a comparison.
bool add_method_result(CompareTable& table, const std::string& model, const std::string& cluster,
                       const MethodResult& result);

}  // namespace aware
