// aware fuse | fuse report: communication/computation-aware operator fusion
// (agents/fusion) and how much searching the fused graph costs or gains.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "agents/fusion/fused_placer.h"
#include "agents/fusion/fusion.h"
#include "cli/cli_common.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/placer.h"
#include "core/progress.h"
#include "core/units.h"
#include "datasets/load.h"

namespace aware::cli {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "k40x4" -> preset; "preset:NAME" or a file -> load_cluster.
Cluster resolve_cluster(const std::string& spec) {
  if (spec.rfind("preset:", 0) == 0 || spec.find('.') != std::string::npos ||
      spec.find('/') != std::string::npos)
    return load_cluster(spec);
  return load_cluster("preset:" + spec);
}

// "nmt4" -> "zoo:nmt4"; anything with ':' or a path unchanged.
std::string resolve_graph_spec(const std::string& name) {
  if (name.find(':') != std::string::npos || name.find('.') != std::string::npos ||
      name.find('/') != std::string::npos)
    return name;
  return "zoo:" + name;
}

struct FusionFlags {
  int target_size = 0;
  double threshold = 1.0;
  double memory_fraction = 1.0;
  bool no_chain = false;
  bool no_comm = false;
  std::string cost = "exact";
  std::string edges = "pair";

  Options as_options() const {
    return Options{{"fusion.target_size", std::to_string(target_size)},
                   {"fusion.threshold", std::to_string(threshold)},
                   {"fusion.memory_fraction", std::to_string(memory_fraction)},
                   {"fusion.chain", no_chain ? "0" : "1"},
                   {"fusion.comm", no_comm ? "0" : "1"},
                   {"fusion.cost", cost},
                   {"fusion.edges", edges}};
  }
  FusionOptions options() const { return fusion_options_from(as_options(), "aware fuse"); }
  void add_to(CLI::App* app) {
    app->add_option("--target-size", target_size,
                    "Largest fused graph wanted, in ops (0: rules only)")
        ->capture_default_str();
    app->add_option(
           "--threshold", threshold,
           "Merge an edge when its transfer time > threshold x the smaller op's compute time")
        ->capture_default_str();
    app->add_option("--memory-fraction", memory_fraction,
                    "A fused op may use at most this fraction of the smallest device's memory")
        ->capture_default_str();
    app->add_flag("--no-chain", no_chain, "Do not merge pure chain links");
    app->add_flag("--no-comm", no_comm, "Do not apply the communication/computation rule");
    app->add_option("--cost", cost,
                    "Fused op cost: exact (sum, homogeneous clusters) or roofline (of the sums)")
        ->capture_default_str();
    app->add_option("--edges", edges,
                    "Fused edges: pair (one per node pair where memory allows) or class (one per "
                    "tensor class and reader: exact memory and transfers)")
        ->capture_default_str();
  }
};

struct FuseArgs {
  std::string graph;
  std::string cluster = "preset:k40x4";
  FusionFlags flags;
  std::string out;
  std::string mapping;
  bool json = false;
};

struct Side {
  LowerBound bound;
  StepResult single;
};

Side measure(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator) {
  Side s;
  s.bound = lower_bound(graph, cluster);
  s.single = evaluator.evaluate(graph, cluster, single_device_placement(graph, 0));
  return s;
}

void run_fuse(const FuseArgs& a) {
  if (a.graph.empty())
    throw ConfigError("aware fuse: --graph is required (or use `aware fuse report`)");
  check_distinct_files({{"-o", a.out}, {"--mapping", a.mapping}}, {{"--graph", a.graph}, {"--cluster", a.cluster}});
  prepare_output_path(a.out, "-o");
  prepare_output_path(a.mapping, "--mapping");
  const OpGraph graph = load_graph(a.graph);
  const Cluster cluster = load_cluster(a.cluster);
  const FusionOptions options = a.flags.options();
  const auto t0 = std::chrono::steady_clock::now();
  const FusionResult fusion = fuse_by_comm_ratio(graph, cluster, options);
  const double fuse_s = seconds_since(t0);
  std::unique_ptr<Evaluator> evaluator = make_evaluator("analytic", "", {});
  const Side fine = measure(graph, cluster, *evaluator);
  const Side coarse = measure(fusion.coarse, cluster, *evaluator);
  // The coarse single-device placement expanded and scored on the real graph.
  const StepResult expanded = evaluator->evaluate(
      graph, cluster, expand_placement(fusion, single_device_placement(fusion.coarse, 0)));
  if (!a.out.empty()) write_graph_file(fusion.coarse, a.out);
  if (!a.mapping.empty()) write_json_file(a.mapping, fusion_mapping_json(graph, fusion));
  const FusionStats& s = fusion.stats;
  if (a.json) {
    nlohmann::json j;
    j["graph"] = graph.name();
    j["cluster"] = cluster.name();
    j["fuse_time_s"] = fuse_s;
    j["stats"] = fusion_stats_json(s);
    auto side = [](const Side& x) {
      return nlohmann::json{{"lower_bound_us", x.bound.bound_us()},
                            {"critical_path_us", x.bound.critical_path_us},
                            {"work_bound_us", x.bound.work_us},
                            {"single_device_step_us", x.single.step_time_us},
                            {"single_device_feasible", x.single.feasible}};
    };
    j["fine"] = side(fine);
    j["coarse"] = side(coarse);
    j["expanded_single_device_step_us"] = expanded.step_time_us;
    if (!a.out.empty()) j["coarse_graph_file"] = a.out;
    if (!a.mapping.empty()) j["mapping_file"] = a.mapping;
    std::cout << j.dump(1) << "\n";
    return;
  }
  std::printf("graph          %s on %s (%d devices); fused in %.3f s\n", graph.name().c_str(),
              cluster.name().c_str(), cluster.num_devices(), fuse_s);
  std::printf("slowest route  %s/s, %.1f us latency; node memory cap %s\n",
              format_bytes(s.slowest_route_Bps, BytesStyle::kTable).c_str(),
              s.slowest_route_latency_us,
              format_bytes(s.memory_limit_bytes, BytesStyle::kTable).c_str());
  std::printf("%-24s %14s %14s\n", "", "fine", "fused");
  std::printf("%-24s %14d %14d\n", "ops", s.ops_before, s.ops_after);
  std::printf("%-24s %14d %14d\n", "edges", s.edges_before, s.edges_after);
  std::printf("%-24s %14s %14s\n", "lower bound", format_ms(fine.bound.bound_us()).c_str(),
              format_ms(coarse.bound.bound_us()).c_str());
  std::printf("%-24s %14s %14s\n", "  critical path",
              format_ms(fine.bound.critical_path_us).c_str(),
              format_ms(coarse.bound.critical_path_us).c_str());
  std::printf("%-24s %14s %14s\n", "single-device step",
              format_ms(fine.single.step_time_us).c_str(),
              format_ms(coarse.single.step_time_us).c_str());
  std::printf("expanded single-device step on the fine graph: %s\n",
              format_ms(expanded.step_time_us).c_str());
  std::printf("merges         %d chain, %d comm, %d target, %d colocation groups (%d unresolved)\n",
              s.chain_merges, s.comm_merges, s.target_merges, s.colocation_merges,
              s.colocation_unresolved);
  std::printf("refused        %d (other path: cycle), %d (memory)\n", s.rejected_cycle,
              s.rejected_memory);
  std::printf("bytes          %s inside fused ops, %s still cut\n",
              format_bytes(s.internal_bytes, BytesStyle::kTable).c_str(),
              format_bytes(s.cut_bytes, BytesStyle::kTable).c_str());
  std::printf("largest op     %d ops, %s\n", s.largest_node_ops,
              format_bytes(s.largest_node_memory_bytes, BytesStyle::kTable).c_str());
  if (options.target_size > 0 && !s.target_met)
    std::printf("target         %d not met: nothing more can merge safely\n", options.target_size);
  if (!a.out.empty()) std::printf("coarse graph   %s\n", a.out.c_str());
  if (!a.mapping.empty()) std::printf("mapping        %s\n", a.mapping.c_str());
}

struct ReportArgs {
  std::string models = "inception_v3,resnet50,nasnet,nmt4,gnmt";
  std::string cluster = "k40x4";
  FusionFlags flags;
  std::string method = "anneal";
  long long budget_evals = 0;
  long long seed = 1;
  std::string format;  // empty: from -o's extension, else table
  bool json = false;
  std::string out;
};

struct ReportRow {
  std::string model;
  int ops = 0, fused_ops = 0, edges = 0, fused_edges = 0;
  double fuse_s = 0;
  double bound_us = 0;
  double single_us = 0;
  double fine_us = -1;  // method on the fine graph
  bool fine_ok = false;
  double fine_place_s = 0;
  double fused_us = -1;  // method on the fused graph, expanded, scored on the fine graph
  bool fused_ok = false;
  double fused_estimate_us = -1;  // the same placement scored on the fused graph
  double fused_place_s = 0;
  double fine_scored_us = -1;  // the method on the fused graph, every call scored on the full graph
  bool fine_scored_ok = false;
  double fine_scored_place_s = 0;
  std::string error;
};

// Runs `method` with the same budget and seed on both graphs. A failure (a
// placer's error, a graph that cannot fit) becomes the row's error.
ReportRow report_row(const OpGraph& graph, const Cluster& cluster, const ReportArgs& a,
                     const FusionOptions& options, ProgressObserver* progress) {
  ReportRow row;
  row.model = graph.name();
  try {
    row.ops = graph.num_ops();
    row.edges = graph.num_edges();
    auto t0 = std::chrono::steady_clock::now();
    const FusionResult fusion = fuse_by_comm_ratio(graph, cluster, options);
    row.fuse_s = seconds_since(t0);
    row.fused_ops = fusion.coarse.num_ops();
    row.fused_edges = fusion.coarse.num_edges();
    std::unique_ptr<Evaluator> evaluator = make_evaluator("analytic", "", {});
    row.bound_us = lower_bound(graph, cluster).bound_us();
    row.single_us =
        evaluator->evaluate(graph, cluster, single_device_placement(graph, 0)).step_time_us;

    PlaceContext context;
    context.evaluator = evaluator.get();
    context.seed = static_cast<std::uint64_t>(a.seed);
    context.budget_evals = a.budget_evals;
    context.progress = progress;

    t0 = std::chrono::steady_clock::now();
    const Placement fine =
        PlacerRegistry::instance().create(a.method)->place(graph, cluster, context);
    row.fine_place_s = seconds_since(t0);
    const StepResult fine_result = evaluator->evaluate(graph, cluster, fine);
    row.fine_us = fine_result.step_time_us;
    row.fine_ok = fine_result.feasible;

    t0 = std::chrono::steady_clock::now();
    const Placement coarse =
        PlacerRegistry::instance().create(a.method)->place(fusion.coarse, cluster, context);
    row.fused_place_s = seconds_since(t0);
    row.fused_estimate_us = evaluator->evaluate(fusion.coarse, cluster, coarse).step_time_us;
    const StepResult fused_result =
        evaluator->evaluate(graph, cluster, expand_placement(fusion, coarse));
    row.fused_us = fused_result.step_time_us;
    row.fused_ok = fused_result.feasible;

    PlaceContext scored = context;
    scored.options = a.flags.as_options();
    scored.options["fusion.score"] = "fine";
    t0 = std::chrono::steady_clock::now();
    const Placement fine_scored = make_fused_placer(a.method)->place(graph, cluster, scored);
    row.fine_scored_place_s = seconds_since(t0);
    const StepResult scored_result = evaluator->evaluate(graph, cluster, fine_scored);
    row.fine_scored_us = scored_result.step_time_us;
    row.fine_scored_ok = scored_result.feasible;
  } catch (const Error& e) {
    row.error = e.what();
  }
  return row;
}

std::string ms_cell(double us, bool ok) {
  if (us < 0) return "-";
  return format_fixed(us / 1e3, 3) + (ok ? "" : " (infeasible)");
}

std::string delta_cell(double fine_us, double fused_us) {
  if (fine_us <= 0 || fused_us < 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", 100.0 * (fused_us - fine_us) / fine_us);
  return buffer;
}

void write_report(const std::vector<ReportRow>& rows, const ReportArgs& a, const Cluster& cluster,
                  std::ostream& out) {
  const std::string budget = a.budget_evals > 0 ? std::to_string(a.budget_evals) : "default";
  if (a.format == "csv") {
    out << "model,cluster,ops,fused_ops,edges,fused_edges,fuse_s,lower_bound_us,single_device_us,"
           "method,budget_evals,seed,fine_step_us,fine_feasible,fine_place_s,fused_step_us,"
           "fused_feasible,fused_estimate_us,fused_place_s,fine_scored_step_us,fine_scored_"
           "feasible,"
           "fine_scored_place_s,error\n";
    for (const ReportRow& r : rows) {
      out << r.model << "," << cluster.name() << "," << r.ops << "," << r.fused_ops << ","
          << r.edges << "," << r.fused_edges << "," << r.fuse_s << "," << r.bound_us << ","
          << r.single_us << "," << a.method << "," << a.budget_evals << "," << a.seed << ","
          << r.fine_us << "," << r.fine_ok << "," << r.fine_place_s << "," << r.fused_us << ","
          << r.fused_ok << "," << r.fused_estimate_us << "," << r.fused_place_s << ","
          << r.fine_scored_us << "," << r.fine_scored_ok << "," << r.fine_scored_place_s << ",\""
          << r.error << "\"\n";
    }
    return;
  }
  if (a.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const ReportRow& r : rows)
      j.push_back({{"model", r.model},
                   {"cluster", cluster.name()},
                   {"ops", r.ops},
                   {"fused_ops", r.fused_ops},
                   {"edges", r.edges},
                   {"fused_edges", r.fused_edges},
                   {"fuse_s", r.fuse_s},
                   {"lower_bound_us", r.bound_us},
                   {"single_device_us", r.single_us},
                   {"method", a.method},
                   {"budget_evals", a.budget_evals},
                   {"seed", a.seed},
                   {"fine_step_us", r.fine_us},
                   {"fine_feasible", r.fine_ok},
                   {"fine_place_s", r.fine_place_s},
                   {"fused_step_us", r.fused_us},
                   {"fused_feasible", r.fused_ok},
                   {"fused_estimate_us", r.fused_estimate_us},
                   {"fused_place_s", r.fused_place_s},
                   {"fine_scored_step_us", r.fine_scored_us},
                   {"fine_scored_feasible", r.fine_scored_ok},
                   {"fine_scored_place_s", r.fine_scored_place_s},
                   {"error", r.error}});
    out << j.dump(1) << "\n";
    return;
  }
  const bool md = a.format == "md";
  char line[512];
  std::snprintf(line, sizeof line,
                "%s on %s, budget %s evaluations, seed %lld; step times in ms "
                "(fused: placed on the fused graph, expanded, simulated on the full graph)\n",
                a.method.c_str(), cluster.name().c_str(), budget.c_str(), a.seed);
  out << line << "\n";
  const char* header[] = {"model",       "ops",           "fused ops",        "edges",
                          "fused edges", "lower bound",   "single",           "fine",
                          "fused",       "fused vs fine", "fused (own est.)", "fused, fine-scored",
                          "vs fine",     "place s fine",  "place s fused"};
  std::vector<std::vector<std::string>> cells;
  for (const ReportRow& r : rows) {
    if (!r.error.empty()) {
      cells.push_back({r.model, "error: " + r.error});
      continue;
    }
    char b[12][48];
    std::snprintf(b[0], 48, "%d", r.ops);
    std::snprintf(b[1], 48, "%d", r.fused_ops);
    std::snprintf(b[2], 48, "%d", r.edges);
    std::snprintf(b[3], 48, "%d", r.fused_edges);
    std::snprintf(b[4], 48, "%.3f", r.bound_us / 1e3);
    std::snprintf(b[5], 48, "%.3f", r.single_us / 1e3);
    std::snprintf(b[6], 48, "%.1f", r.fine_place_s);
    std::snprintf(b[7], 48, "%.1f", r.fused_place_s);
    cells.push_back({r.model, b[0], b[1], b[2], b[3], b[4], b[5], ms_cell(r.fine_us, r.fine_ok),
                     ms_cell(r.fused_us, r.fused_ok), delta_cell(r.fine_us, r.fused_us),
                     ms_cell(r.fused_estimate_us, true),
                     ms_cell(r.fine_scored_us, r.fine_scored_ok),
                     delta_cell(r.fine_us, r.fine_scored_us), b[6], b[7]});
  }
  const size_t columns = sizeof header / sizeof header[0];
  std::vector<size_t> width(columns, 0);
  for (size_t c = 0; c < columns; ++c) width[c] = std::string(header[c]).size();
  for (const auto& row : cells)
    for (size_t c = 0; c < row.size() && c < columns; ++c)
      if (row.size() == columns) width[c] = std::max(width[c], row[c].size());
  auto emit = [&](const std::vector<std::string>& row) {
    if (md) out << "|";
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      if (row.size() == columns) cell.resize(std::max(cell.size(), width[c]), ' ');
      out << (md ? " " : (c == 0 ? "" : "  ")) << cell << (md ? " |" : "");
    }
    out << "\n";
  };
  emit(std::vector<std::string>(header, header + columns));
  if (md) {
    std::vector<std::string> rule;
    for (size_t c = 0; c < columns; ++c) rule.push_back(std::string(width[c], '-'));
    emit(rule);
  }
  for (const auto& row : cells) emit(row);
}

void run_report(const ReportArgs& args) {
  ReportArgs a = args;
  if (a.budget_evals < 0) throw ConfigError("--budget-evals must not be negative");
  if (a.seed < 0) throw ConfigError("--seed must not be negative");
  a.format = table_format(args.format, args.json, args.out);
  const std::vector<std::string> models = split_list(a.models);
  if (models.empty()) throw ConfigError("--models is empty");
  PlacerRegistry::instance().create(a.method);  // unknown names fail before any work
  prepare_output_path(a.out, "-o");
  const Cluster cluster = resolve_cluster(a.cluster);
  const FusionOptions options = a.flags.options();
  // Every model is loaded before any work, so a bad name or file fails at once
  // with nothing written.
  std::vector<OpGraph> graphs;
  for (const std::string& model : models) graphs.push_back(load_graph(resolve_graph_spec(model)));
  std::vector<ReportRow> rows;
  StderrProgress progress;
  for (const OpGraph& graph : graphs) rows.push_back(report_row(graph, cluster, a, options, &progress));
  progress.finish();
  std::ostringstream text;
  write_report(rows, a, cluster, text);
  if (a.out.empty()) {
    std::cout << text.str();
  } else {
    write_text_file_atomic(a.out, text.str());
    std::cout << text.str();
    std::printf("wrote %s\n", a.out.c_str());
  }
  // The table keeps the failed rows (their errors in place of figures), and the
  // command fails with them.
  std::string failed;
  int failures = 0;
  for (const ReportRow& r : rows) {
    if (r.error.empty()) continue;
    ++failures;
    failed += "\n  " + r.model + ": " + r.error;
  }
  if (failures > 0)
    throw Error("fuse report: " + std::to_string(failures) + " of " + std::to_string(rows.size()) +
                " models failed:" + failed);
}

}  // namespace

void add_fuse_commands(CLI::App& app) {
  auto fuse = std::make_shared<FuseArgs>();
  CLI::App* f = app.add_subcommand(
      "fuse", "Fuse ops whose separation costs more in transfer than it gains in parallel compute");
  f->require_subcommand(0, 1);
  f->add_option("--graph", fuse->graph, graph_spec_help());
  f->add_option("--cluster", fuse->cluster, "preset:NAME or a cluster file")->capture_default_str();
  fuse->flags.add_to(f);
  f->add_option("-o,--output", fuse->out, "Write the fused graph JSON here");
  f->add_option("--mapping", fuse->mapping, "Write the op -> fused op mapping JSON here");
  f->add_flag("--json", fuse->json, "Print one JSON object");

  auto report = std::make_shared<ReportArgs>();
  CLI::App* r = f->add_subcommand("report",
                                  "Per model: ops before/after fusion, and a search's best step on "
                                  "the fused vs the full graph");
  r->add_option("--models", report->models, "Comma-separated zoo names or graph files")
      ->capture_default_str();
  r->add_option("--cluster", report->cluster, "preset:NAME (k40x4 alone works too) or a cluster file")
      ->capture_default_str();
  report->flags.add_to(r);
  r->add_option("--method", report->method, "Placer run on both graphs")->capture_default_str();
  r->add_option("--budget-evals", report->budget_evals,
                "Evaluations per search (0: the method's default)");
  r->add_option("--seed", report->seed, "Seed")->capture_default_str();
  r->add_option("--format", report->format, "table, md, csv or json (default: from -o's extension, else table)");
  r->add_flag("--json", report->json, "Print JSON (same as --format json)");
  r->add_option("-o,--output", report->out, "Also write the report here");
  r->callback([report] { run_report(*report); });

  f->callback([f, r, fuse] {
    if (f->got_subcommand(r)) return;
    run_fuse(*fuse);
  });
}

}  // namespace aware::cli
