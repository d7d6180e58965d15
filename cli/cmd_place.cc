// aware place | compare: the non-learned placers (and, when built, the agents).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_common.h"
#include "cli/cli_mpi.h"
#include "core/cluster_limits.h"
#include "core/errors.h"
#include "core/exporters.h"
#include "core/formats.h"
#include "core/placer.h"
#include "core/progress.h"
#include "core/search_exchange.h"
#include "experiments/compare.h"
#include "strategies/strategy.h"
#ifdef AWARE_HAVE_RL
#include "agents/rl/trainer.h"
#endif

namespace aware::cli {
namespace {

struct PlaceArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  std::string method;
  EvaluatorChoice evaluator;  // --evaluator, --mode, --option
  std::vector<std::string> method_options;
  long long budget_evals = 0;
  long long seed = 1;
  std::string start;
  std::string policy;
  std::string out;
  std::string trace;
  std::string curve;
  std::string strategy;
  int chains = 1;
  bool json = false;
};

// --curve FILE: the best step so far against the evaluations, one row per
// progress report the placer makes (a search reports about 200 times a run),
// passed on to `inner` too. The file is rewritten whole (a temporary file,
// renamed) at most every 5 s while the search runs, so a long run can be
// watched, and once at the end.
class CurveRecorder final : public ProgressObserver {
 public:
  CurveRecorder(ProgressObserver& inner, std::string path) : inner_(inner), path_(std::move(path)) {}
  void on_progress(const Progress& p) override {
    inner_.on_progress(p);
    if (p.best_step_us < 0 || p.done <= 0) return;
    if (!rows_.empty() && rows_.back().done == p.done) rows_.pop_back();  // the final report repeats the last
    rows_.push_back({p.done, p.elapsed_s, p.best_step_us});
    if (p.elapsed_s - written_s_ >= kEveryS) write(p.elapsed_s);
  }
  bool cancelled() const override { return ProgressObserver::cancelled() || inner_.cancelled(); }
  void write(double now_s) {
    std::ostringstream out;
    out.precision(10);
    out << "evaluations,seconds,best_step_us\n";
    for (const Row& r : rows_) out << r.done << "," << r.seconds << "," << r.best_us << "\n";
    write_text_file_atomic(path_, out.str());
    written_s_ = now_s;
  }

 private:
  static constexpr double kEveryS = 5.0;
  struct Row {
    long long done;
    double seconds, best_us;
  };
  ProgressObserver& inner_;
  std::string path_;
  std::vector<Row> rows_;
  double written_s_ = 0;
};

// --policy FILE: the agent the policy file belongs to (checked against --method).
std::string method_of_policy(const PlaceArgs& a) {
#ifdef AWARE_HAVE_RL
  const rl::PolicyInfo info = rl::read_policy_info(a.policy);  // ParseError when unreadable
  if (!a.method.empty() && a.method != info.agent)
    throw ConfigError("--policy " + a.policy + " holds a policy of agent '" + info.agent +
                      "', not of --method '" + a.method + "'");
  if (a.budget_evals > 0)
    throw ConfigError("--policy places zero-shot (no training): drop --budget-evals, or use "
                      "`aware search --init " + a.policy + " --budget-evals N` to fine-tune");
  return info.agent;
#else
  throw ConfigError("--policy " + a.policy + " needs the learned agents, and this build has no LibTorch");
#endif
}

void run_place(const PlaceArgs& a) {
  if (a.budget_evals < 0) throw ConfigError("--budget-evals must not be negative");
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  if (a.method.empty() && a.policy.empty()) throw ConfigError("place needs --method or --policy");
  const std::string method = a.policy.empty() ? a.method : method_of_policy(a);
  std::unique_ptr<Placer> placer = PlacerRegistry::instance().create(method);
  // Parallel chains: --chains N threads here, or one chain per rank under mpirun.
  int ranks = 1, rank = 0;
#ifdef AWARE_HAVE_MPI
  if (MpiJob* job = mpi_job()) {
    ranks = job->size();
    rank = job->rank();
  }
#endif
  if (a.chains < 1 || a.chains > 256) throw ConfigError("--chains must be 1..256");
  if (ranks > 1 && a.chains > 1)
    throw ConfigError("--chains " + std::to_string(a.chains) + " under mpirun: each rank is one chain (drop --chains)");
  if ((ranks > 1 || a.chains > 1) && !placer->runs_as_chains())
    throw ConfigError("method '" + method + "' does not run as parallel chains (anneal, random-search and "
                      "random-sampling do)" + (ranks > 1 ? ": run it without mpirun" : ""));
  if (!a.strategy.empty()) parse_strategy_spec(a.strategy);
  check_distinct_files({{"-o", a.out}, {"--trace", a.trace}, {"--curve", a.curve}},
                       {{"--graph", a.graph}, {"--cluster", a.cluster}, {"--start", a.start}});
  prepare_output_path(a.out, "-o");  // before the work: an unwritable path fails now
  prepare_output_path(a.trace, "--trace");
  prepare_output_path(a.curve, "--curve");
  if (!a.curve.empty() && (a.chains > 1 || ranks > 1))
    throw ConfigError("--curve with parallel chains: each chain counts its own evaluations, so there is no "
                      "one curve to write (run one chain)");
  // With --strategy, the rewritten graph goes next to the placement: FILE.graph.json.
  const std::string graph_out =
      a.strategy.empty() || a.out.empty() ? "" : a.out + ".graph.json";
  prepare_output_path(graph_out, "-o");
  const StepInputs inputs = load_step_inputs(a.graph, a.cluster, a.evaluator, a.strategy,
                                             static_cast<std::uint64_t>(a.seed), a.budget_evals);
  const Cluster& cluster = inputs.cluster;
  Evaluator* const evaluator = inputs.evaluator.get();
  const std::optional<StrategyResult>& strategy = inputs.strategy;
  const OpGraph& graph = inputs.graph();
  Placement start;
  PlaceContext context;
  context.evaluator = evaluator;
  context.seed = static_cast<std::uint64_t>(a.seed);
  context.budget_evals = a.budget_evals;
  context.options = parse_kv(a.method_options, "--method-option");
  if (!a.policy.empty()) {
    // The learned placers read these: start from the file, train nothing.
    context.options["init"] = a.policy;
    context.options["zero_shot"] = "1";
  }
  PlacerRegistry::instance().check_options(method, context.options);
  if (!a.start.empty()) {
    start = resolve_placement(a.start, graph, cluster);
    context.start = &start;
  } else if (strategy) {
    start = strategy->placement;  // search methods start from the strategy's own placement
    context.start = &start;
  }
  StderrProgress progress;
  std::optional<CurveRecorder> curve;
  if (!a.curve.empty()) curve.emplace(progress, a.curve);
  if (rank == 0) context.progress = curve ? static_cast<ProgressObserver*>(&*curve) : &progress;
  const auto t0 = std::chrono::steady_clock::now();
#ifdef AWARE_HAVE_MPI
  if (ranks > 1) context.exchange = &mpi_job()->exchange();
#endif
  const Placement placement = a.chains > 1 ? place_on_thread_chains(method, a.chains, graph, cluster, context)[0]
                                           : placer->place(graph, cluster, context);
  const double place_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rank != 0) return;  // every rank holds the same best; rank 0 alone reports it
  progress.finish();
  if (curve) curve->write(place_s);
  check_placement(graph, cluster, placement, "method '" + method + "'");
  Trace trace;
  const StepResult result = evaluator->evaluate(graph, cluster, placement, &trace);  // util needs the timeline
  const LowerBound bound = lower_bound(graph, cluster);
  // Both outputs or neither.
  std::vector<std::pair<std::string, std::string>> outputs;
  if (!a.out.empty())
    outputs.push_back({a.out, placement_to_json(graph, cluster, placement).dump(1) + "\n"});
  if (!graph_out.empty()) outputs.push_back({graph_out, graph_to_json(graph).dump(1) + "\n"});
  if (!a.trace.empty())
    outputs.push_back({a.trace, trace_to_chrome(graph, cluster, trace).dump(1) + "\n"});
  write_files_atomic(outputs);
  std::vector<int> per_device(cluster.num_devices(), 0);
  for (int op = 0; op < graph.num_ops(); ++op) ++per_device[placement[op]];
  if (a.json) {
    nlohmann::json out = step_result_json(result, cluster, bound);
    out["method"] = method;
    if (strategy) out["strategy"] = strategy_json(*strategy, result);
    if (!graph_out.empty()) out["graph_file"] = graph_out;
    if (!a.policy.empty()) out["policy_file"] = a.policy;
    out["graph"] = graph.name();
    out["cluster"] = cluster.name();
    out["place_time_s"] = place_s;
    out["seed"] = a.seed;
    out["chains"] = std::max(a.chains, ranks);
#ifdef AWARE_HAVE_MPI
    if (ranks > 1) out["meeting_s"] = mpi_job()->meeting_seconds();  // rank 0's chain
#endif
    out["ops_per_device"] = per_device;
    if (!a.out.empty()) out["placement_file"] = a.out;
    if (!a.curve.empty()) out["curve_file"] = a.curve;
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("method         %s on %s (%d ops) / %s (%d devices)\n", method.c_str(),
              graph.name().c_str(), graph.num_ops(), cluster.name().c_str(), cluster.num_devices());
  if (strategy) print_strategy_summary(*strategy, result);
  std::printf("placed in      %.3f s\n", place_s);
  std::printf("ops per device");
  for (int n : per_device) std::printf(" %d", n);
  std::printf("\nevaluator      %s\n", evaluator->describe().c_str());
  print_step_result(result, cluster, bound, &trace);
  if (!a.out.empty()) std::printf("placement      %s\n", a.out.c_str());
  if (!graph_out.empty()) std::printf("graph          %s (the rewritten step)\n", graph_out.c_str());
  if (!a.curve.empty()) std::printf("curve          %s\n", a.curve.c_str());
}

struct CompareArgs {
  std::string models = "inception_v3,resnet50,nasnet,nmt4,gnmt";
  std::string cluster = "k40x4";
  std::string devices;
  std::string methods = "all";
  std::string strategies;
  EvaluatorChoice evaluator;  // --evaluator, --mode, --option
  long long budget_evals = 0;
  long long seed = 1;
  std::string format;  // empty: from -o's extension, else table
  bool json = false;
  std::string out;
  std::string resume;
};

void run_compare_command(const CompareArgs& args) {
  CompareArgs a = args;
  a.format = table_format(args.format, args.json, args.out);
  if (a.budget_evals < 0) throw ConfigError("--budget-evals must not be negative");
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  prepare_output_path(a.out, "-o");
  CompareRequest request;
  request.models = split_list(a.models);
  if (request.models.empty()) throw ConfigError("--models is empty");
  std::string cluster = a.cluster;
  if (cluster.rfind("preset:", 0) == 0) cluster = cluster.substr(7);
  request.cluster = cluster;
  // Every item a whole number >= 1: "0", "-3", "2,,4" and "2x" are refused.
  if (!a.devices.empty())
    request.devices = parse_int_list(a.devices, "--devices", 1, kMaxRoutedClusterDevices, "a device count");
  request.methods = a.methods == "none" ? std::vector<std::string>{} : split_list(a.methods);
  request.strategies = split_strategy_list(a.strategies);
  // A repeated item would be run and listed twice.
  refuse_repeated(request.models, "--models");
  refuse_repeated(request.devices, "--devices");
  refuse_repeated(request.methods, "--methods");
  refuse_repeated(request.strategies, "--strategies");
  request.evaluator = a.evaluator.name;
  request.evaluator_options = evaluator_options(a.evaluator);
  request.budget_evals = a.budget_evals;
  request.seed = static_cast<std::uint64_t>(a.seed);
  prepare_output_path(a.resume, "--resume");
  request.resume_path = a.resume;
  StderrProgress progress;
  request.progress = &progress;
  const CompareTable table = run_compare(request);
  progress.finish();
  if (!a.resume.empty())
    std::fprintf(stderr, "compare: %lld cells taken from %s, the rest run now\n", table.resumed_cells,
                 a.resume.c_str());
  std::ostringstream text;
  if (a.format == "table") {
    write_compare_text(table, text);
  } else if (a.format == "md") {
    write_compare_markdown(table, text);
  } else if (a.format == "csv") {
    write_compare_csv(table, text);
  } else {
    text << compare_to_json(table).dump(1) << "\n";
  }
  if (a.out.empty()) {
    std::cout << text.str();
  } else {
    write_text_file_atomic(a.out, text.str());
    // Also show the table on the terminal when writing a file.
    if (a.format != "table") {
      std::ostringstream shown;
      write_compare_text(table, shown);
      std::cout << shown.str();
    }
    std::printf("wrote %s\n", a.out.c_str());
  }
}

}  // namespace

void add_place_commands(CLI::App& app) {
  const std::string methods_help =
      registered_names_help("Method", PlacerRegistry::instance().names(), "placers");

  auto place = std::make_shared<PlaceArgs>();
  CLI::App* p = app.add_subcommand("place", "Place a graph with one method and simulate the result");
  p->add_option("--graph", place->graph, graph_spec_help())->required();
  p->add_option("--cluster", place->cluster, "preset:NAME or a cluster file")->capture_default_str();
  p->add_option("--method", place->method, methods_help);
  p->add_option("--policy", place->policy,
                "Place zero-shot with this trained policy file (aware search/pretrain --save-policy); "
                "the method is the policy's agent");
  add_evaluator_options(p, place->evaluator, "Evaluator for scoring and search");
  p->add_option("--method-option", place->method_options, "Method option KEY=VALUE (repeatable)");
  p->add_option("--budget-evals", place->budget_evals, "Evaluations for search methods (0: default)");
  p->add_option("--seed", place->seed, "Seed")->capture_default_str();
  p->add_option("--start", place->start, "Starting placement for search methods (file, single, round-robin)");
  p->add_option("--strategy", place->strategy,
                "Rewrite the graph by a parallel strategy first (dp:4, pipeline:4, ...; `aware "
                "strategy list`); the method then places the rewritten graph, search methods "
                "starting from the strategy's placement");
  p->add_option("-o,--output", place->out,
                "Write the placement JSON here (with --strategy also FILE.graph.json)");
  p->add_option("--trace", place->trace, "Write a Chrome trace of the placed step here");
  p->add_option("--curve", place->curve,
                "Write the best step so far against evaluations here (CSV, rewritten every 5 s while "
                "the method runs; searches report about 200 times a run)");
  p->add_option("--chains", place->chains,
                "Run a search method (anneal, random-search, random-sampling) as N parallel chains on "
                "threads that split --budget-evals and meet to share their best; under mpirun each rank "
                "is one chain instead")
      ->capture_default_str();
  p->add_flag("--json", place->json, "Print one JSON object");
  p->callback([place] { run_place(*place); });

  auto cmp = std::make_shared<CompareArgs>();
  CLI::App* c = app.add_subcommand("compare", "Compare methods over models and device counts");
  c->add_option("--models", cmp->models, "Comma-separated zoo names or graph files")->capture_default_str();
  c->add_option("--cluster", cmp->cluster,
                "preset:NAME (k40x4 alone works too; with --devices 2,4,8 it uses k40x2/4/8) or a file")
      ->capture_default_str();
  c->add_option("--devices", cmp->devices, "Comma-separated device counts (default: the cluster's)");
  c->add_option("--methods", cmp->methods, "all (the baselines), or comma-separated. " + methods_help)->capture_default_str();
  c->add_option("--strategies", cmp->strategies,
                "Strategy columns after the methods, comma-separated specs (dp:ring,dp:ps,"
                "hybrid:2xm-etf,pipeline:4,micro=16; `aware strategy list`); --methods none "
                "leaves only them");
  add_evaluator_options(c, cmp->evaluator);
  c->add_option("--budget-evals", cmp->budget_evals, "Evaluations for search methods (0: default)");
  c->add_option("--seed", cmp->seed, "Seed")->capture_default_str();
  c->add_option("--format", cmp->format, "table, md, csv or json (default: from -o's extension, else table)");
  c->add_flag("--json", cmp->json, "Print JSON (same as --format json)");
  c->add_option("-o,--output", cmp->out, "Write the result here (default: stdout)");
  c->add_option("--resume", cmp->resume,
                "Journal of finished cells: cells already in it are not run again (for long runs "
                "that may be killed; same settings, same results)");
  c->callback([cmp] { run_compare_command(*cmp); });
}

}  // namespace aware::cli
