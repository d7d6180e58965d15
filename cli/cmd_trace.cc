// aware trace export: one simulated (or, on a hardware evaluator, measured) step
// written as a trace other tools read: Chakra execution traces, one .et file per
// device (datasets/chakra.h), or a Chrome trace-event timeline.
#include <cstdio>
#include <iostream>

#include "cli/cli_common.h"
#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#ifdef AWARE_HAVE_CHAKRA
#include "datasets/chakra.h"
#endif

namespace aware::cli {
namespace {

struct TraceExportArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  std::string placement = "single";
  std::string strategy;
  long long seed = 1;
  EvaluatorChoice evaluator;
  std::string format = "chakra";
  std::string out;
  std::string prefix;
  std::string collectives = "node";
  bool json = false;
};

void run_trace_export(const TraceExportArgs& a) {
  if (a.format != "chakra" && a.format != "chrome")
    throw ConfigError("--format must be chakra or chrome, got '" + a.format + "'");
#ifndef AWARE_HAVE_CHAKRA
  if (a.format == "chakra")
    throw ConfigError("this build has no Chakra writer (install protobuf-compiler and libprotobuf-dev, then rebuild)");
#endif
  if (a.out.empty()) throw ConfigError("-o is required: a folder (chakra) or a file (chrome)");
  if (a.collectives != "node" && a.collectives != "p2p")
    throw ConfigError("--collectives must be node or p2p, got '" + a.collectives + "'");
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.format == "chrome") prepare_required_output_path(a.out, "-o");
  if (a.format == "chakra") {
    check_distinct_files({{"-o", a.out}}, {{"--graph", a.graph}, {"--cluster", a.cluster}, {"--placement", a.placement}});
    create_output_folder(a.out, "-o", a.out);
  }
  const StepInputs inputs = load_step_inputs(a.graph, a.cluster, a.evaluator, a.strategy,
                                             static_cast<std::uint64_t>(a.seed), 0);
  const OpGraph& graph = inputs.graph();
  const Placement placement =
      inputs.strategy ? inputs.strategy->placement : resolve_placement(a.placement, graph, inputs.cluster);
  check_placement(graph, inputs.cluster, placement, a.placement);
  Trace trace;
  const StepResult result = inputs.evaluator->evaluate(graph, inputs.cluster, placement, &trace);
  if (!result.feasible) throw ConfigError("the step is not feasible: " + result.infeasible_reason);
  nlohmann::json out = {{"graph", graph.name()},        {"ops", graph.num_ops()},
                        {"cluster", inputs.cluster.name()}, {"evaluator", inputs.evaluator->describe()},
                        {"step_us", result.step_time_us}, {"format", a.format}};
  if (a.format == "chrome") {
    write_json_file(a.out, trace_to_chrome(graph, inputs.cluster, trace));
    out["written"] = a.out;
  } else {
#ifdef AWARE_HAVE_CHAKRA
    const std::string prefix = a.prefix.empty() ? graph.name() : a.prefix;
    const ChakraExport written = write_chakra_traces(graph, inputs.cluster, placement, trace, result.step_time_us,
                                                     inputs.evaluator->describe(), a.out, prefix,
                                                     a.collectives == "node");
    out["files"] = written.files;
    out["collectives"] = written.collectives;
    out["nodes"] = written.nodes;
    out["comm_pairs"] = written.comm_pairs;
#endif
  }
  if (a.json) {
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("step           %s on %s (%s)\n", format_ms(result.step_time_us).c_str(), inputs.cluster.name().c_str(),
              inputs.evaluator->describe().c_str());
  if (a.format == "chrome") {
    std::printf("wrote          %s (open in Perfetto or chrome://tracing)\n", a.out.c_str());
  } else {
    std::printf("wrote          %zu Chakra traces in %s: %d nodes, %d send/receive pairs, %d collective nodes\n",
                out["files"].size(), a.out.c_str(), out["nodes"].get<int>(), out["comm_pairs"].get<int>(),
                out["collectives"].get<int>());
  }
}

}  // namespace

void add_trace_commands(CLI::App& app) {
  CLI::App* trace = app.add_subcommand("trace", "Write a step as a trace other tools read");
  trace->require_subcommand(1);
  auto args = std::make_shared<TraceExportArgs>();
  CLI::App* e = trace->add_subcommand(
      "export", "Simulate (or run) one step and write it: --format chakra (one .et per device, for ASTRA-sim and "
                "Chakra's tools) or chrome (a trace-event timeline)");
  e->add_option("--graph", args->graph, graph_spec_help())->required();
  e->add_option("--cluster", args->cluster, "preset:NAME or a cluster file")->capture_default_str();
  e->add_option("--placement", args->placement, "single, round-robin or a placement file")->capture_default_str();
  e->add_option("--strategy", args->strategy, "Rewrite the graph by a parallel strategy and use its placement");
  e->add_option("--seed", args->seed, "Seed (for a hybrid strategy's placer)")->capture_default_str();
  add_evaluator_options(e, args->evaluator);
  e->add_option("--format", args->format, "chakra or chrome")->capture_default_str();
  e->add_option("-o,--output", args->out, "The folder for the .et files (chakra) or the file (chrome)")->required();
  e->add_option("--prefix", args->prefix, "Chakra file names: PREFIX.RANK.et (default: the graph's name)");
  e->add_option("--collectives", args->collectives,
                "node: each strategy collective (a bucket's ring, tree, ...) as one COMM_COLL_NODE per device, as "
                "ASTRA-sim reads them; p2p: its point-to-point steps as they are (an exact round trip)")
      ->capture_default_str();
  e->add_flag("--json", args->json, "Print one JSON object");
  e->callback([args] { run_trace_export(*args); });
}

}  // namespace aware::cli
