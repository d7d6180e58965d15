// aware simulate
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli/cli_common.h"
#include "core/cost_model.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "core/lists.h"
#include "strategies/representative.h"

namespace aware::cli {
namespace {

struct SimulateArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  std::string placement = "single";
  EvaluatorChoice evaluator;  // --evaluator, --mode, --option
  std::string trace;
  std::string strategy;
  bool placement_given = false;
  long long seed = 1;
  bool json = false;
  bool representative = false;
};

// With --option costs=FILE: how much of this (graph, cluster) the table prices. A
// table made for another model matches nothing, and the step is then the
// roofline's: say so rather than only count the table's entries.
std::optional<CostTableCoverage> costs_coverage(const SimulateArgs& a, const OpGraph& graph,
                                                const Cluster& cluster, std::string* path) {
  const Options options = parse_kv(a.evaluator.options, "--option");
  const auto it = options.find("costs");
  if (it == options.end() || it->second.empty()) return std::nullopt;
  *path = it->second;
  return cost_table_coverage(read_cost_table_file(it->second), graph, cluster);
}

std::string coverage_line(const CostTableCoverage& c, const std::string& path, int ops) {
  std::string line = path + " priced " + std::to_string(c.pairs_from_table) + " of " +
                     std::to_string(c.pairs_total) + " (op, device) pairs; " +
                     std::to_string(c.ops_missed) + " of " + std::to_string(ops) +
                     " ops not profiled on some device";
  if (c.ops_unprofiled > 0) {
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%",
                  c.flops_total > 0 ? 100.0 * c.flops_unprofiled / c.flops_total : 0.0);
    line += " (" + std::string(share) + " of the FLOPs; " + std::to_string(c.ops_by_fit) +
            " priced by the table's per-type fits, " + std::to_string(c.ops_unprofiled - c.ops_by_fit) +
            " by the roofline)";
  }
  if (c.pairs_from_table == 0 && c.ops_by_fit == 0)
    line += " (no entry matches this graph: was the table made for another one?)";
  return line;
}

// --representative: one replica's pipeline, one micro-batch per stage, composed
// (strategies/representative.h), for 3d specs at thousands of devices.
void run_representative(const SimulateArgs& a) {
  if (a.strategy.empty()) throw ConfigError("--representative needs --strategy 3d:dp=D,tp=T,pp=P,...");
  if (a.placement_given) throw ConfigError("--placement and --strategy both give a placement: a strategy places its "
                                           "rewritten graph itself");
  if (!a.trace.empty()) throw ConfigError("--trace needs the full step; --representative does not build it");
  if (a.evaluator.name != "analytic")
    throw ConfigError("--representative composes the analytic simulator's blocks; --evaluator " + a.evaluator.name +
                      " runs the full step only");
  parse_strategy_spec(a.strategy);
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  const StepInputs inputs = load_step_inputs(a.graph, a.cluster, a.evaluator, "", static_cast<std::uint64_t>(a.seed), 0);
  StrategyContext context;
  context.evaluator = inputs.evaluator.get();
  context.seed = static_cast<std::uint64_t>(a.seed);
  const RepresentativeResult r =
      simulate_representative(inputs.original, inputs.cluster, a.strategy, *inputs.evaluator, context);
  const double peak = inputs.cluster.device(0).peak_flops;
  const double per_gpu = r.step_time_us > 0 ? r.flops / (r.step_time_us * 1e-6) / r.devices_used : 0;
  const double mfu = peak > 0 && r.step_time_us > 0 ? r.model_flops / (r.step_time_us * 1e-6) / r.devices_used / peak : 0;
  if (a.json) {
    nlohmann::json stages = nlohmann::json::array();
    for (const RepresentativeStage& s : r.stages)
      stages.push_back({{"first_device", s.first_device},       {"forward_us", s.forward_us},
                        {"backward_us", s.backward_us},         {"send_forward_us", s.send_forward_us},
                        {"send_backward_us", s.send_backward_us}, {"accumulate_us", s.accumulate_us},
                        {"exchange_us", s.exchange_us},         {"update_us", s.update_us},
                        {"passes_end_us", s.passes_end_us},     {"end_us", s.end_us},
                        {"in_flight", s.in_flight},             {"activation_bytes", s.activation_bytes},
                        {"peak_memory_bytes", s.peak_memory_bytes}});
    nlohmann::json out = {{"graph", inputs.original.name()},
                          {"cluster", inputs.cluster.name()},
                          {"spec", r.spec},
                          {"representative", true},
                          {"step_time_us", r.step_time_us},
                          {"ideal_us", r.ideal_us},
                          {"bubble_fraction", r.bubble_fraction},
                          {"global_batch", r.global_batch},
                          {"samples_per_s", r.step_time_us > 0 ? r.global_batch / (r.step_time_us * 1e-6) : 0},
                          {"flops", r.flops},
                          {"model_flops", r.model_flops},
                          {"tflops_per_device", per_gpu / 1e12},
                          {"mfu", mfu},
                          {"peak_memory_bytes", r.peak_memory_bytes},
                          {"device_memory_bytes", r.device_memory_bytes},
                          {"feasible", r.feasible},
                          {"infeasible_reason", r.infeasible_reason},
                          {"devices_used", r.devices_used},
                          {"ops_simulated", r.ops_simulated},
                          {"ops_represented", r.ops_represented},
                          {"stages", stages},
                          {"notes", r.notes},
                          {"evaluator_settings", inputs.evaluator->describe()}};
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("graph          %s (%d ops) on %s (%d devices)\n", inputs.original.name().c_str(),
              inputs.original.num_ops(), inputs.cluster.name().c_str(), inputs.cluster.num_devices());
  std::printf("strategy       %s, one representative pipeline\n", r.spec.c_str());
  for (const std::string& note : r.notes) std::printf("               %s\n", note.c_str());
  std::printf("evaluator      %s\n", inputs.evaluator->describe().c_str());
  std::printf("step           %.3f ms (%.1f samples/s)%s\n", r.step_time_us / 1e3,
              r.step_time_us > 0 ? r.global_batch / (r.step_time_us * 1e-6) : 0.0,
              r.feasible ? "" : ("  INFEASIBLE: " + r.infeasible_reason).c_str());
  std::printf("pipeline       bubble %.1f%% of the slowest stage's passes; %d micro-batches\n", 100 * r.bubble_fraction,
              r.micro);
  std::printf("throughput     %.1f TFLOP/s per device (recomputation counted), MFU %.1f%% of %.0f TFLOP/s\n",
              per_gpu / 1e12, 100 * mfu, peak / 1e12);
  std::printf("memory         %.2f GB on the fullest device of %.2f GB\n", r.peak_memory_bytes / 1e9,
              r.device_memory_bytes / 1e9);
  std::printf("%-6s %10s %10s %9s %9s %10s %10s %10s %6s %9s\n", "stage", "fwd_ms", "bwd_ms", "send_ms", "accum_ms",
              "ring_ms", "update_ms", "end_ms", "held", "peak_GB");
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const RepresentativeStage& s = r.stages[i];
    std::printf("%-6zu %10.3f %10.3f %9.3f %9.3f %10.3f %10.3f %10.3f %6d %9.2f\n", i, s.forward_us / 1e3,
                s.backward_us / 1e3, s.send_forward_us / 1e3, s.accumulate_us / 1e3, s.exchange_us / 1e3,
                s.update_us / 1e3, s.end_us / 1e3, s.in_flight, s.peak_memory_bytes / 1e9);
  }
}

void run_simulate(const SimulateArgs& a) {
  if (a.representative) return run_representative(a);
  check_distinct_files({{"--trace", a.trace}},
                       {{"--graph", a.graph}, {"--cluster", a.cluster}, {"--placement", a.placement}});
  prepare_output_path(a.trace, "--trace");
  if (!a.strategy.empty() && a.placement_given)
    throw ConfigError("--placement and --strategy both give a placement: a strategy places its "
                      "rewritten graph itself");
  if (!a.strategy.empty()) parse_strategy_spec(a.strategy);
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  const StepInputs inputs = load_step_inputs(a.graph, a.cluster, a.evaluator, a.strategy,
                                             static_cast<std::uint64_t>(a.seed), 0);
  const OpGraph& original = inputs.original;
  const Cluster& cluster = inputs.cluster;
  Evaluator* const evaluator = inputs.evaluator.get();
  const std::optional<StrategyResult>& strategy = inputs.strategy;
  const OpGraph& graph = inputs.graph();
  const Placement placement =
      strategy ? strategy->placement : resolve_placement(a.placement, graph, cluster);
  check_placement(graph, cluster, placement, strategy ? "strategy '" + a.strategy + "'" : a.placement);
  Trace trace;
  const StepResult result = evaluator->evaluate(graph, cluster, placement, &trace);  // util needs the timeline
  const LowerBound bound = lower_bound(graph, cluster);
  std::string costs_path;
  const std::optional<CostTableCoverage> coverage = costs_coverage(a, graph, cluster, &costs_path);
  if (!a.trace.empty()) write_json_file(a.trace, trace_to_chrome(graph, cluster, trace));
  if (a.json) {
    nlohmann::json out = step_result_json(result, cluster, bound);
    out["graph"] = graph.name();
    out["cluster"] = cluster.name();
    if (strategy) {
      out["strategy"] = strategy_json(*strategy, result);
    } else {
      out["placement"] = a.placement;
    }
    out["evaluator_settings"] = evaluator->describe();
    if (coverage) {
      out["cost_table"] = {{"file", costs_path},
                           {"pairs_from_table", coverage->pairs_from_table},
                           {"pairs_total", coverage->pairs_total},
                           {"ops_missed", coverage->ops_missed},
                           {"entries_unused", coverage->entries_unused}};
    }
    if (!a.trace.empty()) out["trace"] = a.trace;
    std::cout << out.dump(1) << "\n";
    return;
  }
  if (strategy) {
    std::printf("graph          %s (%d ops) on %s (%d devices)\n", original.name().c_str(),
                original.num_ops(), cluster.name().c_str(), cluster.num_devices());
    print_strategy_summary(*strategy, result);
  } else {
    std::printf("graph          %s (%d ops) on %s (%d devices), placement %s\n", graph.name().c_str(),
                graph.num_ops(), cluster.name().c_str(), cluster.num_devices(), a.placement.c_str());
  }
  std::printf("evaluator      %s\n", evaluator->describe().c_str());
  if (coverage) std::printf("cost table     %s\n", coverage_line(*coverage, costs_path, graph.num_ops()).c_str());
  print_step_result(result, cluster, bound, &trace);
  if (!a.trace.empty()) std::printf("trace          %s (open in Perfetto or chrome://tracing)\n", a.trace.c_str());
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* s = app.add_subcommand("simulate", "Simulate one training step of a placed graph");
  s->add_option("--graph", args->graph, graph_spec_help())->required();
  s->add_option("--cluster", args->cluster, "preset:NAME or a cluster file")->capture_default_str();
  s->add_option("--placement", args->placement, "single, round-robin or a placement file")
      ->capture_default_str()
      ->each([args](const std::string&) { args->placement_given = true; });
  s->add_option("--strategy", args->strategy,
                "Rewrite the graph by a parallel strategy and simulate its own placement "
                "(dp:4, hybrid:2xm-etf, pipeline:4,micro=16, ...; `aware strategy list`)");
  s->add_option("--seed", args->seed, "Seed (for a hybrid strategy's placer)")->capture_default_str();
  s->add_flag("--representative", args->representative,
              "With a 3d strategy: simulate one replica's pipeline, one micro-batch per stage, and compose the "
              "schedule (thousands of devices in seconds; docs/strategies.md)");
  add_evaluator_options(s, args->evaluator);
  s->add_option("--trace", args->trace, "Write a Chrome trace-event timeline here");
  s->add_flag("--json", args->json, "Print one JSON object");
  s->callback([args] { run_simulate(*args); });
}

}  // namespace aware::cli
