// aware strategy apply | list: parallel strategies as graph rewrites.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/cli_common.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "core/progress.h"
#include "datasets/load.h"
#include "strategies/strategy.h"

namespace aware::cli {

StrategyResult run_strategy_rewrite(const std::string& spec, const OpGraph& graph,
                                    const Cluster& cluster, Evaluator* evaluator,
                                    std::uint64_t seed, long long budget_evals) {
  StrategyContext context;
  context.evaluator = evaluator;
  context.seed = seed;
  context.budget_evals = budget_evals;
  StderrProgress progress;
  context.progress = &progress;
  StrategyResult result = apply_strategy(graph, cluster, spec, context);
  progress.finish();
  return result;
}

void print_strategy_summary(const StrategyResult& s, const StepResult& step) {
  std::printf("strategy       %s: %d replica(s) on %d device(s), %d ops after the rewrite\n",
              s.spec.c_str(), s.replicas, s.devices_used, s.graph.num_ops());
  if (s.global_batch > 0 && step.feasible && step.step_time_us > 0) {
    std::printf("global batch   %g samples per step, %.1f samples/s\n", s.global_batch,
                s.global_batch / (step.step_time_us * 1e-6));
  }
  for (const std::string& note : s.notes) std::printf("note           %s\n", note.c_str());
}

nlohmann::json strategy_json(const StrategyResult& s, const StepResult& step) {
  nlohmann::json j;
  j["spec"] = s.spec;
  j["replicas"] = s.replicas;
  j["devices_used"] = s.devices_used;
  j["ops"] = s.graph.num_ops();
  j["global_batch"] = s.global_batch;
  if (s.global_batch > 0 && step.feasible && step.step_time_us > 0)
    j["samples_per_s"] = s.global_batch / (step.step_time_us * 1e-6);
  j["notes"] = s.notes;
  return j;
}

namespace {

struct ApplyArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  std::string strategy;
  std::string evaluator = "analytic";
  std::string mode;
  std::vector<std::string> options;
  long long seed = 1;
  long long budget_evals = 0;
  std::string out;
  std::string trace;
  bool json = false;
};

void run_apply(const ApplyArgs& a) {
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.budget_evals < 0) throw ConfigError("--budget-evals must not be negative");
  parse_strategy_spec(a.strategy);  // a bad spec fails before anything is read or written
  const std::filesystem::path dir(a.out);
  if (std::filesystem::exists(dir) && !std::filesystem::is_directory(dir))
    throw ConfigError("-o " + a.out + " exists and is not a directory");
  const std::string graph_path = (dir / "graph.json").string();
  const std::string placement_path = (dir / "placement.json").string();
  const std::string summary_path = (dir / "strategy.json").string();
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  std::unique_ptr<Evaluator> evaluator = make_evaluator(a.evaluator, a.mode, a.options);
  const StrategyResult s = run_strategy_rewrite(a.strategy, graph, cluster, evaluator.get(),
                                                static_cast<std::uint64_t>(a.seed), a.budget_evals);
  Trace trace;
  const StepResult step =
      evaluator->evaluate(s.graph, cluster, s.placement, a.trace.empty() ? nullptr : &trace);
  const LowerBound bound = lower_bound(s.graph, cluster);
  // The directory and every file, or nothing new.
  const bool created = !std::filesystem::exists(dir);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw ConfigError("-o " + a.out + ": cannot create the directory: " + ec.message());
  try {
    prepare_output_path(graph_path, "-o");
    prepare_output_path(a.trace, "--trace");
    nlohmann::json summary = strategy_json(s, step);
    summary["graph"] = graph.name();
    summary["graph_source"] = graph.source();
    summary["cluster"] = cluster.name();
    summary["evaluator"] = evaluator->describe();
    summary["step"] = step_result_json(step, cluster, bound);
    summary["files"] = {{"graph", "graph.json"}, {"placement", "placement.json"}};
    std::vector<std::pair<std::string, std::string>> files = {
        {graph_path, graph_to_json(s.graph).dump(1) + "\n"},
        {placement_path, placement_to_json(s.graph, cluster, s.placement).dump(1) + "\n"},
        {summary_path, summary.dump(1) + "\n"}};
    if (!a.trace.empty())
      files.push_back({a.trace, trace_to_chrome(s.graph, cluster, trace).dump(1) + "\n"});
    write_files_atomic(files);
    if (a.json) {
      std::cout << summary.dump(1) << "\n";
      return;
    }
  } catch (...) {
    if (created) std::filesystem::remove_all(dir, ec);
    throw;
  }
  std::printf("graph          %s (%d ops) on %s (%d devices)\n", graph.name().c_str(),
              graph.num_ops(), cluster.name().c_str(), cluster.num_devices());
  print_strategy_summary(s, step);
  std::printf("evaluator      %s\n", evaluator->describe().c_str());
  print_step_result(step, cluster, bound);
  std::printf("wrote          %s, %s, %s\n", graph_path.c_str(), placement_path.c_str(),
              summary_path.c_str());
}

}  // namespace

void add_strategy_commands(CLI::App& app) {
  CLI::App* st = app.add_subcommand(
      "strategy", "Parallel strategies as graph rewrites: data parallel, hybrid, pipeline, ...");
  st->require_subcommand(1);
  auto args = std::make_shared<ApplyArgs>();
  CLI::App* ap = st->add_subcommand(
      "apply", "Rewrite a graph by a strategy; write the rewritten graph, its placement and a summary");
  ap->add_option("--graph", args->graph, kGraphSpecHelp)->required();
  ap->add_option("--cluster", args->cluster, "preset:NAME or a cluster file")->capture_default_str();
  ap->add_option("--strategy", args->strategy, "Strategy spec (`aware strategy list`)")->required();
  ap->add_option("--evaluator", args->evaluator,
                 registered_names_help("Evaluator", EvaluatorRegistry::instance().names(), "evaluators"))
      ->capture_default_str();
  ap->add_option("--mode", args->mode, "Analytic mode: contention (default) or placeto");
  ap->add_option("--option", args->options, "Evaluator option KEY=VALUE (repeatable)");
  ap->add_option("--seed", args->seed, "Seed (for a hybrid's placer)")->capture_default_str();
  ap->add_option("--budget-evals", args->budget_evals, "Evaluations for a hybrid's search placer");
  ap->add_option("-o,--output", args->out,
                 "Directory for graph.json, placement.json and strategy.json")
      ->required();
  ap->add_option("--trace", args->trace, "Write a Chrome trace of the step here");
  ap->add_flag("--json", args->json, "Print the summary as one JSON object");
  ap->callback([args] { run_apply(*args); });

  auto json = std::make_shared<bool>(false);
  CLI::App* ls = st->add_subcommand("list", "The strategy kinds and their options");
  ls->add_flag("--json", *json, "Print JSON");
  ls->callback([json] {
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& [kind, help] : strategy_kinds()) out.push_back({{"kind", kind}, {"spec", help}});
      std::cout << out.dump(1) << "\n";
      return;
    }
    for (const auto& [kind, help] : strategy_kinds()) std::printf("%-10s %s\n", kind.c_str(), help.c_str());
    std::printf("(docs/strategies.md has the cost model of each)\n");
  });
}

}  // namespace aware::cli
