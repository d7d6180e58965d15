// Helpers shared by the `aware` subcommands.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/formats.h"  // write_json_file
#include "core/graph_algorithms.h"
#include "core/lists.h"  // split_list, parse_int_list
#include "core/op_graph.h"
#include "core/placement.h"
#include "core/units.h"
#include "datasets/model_import.h"
#include "strategies/strategy.h"  // format_bytes: the subcommands print sizes in BytesStyle::kTable

namespace aware::cli {

// Each subcommand file adds itself to the app.
void add_graph_commands(CLI::App& app);
void add_cluster_commands(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_bench_commands(CLI::App& app);
void add_place_commands(CLI::App& app);  // place + compare (with the placers)
void add_fuse_commands(CLI::App& app);   // graph fusion report (agents/fusion)
void add_search_commands(CLI::App& app); // search + pretrain (agents/rl, LibTorch)
void add_list_command(CLI::App& app);    // list evaluators | placers | agents | plugins
void add_bound_command(CLI::App& app);   // bound: certified lower bounds (core/bounds.h, agents/exact)
void add_costs_commands(CLI::App& app);  // costs fit: per-op-type fits for a cost table
void add_hw_commands(CLI::App& app);     // calibrate + validate (hw/, with the placers)
void add_measure_command(CLI::App& app);  // measure: the real LibTorch step (hw/torch_step.h)
void add_strategy_commands(CLI::App& app);  // strategy apply | list (strategies/)
void add_reproduce_command(CLI::App& app);  // reproduce: the README's experiments as cells
void add_mesh_commands(CLI::App& app);      // mesh map: spiking networks on a neuromorphic mesh
void add_trace_commands(CLI::App& app);     // trace export: Chakra execution traces, Chrome timelines

// --batch, --optimizer and --input-shape NAME=AxBx... (repeatable) as the model
// importers take them; ConfigError naming the --input-shape item that is bad.
ModelImportOptions model_import_options(double batch, const std::string& optimizer,
                                        const std::vector<std::string>& input_shapes);

// Applies a strategy spec for a command's --strategy (progress on stderr).
StrategyResult run_strategy_rewrite(const std::string& spec, const OpGraph& graph,
                                    const Cluster& cluster, Evaluator* evaluator,
                                    std::uint64_t seed, long long budget_evals);
// "strategy ..., global batch ..., note ..." lines on stdout.
void print_strategy_summary(const StrategyResult& strategy, const StepResult& step);
nlohmann::json strategy_json(const StrategyResult& strategy, const StepResult& step);

// What --evaluator, --mode and --option choose, as the user typed them.
struct EvaluatorChoice {
  std::string name = "analytic";     // a registered evaluator
  std::string mode;                  // the analytic simulator's mode; empty: its default
  std::vector<std::string> options;  // KEY=VALUE, one an --option
};

// Adds --evaluator (its help: `label`, then the registered names), --mode and
// --option to `command`, bound to `choice`, which must outlive the parse.
void add_evaluator_options(CLI::App* command, EvaluatorChoice& choice,
                           const std::string& label = "Evaluator");

// The evaluator's options: the --option pairs, with --mode as "mode" when given.
// Throws ConfigError for an --option that is not KEY=VALUE.
Options evaluator_options(const EvaluatorChoice& choice);

// What simulate and place run on: the graph and cluster of --graph and --cluster,
// the evaluator of --evaluator/--mode/--option and, with --strategy, the graph
// rewritten by the strategy (which also places it).
struct StepInputs {
  OpGraph original;  // the graph as loaded, before any strategy
  Cluster cluster;
  std::unique_ptr<Evaluator> evaluator;
  std::optional<StrategyResult> strategy;  // set when a strategy spec was given
  // The graph to place and evaluate: the rewritten one under a strategy.
  const OpGraph& graph() const { return strategy ? strategy->graph : original; }
};

// Loads the graph, then the cluster, then makes the evaluator and, when
// `strategy_spec` is not empty, applies it (run_strategy_rewrite, with `seed`
// and `budget_evals`). Throws what load_graph, load_cluster, make_evaluator and
// the strategy throw (ParseError, ConfigError, GraphError, DeviceError).
StepInputs load_step_inputs(const std::string& graph_spec, const std::string& cluster_spec,
                            const EvaluatorChoice& evaluator, const std::string& strategy_spec,
                            std::uint64_t seed, long long budget_evals);

// "LABEL: a, b, c (options: `aware list KIND`)", for --help texts built from a registry.
std::string registered_names_help(const std::string& label, const std::vector<std::string>& names,
                                  const std::string& list_kind);

// Option checks in the place of CLI::Range, whose message reads "Value abc not
// in range 1 to 10" for a word and lets "nan" through a floating range:
// whole_range refuses anything but a whole number (naming it), then the range;
// number_range refuses anything but a finite number, then the range.
CLI::Validator whole_range(long long min, long long max);
CLI::Validator number_range(double min, double max);

// The help text of every --graph option: what a graph spec may be, with the
// zoo's model names from the zoo itself.
const std::string& graph_spec_help();

// The format of a results table: --json wins, then an explicit --format, then the
// extension of -o (.md, .csv, .json, .txt for "table"), else "table". Throws
// ConfigError for an unknown format, a --json that contradicts --format, an -o
// extension that contradicts either, or an unknown -o extension without --format.
std::string table_format(const std::string& format, bool json, const std::string& out);


// "single", "round-robin" or a placement JSON file.
Placement resolve_placement(const std::string& spec, const OpGraph& graph, const Cluster& cluster);

// Creates an evaluator by name with "mode" and KEY=VALUE options.
std::unique_ptr<Evaluator> make_evaluator(const std::string& name, const std::string& mode,
                                          const std::vector<std::string>& options);
// The same for what --evaluator, --mode and --option chose.
std::unique_ptr<Evaluator> make_evaluator(const EvaluatorChoice& choice);


nlohmann::json step_result_json(const StepResult& result, const Cluster& cluster,
                                const LowerBound& bound);
// Prints the result as a table on stdout. With the step's `trace`, a device's util
// is the share of the step in which any of its streams runs an op (at most 100%);
// without one, its busy time (both streams summed) over the step, which can pass
// 100% (a note says so).
void print_step_result(const StepResult& result, const Cluster& cluster, const LowerBound& bound,
                       const Trace* trace = nullptr);


}  // namespace aware::cli
