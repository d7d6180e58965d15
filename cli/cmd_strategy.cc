// aware strategy apply | list: parallel strategies as graph rewrites.
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/cli_common.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "core/progress.h"
#include "core/units.h"
#include "datasets/load.h"
#include "strategies/representative.h"
#include "strategies/search.h"
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

// Before the work: -o must name a folder that exists or can be made, and that
// takes files. A folder the check makes is removed again (the run writes it at
// its end, or leaves nothing when it fails).
void check_output_dir(const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw ConfigError("-o " + out + " exists and is not a directory");
  fs::path top = fs::absolute(out, ec);  // the topmost folder the check will make
  while (!top.parent_path().empty() && top.parent_path() != top && !fs::exists(top.parent_path(), ec))
    top = top.parent_path();
  const bool created = create_output_folder(out, "-o", out);
  try {
    prepare_output_path((fs::path(out) / "graph.json").string(), "-o");
  } catch (...) {
    if (created) fs::remove_all(top, ec);
    throw;
  }
  if (created) fs::remove_all(top, ec);
}

// DIR/graph.json, placement.json, strategy.json (and the trace), all or none; a
// directory this call created is removed again when a write fails.
void write_strategy_dir(const std::string& out, const StrategyResult& s, const Cluster& cluster,
                        const nlohmann::json& summary, const std::string& trace_path,
                        const Trace& trace) {
  const std::filesystem::path dir(out);
  const bool created = create_output_folder(out, "-o", out);
  try {
    prepare_output_path((dir / "graph.json").string(), "-o");
    prepare_output_path(trace_path, "--trace");
    nlohmann::json doc = summary;
    doc["files"] = {{"graph", "graph.json"}, {"placement", "placement.json"}};
    std::vector<std::pair<std::string, std::string>> files = {
        {(dir / "graph.json").string(), graph_to_json(s.graph).dump(1) + "\n"},
        {(dir / "placement.json").string(),
         placement_to_json(s.graph, cluster, s.placement).dump(1) + "\n"},
        {(dir / "strategy.json").string(), doc.dump(1) + "\n"}};
    if (!trace_path.empty())
      files.push_back({trace_path, trace_to_chrome(s.graph, cluster, trace).dump(1) + "\n"});
    write_files_atomic(files);
  } catch (...) {
    std::error_code ec;
    if (created) std::filesystem::remove_all(dir, ec);
    throw;
  }
}

// "DIR/{graph,placement,strategy}.json", with one slash however DIR ends.
std::string files_in(const std::string& out) {
  return (std::filesystem::path(out) / "{graph,placement,strategy}.json").lexically_normal().string();
}

struct ApplyArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  std::string strategy;
  EvaluatorChoice evaluator;  // --evaluator, --mode, --option
  long long seed = 1;
  long long budget_evals = 0;
  std::string out;
  std::string trace;
  bool json = false;
};

void run_apply(const ApplyArgs& a) {
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.budget_evals < 0) throw ConfigError("--budget-evals must not be negative");
  check_strategy_spec(a.strategy);  // a bad spec fails before anything is read or written
  check_output_dir(a.out);
  check_distinct_files({{"--trace", a.trace}}, {{"--graph", a.graph}, {"--cluster", a.cluster}});
  prepare_output_path(a.trace, "--trace");
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  std::unique_ptr<Evaluator> evaluator = make_evaluator(a.evaluator);
  const StrategyResult s = run_strategy_rewrite(a.strategy, graph, cluster, evaluator.get(),
                                                static_cast<std::uint64_t>(a.seed), a.budget_evals);
  // Always traced: the util column is the share of the step each device is busy
  // on either stream, which the busy sums alone cannot tell.
  Trace trace;
  const StepResult step = evaluator->evaluate(s.graph, cluster, s.placement, &trace);
  const LowerBound bound = lower_bound(s.graph, cluster);
  nlohmann::json summary = strategy_json(s, step);
  summary["graph"] = graph.name();
  summary["graph_source"] = graph.source();
  summary["cluster"] = cluster.name();
  summary["evaluator"] = evaluator->describe();
  summary["step"] = step_result_json(step, cluster, bound);
  write_strategy_dir(a.out, s, cluster, summary, a.trace, trace);
  if (a.json) {
    std::cout << summary.dump(1) << "\n";
    return;
  }
  std::printf("graph          %s (%d ops) on %s (%d devices)\n", graph.name().c_str(),
              graph.num_ops(), cluster.name().c_str(), cluster.num_devices());
  print_strategy_summary(s, step);
  std::printf("evaluator      %s\n", evaluator->describe().c_str());
  print_step_result(step, cluster, bound, &trace);
  std::printf("wrote          %s\n", files_in(a.out).c_str());
}

struct SearchArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  std::string methods = "m-etf";
  std::string collectives = "ring,tree,ps,reduce";
  bool no_pipelines = false;
  bool overlap_off = false;
  bool three_d = false;
  bool representative = false;
  double budget_seconds = 0;
  int interleave = 1;
  std::string refine;
  long long budget_evals = 0;
  long long seed = 1;
  EvaluatorChoice evaluator;  // --evaluator, --mode, --option
  std::string out;
  bool json = false;
};

// --three-d --representative: the 3-D search priced by one representative
// pipeline per candidate (strategies/representative.h).
void run_search_representative(const SearchArgs& a) {
  if (!a.refine.empty() || a.budget_evals > 0 || !a.out.empty())
    throw ConfigError("--representative prices 3d candidates without building their steps: --refine, --budget-evals "
                      "and --output need the full rewrite (leave --representative out)");
  if (a.evaluator.name != "analytic")
    throw ConfigError("--representative composes the analytic simulator's blocks; --evaluator " + a.evaluator.name +
                      " runs full steps only");
  if (a.budget_seconds < 0) throw ConfigError("--budget-seconds must not be negative");
  if (a.interleave < 1) throw ConfigError("--interleave must be at least 1 (1: 1F1B only), got " + std::to_string(a.interleave));
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  std::unique_ptr<Evaluator> evaluator = make_evaluator(a.evaluator);
  ThreeDSearchOptions options;
  options.budget_seconds = a.budget_seconds;
  options.interleave = {1};
  if (a.interleave > 1) options.interleave.push_back(a.interleave);
  const ThreeDSearchResult r = search_three_d(graph, cluster, *evaluator, options);
  nlohmann::json doc;
  doc["graph"] = graph.name();
  doc["cluster"] = cluster.name();
  doc["evaluator"] = evaluator->describe();
  doc["representative"] = true;
  doc["seconds"] = r.seconds;
  doc["simulated"] = r.simulated;
  doc["candidates"] = nlohmann::json::array();
  for (const ThreeDCandidate& c : r.candidates) {
    nlohmann::json j{{"spec", c.spec}, {"status", c.status}, {"lower_bound_us", c.lower_bound_us}};
    if (!c.reason.empty()) j["reason"] = c.reason;
    if (c.status == "ok" || c.status == "oom") {
      const double step = c.result.step_time_us;
      j["step_time_us"] = step;
      j["tflops_per_device"] = c.tflops_per_device;
      j["mfu"] = c.mfu;
      j["peak_memory_bytes"] = c.result.peak_memory_bytes;
      j["bubble_fraction"] = c.result.bubble_fraction;
      j["tensor_parallel_share"] = c.result.tensor_parallel_us / step;
      j["pipeline_send_share"] = c.result.pipeline_send_us / step;
      j["data_parallel_share"] = c.result.data_parallel_us / step;
    }
    doc["candidates"].push_back(j);
  }
  if (r.best >= 0) {
    doc["best"] = r.candidates[r.best].spec;
    doc["best_step_time_us"] = r.candidates[r.best].result.step_time_us;
  }
  if (a.json) {
    std::cout << doc.dump(1) << "\n" << std::flush;
  } else {
    std::printf("graph          %s (%d ops, batch %s) on %s (%d devices)\n", graph.name().c_str(), graph.num_ops(),
                format_number(graph.batch()).c_str(), cluster.name().c_str(), cluster.num_devices());
    std::printf("evaluator      %s, one representative pipeline per candidate; %d simulated in %.1f s\n",
                evaluator->describe().c_str(), r.simulated, r.seconds);
    std::printf("%-58s %-6s %10s %8s %6s %7s %6s %6s %6s\n", "candidate", "status", "step ms", "TFLOP/s", "MFU",
                "peak GB", "tp %", "pp %", "dp %");
    int shown = 0, pruned = 0, untried = 0;
    std::vector<const ThreeDCandidate*> ranked;
    for (const ThreeDCandidate& c : r.candidates) {
      if (c.status == "ok" || c.status == "oom") ranked.push_back(&c);
      pruned += c.status.rfind("pruned", 0) == 0;
      untried += c.status == "not tried";
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const ThreeDCandidate* x, const ThreeDCandidate* y) {
      if ((x->status == "ok") != (y->status == "ok")) return x->status == "ok";
      return x->result.step_time_us < y->result.step_time_us;
    });
    for (const ThreeDCandidate* c : ranked) {
      const double step = c->result.step_time_us;
      std::printf("%-58s %-6s %10.1f %8.1f %5.1f%% %7.1f %5.1f%% %5.1f%% %5.1f%%\n", c->spec.c_str(), c->status.c_str(),
                  step / 1e3, c->tflops_per_device, 100 * c->mfu, c->result.peak_memory_bytes / 1e9,
                  100 * c->result.tensor_parallel_us / step, 100 * c->result.pipeline_send_us / step,
                  100 * c->result.data_parallel_us / step);
      if (++shown == 15) break;
    }
    std::printf("columns        TFLOP/s per device counts recomputation; MFU the model's FLOPs over the peak; tp, pp, dp: "
                "time in the tensor-parallel all-reduces, the pipeline's sends and the replicas' rings over the step "
                "(not all of it on the critical path)\n");
    std::printf("not simulated  %d pruned (memory, or a step bound no better than the best found), %d not tried (time "
                "budget)\n", pruned, untried);
    if (r.best >= 0)
      std::printf("best           %s: %s\n", r.candidates[r.best].spec.c_str(),
                  format_ms(r.candidates[r.best].result.step_time_us).c_str());
  }
  if (r.best < 0) throw Error("strategy search: no 3d candidate fits " + cluster.name());
}

void run_search(const SearchArgs& a) {
  if (a.representative) {
    if (!a.three_d) throw ConfigError("--representative prices 3d candidates: give --three-d with it");
    return run_search_representative(a);
  }
  if (a.budget_seconds != 0) throw ConfigError("--budget-seconds goes with --three-d --representative");
  if (a.interleave != 1) throw ConfigError("--interleave goes with --three-d --representative");
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.budget_evals < 0) throw ConfigError("--budget-evals must not be negative");
  if (!a.out.empty()) check_output_dir(a.out);
  StrategySearchOptions options;
  options.methods = split_list(a.methods);
  options.collectives = split_list(a.collectives);
  refuse_repeated(options.methods, "--methods");
  refuse_repeated(options.collectives, "--collectives");
  if (options.methods.empty())
    throw ConfigError("--methods '" + a.methods + "' names no placer: give one or more (`aware list placers`)");
  if (options.collectives.empty())
    throw ConfigError("--collectives '" + a.collectives +
                      "' names no collective, so there would be no data-parallel candidate: give one or "
                      "more (dp's collective= in `aware strategy list`), or leave the option out for all");
  options.pipelines = !a.no_pipelines;
  options.overlap_off = a.overlap_off;
  options.three_d = a.three_d;
  options.refine = a.refine;
  options.budget_evals = a.budget_evals;
  options.seed = static_cast<std::uint64_t>(a.seed);
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  std::unique_ptr<Evaluator> evaluator = make_evaluator(a.evaluator);
  StderrProgress progress;
  options.progress = &progress;
  const StrategySearchResult r = search_strategies(graph, cluster, *evaluator, options);
  progress.finish();
  nlohmann::json doc;
  doc["graph"] = graph.name();
  doc["cluster"] = cluster.name();
  doc["evaluator"] = evaluator->describe();
  doc["evaluations"] = r.evaluations;
  if (a.budget_evals > 0) doc["budget_evals"] = a.budget_evals;
  doc["not_tried"] = r.not_tried;
  if (!r.refine_skipped.empty()) doc["refine_skipped"] = r.refine_skipped;
  doc["batch"] = graph.batch();
  doc["candidates"] = nlohmann::json::array();
  for (const StrategyCandidate& c : r.candidates) {
    nlohmann::json j{{"spec", c.spec}, {"status", c.status}, {"replicas", c.replicas},
                     {"devices_used", c.devices_used}};
    j["step_time_us"] = c.step_time_us >= 0 ? nlohmann::json(c.step_time_us) : nlohmann::json();
    if (c.status == "ok" && graph.batch() > 0)
      j["samples_per_s"] = graph.batch() / (c.step_time_us * 1e-6);
    if (!c.reason.empty()) j["reason"] = c.reason;
    doc["candidates"].push_back(j);
  }
  if (r.best < 0) {
    if (a.json) std::cout << doc.dump(1) << "\n";
    throw Error("strategy search: no candidate was feasible on " + cluster.name());
  }
  doc["best"] = r.best_strategy.spec;
  doc["best_step_time_us"] = r.best_step_us;
  if (r.refined_from_us >= 0) {
    doc["refine"] = a.refine;
    doc["refined_from_us"] = r.refined_from_us;
  }
  if (!a.out.empty()) {
    Trace none;
    const StepResult step = evaluator->evaluate(r.best_strategy.graph, cluster, r.best_strategy.placement);
    nlohmann::json summary = strategy_json(r.best_strategy, step);
    summary["graph"] = graph.name();
    summary["cluster"] = cluster.name();
    summary["evaluator"] = evaluator->describe();
    summary["step"] = step_result_json(step, cluster, lower_bound(r.best_strategy.graph, cluster));
    summary["search"] = doc;
    write_strategy_dir(a.out, r.best_strategy, cluster, summary, "", none);
  }
  if (a.json) {
    std::cout << doc.dump(1) << "\n";
    return;
  }
  const bool batched = graph.batch() > 0;
  std::printf("graph          %s (%d ops, %s) on %s (%d devices)\n", graph.name().c_str(), graph.num_ops(),
              batched ? ("batch " + format_number(graph.batch())).c_str() : "no batch recorded",
              cluster.name().c_str(), cluster.num_devices());
  std::printf("evaluator      %s, %lld evaluations%s\n", evaluator->describe().c_str(), r.evaluations,
              a.budget_evals > 0 ? (" of a budget of " + std::to_string(a.budget_evals)).c_str() : "");
  std::vector<const StrategyCandidate*> ranked;
  for (const StrategyCandidate& c : r.candidates) ranked.push_back(&c);
  std::stable_sort(ranked.begin(), ranked.end(), [](const StrategyCandidate* x, const StrategyCandidate* y) {
    const bool xo = x->status == "ok", yo = y->status == "ok";
    if (xo != yo) return xo;
    return xo && x->step_time_us < y->step_time_us;
  });
  std::printf("%-32s %-10s %12s %12s\n", "candidate", "status", "step ms", "samples/s");
  for (const StrategyCandidate* c : ranked) {
    if (c->status == "ok" && batched) {
      std::printf("%-32s %-10s %12.3f %12.1f\n", c->spec.c_str(), c->status.c_str(), c->step_time_us / 1e3,
                  graph.batch() / (c->step_time_us * 1e-6));
    } else if (c->status == "ok") {
      std::printf("%-32s %-10s %12.3f %12s\n", c->spec.c_str(), c->status.c_str(), c->step_time_us / 1e3, "-");
    } else {
      std::printf("%-32s %-10s %12s %12s\n", c->spec.c_str(), c->status.c_str(), "-", "-");
    }
  }
  for (const std::string& spec : r.not_tried)
    std::printf("%-32s %-10s %12s %12s\n", spec.c_str(), "not tried", "-", "-");
  // Why candidates failed, each reason once: reasons that differ only in the
  // spec they name are one reason.
  std::vector<std::pair<std::string, std::vector<const StrategyCandidate*>>> reasons;
  for (const StrategyCandidate& c : r.candidates) {
    if (c.status == "ok" || c.reason.empty()) continue;
    std::string key = c.status + ":" + c.reason;
    for (std::size_t at; (at = key.find("'" + c.spec + "'")) != std::string::npos;)
      key.replace(at, c.spec.size() + 2, "'*'");
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == key; });
    if (it == reasons.end()) it = reasons.insert(reasons.end(), {key, {}});
    it->second.push_back(&c);
  }
  for (const auto& [key, group] : reasons) {
    std::printf("%-14s %s", group.front()->status.c_str(), group.front()->reason.c_str());
    if (group.size() > 1) std::printf(" (and alike for %zu more candidates)", group.size() - 1);
    std::printf("\n");
  }
  if (!r.not_tried.empty()) {
    std::printf("not tried      %zu of %zu candidates: the budget of %lld evaluations ran out (candidates go in "
                "order of promise: each kind's most parallel form first)\n",
                r.not_tried.size(), r.not_tried.size() + r.candidates.size(), a.budget_evals);
  }
  std::printf("best           %s: %s", r.best_strategy.spec.c_str(), format_ms(r.best_step_us).c_str());
  if (r.refined_from_us >= 0)
    std::printf(" (%s before refinement by %s)", format_ms(r.refined_from_us).c_str(), a.refine.c_str());
  std::printf("\n");
  if (!r.refine_skipped.empty()) std::printf("not refined    %s\n", r.refine_skipped.c_str());
  if (!a.out.empty()) std::printf("wrote          %s\n", files_in(a.out).c_str());
}

}  // namespace

void add_strategy_commands(CLI::App& app) {
  CLI::App* st = app.add_subcommand(
      "strategy", "Parallel strategies as graph rewrites: data parallel, hybrid, pipeline, ...");
  st->require_subcommand(1);
  auto args = std::make_shared<ApplyArgs>();
  CLI::App* ap = st->add_subcommand(
      "apply", "Rewrite a graph by a strategy; write the rewritten graph, its placement and a summary");
  ap->add_option("--graph", args->graph, graph_spec_help())->required();
  ap->add_option("--cluster", args->cluster, "preset:NAME or a cluster file")->capture_default_str();
  ap->add_option("--strategy", args->strategy, "Strategy spec (`aware strategy list`)")->required();
  add_evaluator_options(ap, args->evaluator);
  ap->add_option("--seed", args->seed, "Seed (for a hybrid's placer)")->capture_default_str();
  ap->add_option("--budget-evals", args->budget_evals, "Evaluations for a hybrid's search placer");
  ap->add_option("-o,--output", args->out,
                 "Directory for graph.json, placement.json and strategy.json")
      ->required();
  ap->add_option("--trace", args->trace, "Write a Chrome trace of the step here");
  ap->add_flag("--json", args->json, "Print the summary as one JSON object");
  ap->callback([args] { run_apply(*args); });

  auto sa = std::make_shared<SearchArgs>();
  CLI::App* se = st->add_subcommand(
      "search", "Try replica counts x collectives x hybrids x pipelines and placements; keep the fastest");
  se->add_option("--graph", sa->graph, graph_spec_help())->required();
  se->add_option("--cluster", sa->cluster, "preset:NAME or a cluster file")->capture_default_str();
  se->add_option("--methods", sa->methods,
                 "Placers for the unsplit step (place:METHOD) and inside hybrid groups")
      ->capture_default_str();
  se->add_option("--collectives", sa->collectives, "Collectives for the dp candidates")
      ->capture_default_str();
  se->add_flag("--no-pipelines", sa->no_pipelines, "Leave pipeline candidates out");
  se->add_flag("--overlap-off", sa->overlap_off, "Also try each dp candidate with overlap=off");
  se->add_flag("--three-d", sa->three_d,
               "Also try 3d:dp=D,tp=T,pp=P over every device (T up to 8, micro 4P in 1F1B order, "
               "ZeRO-1 or none, each recompute): for the language models");
  se->add_flag("--representative", sa->representative,
               "With --three-d: price each 3d candidate by one representative pipeline (thousands of devices), "
               "over micro-batch sizes 1, 2, 4 and every recomputation, pruned by memory and a step bound; prints "
               "TFLOP/s, MFU and the collectives' time");
  se->add_option("--budget-seconds", sa->budget_seconds,
                 "With --representative: stop trying candidates after this many seconds (0: no limit)");
  se->add_option("--interleave", sa->interleave,
                 "With --representative: also try schedule=interleaved:V with this V where micro-batches and "
                 "whole layers divide (1, the default: 1F1B only; more candidates share --budget-seconds)");
  se->add_option("--refine", sa->refine,
                 "A placer that searches by simulation (anneal, random-search, genetic, ...) and "
                 "refines the winner's placement on its rewritten graph with the evaluations left");
  se->add_option("--budget-evals", sa->budget_evals,
                 "Evaluations in all, never exceeded (0: every candidate once, plus 200 for --refine); "
                 "candidates are tried most promising first, and those the budget leaves out are listed");
  se->add_option("--seed", sa->seed, "Seed")->capture_default_str();
  add_evaluator_options(se, sa->evaluator);
  se->add_option("-o,--output", sa->out, "Directory for the winner's graph.json, placement.json, strategy.json");
  se->add_flag("--json", sa->json, "Print the candidates and the winner as one JSON object");
  se->callback([sa] { run_search(*sa); });

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
