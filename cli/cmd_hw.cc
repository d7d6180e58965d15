// aware calibrate, aware validate: the hardware executors against the simulators.
#include <algorithm>
#include <limits>
#include <cstdio>
#include <iostream>
#include <map>
#include <numeric>
#include <random>

#include "cli/cli_common.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/placer.h"
#include "datasets/load.h"
#include "hw/calibrate.h"
#include "hw/executor.h"
#include "hw/validate.h"
#include "experiments/validate_experiment.h"

namespace aware::cli {
namespace {

using experiments::as_hardware;
using experiments::default_host_cluster;
using experiments::host_cluster;

void log_line(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), text.c_str());
}

// ---------------------------------------------------------------- calibrate

struct CalibrateArgs {
  std::string backend = "cpu";
  std::string cluster;
  int devices = 0;  // 0: every device of the cluster
  bool devices_given = false;
  std::vector<std::string> options;
  std::string out;
  std::string report;
  std::vector<std::string> profile_graphs;
  std::string costs_out;
  int rounds = 3;
  bool pairs = false;
  bool json = false;
};

void run_calibrate(const CalibrateArgs& a) {
  if (!a.profile_graphs.empty() && a.costs_out.empty())
    throw ConfigError("--profile-graph needs --costs-out FILE for the cost table");
  if (a.profile_graphs.empty() && !a.costs_out.empty())
    throw ConfigError("--costs-out needs at least one --profile-graph");
  prepare_output_path(a.out, "-o");
  prepare_output_path(a.report, "--report");
  prepare_output_path(a.costs_out, "--costs-out");
  std::vector<OpGraph> graphs;
  for (const std::string& spec : a.profile_graphs) graphs.push_back(load_graph(spec));
  if (a.devices_given && a.devices < 1)
    throw ConfigError("--devices " + std::to_string(a.devices) +
                      ": give a count of 1 or more (leave --devices out to measure every device)");
  const std::string spec = a.cluster.empty() ? default_host_cluster(a.backend, a.devices) : a.cluster;
  const Cluster base = host_cluster(spec, a.devices);
  // The cpu backend measures this machine's cores: a cluster of other devices
  // (preset:k40x4) would come out as K40s with 12 GB and this CPU's rates.
  if (a.backend == "cpu") require_cpu_devices(base, spec, "--backend cpu");
  std::unique_ptr<Evaluator> evaluator = make_evaluator(a.backend, "", a.options);
  HardwareEvaluator& hw = as_hardware(*evaluator, a.backend);

  const auto log = [](const std::string& text) { log_line("calibrate", text); };
  CalibrationOptions options;
  // A GPU's tensor cores are launch-bound at 1024^3 (2 GFLOP in a few us): the
  // sweep goes on to the sizes at which they reach their rate.
  if (a.backend == "cuda") options.gemm_sizes = {128, 256, 512, 1024, 2048, 4096, 8192};
  const Calibration cal = calibrate(hw, base, options, log);
  CostTable table = graphs.empty() ? CostTable{} : profile_graphs(hw, graphs, cal.cluster, a.rounds, log);
  if (a.pairs) profile_pair_slowdowns(hw, graphs, cal.cluster, a.rounds, table, log);

  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back(a.out, cluster_to_json(cal.cluster).dump(1) + "\n");
  if (!a.report.empty()) files.emplace_back(a.report, calibration_report_json(cal));
  if (!a.costs_out.empty()) {
    CostTableInfo info;
    for (const std::string& spec : a.profile_graphs) info.graph += (info.graph.empty() ? "" : ",") + spec;
    info.backend = a.backend;
    files.emplace_back(a.costs_out, cost_table_to_json(table, info).dump(1) + "\n");
  }
  write_files_atomic(files);

  if (a.json) {
    nlohmann::json out = nlohmann::json::parse(calibration_report_json(cal));
    out["cluster"] = a.out;
    if (!a.costs_out.empty()) out["costs"] = a.costs_out;
    out["mapping"] = hw.last_measurement().mapping;
    std::cout << out.dump(1) << "\n";
    return;
  }
  std::printf("backend        %s (%s)\n", a.backend.c_str(), hw.last_measurement().mapping.c_str());
  for (const GemmRate& g : cal.gemm)
    std::printf("GEMM %5d^3    %8.2f GFLOP/s\n", g.size, g.flops_per_s / 1e9);
  std::printf("peak / eff     %.2f GFLOP/s, efficiency %.3f (the sweep's line: %.2f us + flops at %.2f GFLOP/s)\n",
              cal.peak_flops / 1e9, cal.efficiency, cal.gemm_overhead_us, cal.fitted_flops / 1e9);
  std::printf("memory         %.2f GB/s (read + write)\n", cal.memory_Bps / 1e9);
  std::printf("per-op cost    %.3f us\n", cal.launch_overhead_us);
  if (cal.concurrent_gemm_slowdown > 0)
    std::printf("two at once    GEMM x%.2f, streaming x%.2f (1 = independent devices)\n",
                cal.concurrent_gemm_slowdown, cal.concurrent_stream_slowdown);
  if (!cal.stream_slowdown_by_bytes.empty()) {
    std::printf("streaming by size");
    for (const auto& [bytes, factor] : cal.stream_slowdown_by_bytes) std::printf("  %.3g MB x%.2f", bytes / 1e6, factor);
    std::printf("\n               memory contention from %.3g MB (slowdown.memory_from_bytes)\n",
                cal.concurrent_stream_from_bytes / 1e6);
  }
  for (const CopyFit& f : cal.copies)
    std::printf("copy %s -> %s  %.2f GB/s, latency %.2f us\n", base.device(f.src).name.c_str(),
                base.device(f.dst).name.c_str(), f.bandwidth_Bps / 1e9, f.latency_us);
  std::printf("cluster        %s\n", a.out.c_str());
  if (!a.report.empty()) std::printf("report         %s\n", a.report.c_str());
  if (!a.costs_out.empty())
    std::printf("cost table     %s (%zu entries)\n", a.costs_out.c_str(), table.us.size());
}

// ---------------------------------------------------------------- validate

struct ValidateArgs : experiments::ValidationConfig {
  std::string out;
  std::string format;
  bool json = false;
};

void run_validate(const ValidateArgs& a) {
  const std::string format = table_format(a.format, a.json, a.out);
  check_distinct_files({{"-o", a.out}, {"--costs-out", a.costs_out}}, {{"--cluster", a.cluster}, {"--costs", a.costs}});
  prepare_output_path(a.out, "-o");
  prepare_output_path(a.costs_out, "--costs-out");
  const std::string text =
      experiments::run_validation(a, format, [](const std::string& line) { log_line("validate", line); });
  if (!a.out.empty()) {
    write_text_file_atomic(a.out, text);
    if (format != "json") std::fputs(text.c_str(), stdout);
    std::printf("%swritten         %s\n", format == "json" ? "" : "\n", a.out.c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
}

}  // namespace

void add_hw_commands(CLI::App& app) {
  {
    auto args = std::make_shared<CalibrateArgs>();
    CLI::App* c = app.add_subcommand(
        "calibrate", "Measure a hardware backend and write a cluster file with the measured rates");
    c->add_option("--backend", args->backend, "cpu or cuda")->capture_default_str();
    c->add_option("--cluster", args->cluster,
                  "The devices to measure: preset:NAME or a cluster file "
                  "(default preset:cpu-host / preset:cuda-host)");
    CLI::Option* devices =
        c->add_option("--devices", args->devices, "Use the first N devices of the cluster (default: all)");
    c->add_option("--option", args->options, "Backend option KEY=VALUE (repeatable; aware list evaluators)");
    c->add_option("-o,--out", args->out, "Write the calibrated cluster file here")->required();
    c->add_option("--report", args->report, "Write every measurement (JSON) here");
    c->add_option("--profile-graph", args->profile_graphs,
                  std::string("Also time every op of this graph on each device kind (repeatable). ") +
                      graph_spec_help());
    c->add_option("--costs-out", args->costs_out, "Write the profiled cost table here");
    c->add_option("--rounds", args->rounds,
                  "Profile every graph this many times, round after round (median of the rounds)")
        ->capture_default_str()
        ->check(whole_range(1, 1000));
    c->add_flag("--pairs", args->pairs,
                "Also run each --profile-graph beside a copy of itself on two devices of a kind: each op type's "
                "slowdown goes into the table (pair_slowdowns), and the analytic simulator uses it");
    c->add_flag("--json", args->json, "Print one JSON object");
    c->callback([args, devices] {
      args->devices_given = devices->count() > 0;
      run_calibrate(*args);
    });
  }
  {
    auto args = std::make_shared<ValidateArgs>();
    CLI::App* v = app.add_subcommand(
        "validate", "Run placements on a hardware backend and compare with the simulators");
    v->add_option("--graph", args->graphs, std::string("Graph (repeatable). ") + graph_spec_help())
        ->required();
    v->add_option("--cluster", args->cluster, "The calibrated cluster file (aware calibrate -o)")
        ->required();
    v->add_option("--backend", args->backend, "cpu or cuda")->capture_default_str();
    v->add_option("--option", args->options, "Backend option KEY=VALUE (repeatable)");
    v->add_option("--methods", args->methods, "Placers whose placements are run (comma list)")
        ->capture_default_str();
    v->add_option("--random", args->random, "Seeded random placements per graph")->capture_default_str();
    v->add_option("--rounds", args->rounds,
                  "Measure every placement this many times, each round in a new random order")
        ->capture_default_str();
    v->add_option("--seed", args->seed, "Seed of the random placements and the run order")
        ->capture_default_str()
        ->check(whole_range(0, std::numeric_limits<long long>::max()));
    v->add_option("--costs", args->costs, "Cost table (aware calibrate --costs-out) for the simulators");
    v->add_option("--uncalibrated", args->uncalibrated,
                  "The cluster of the uncalibrated column (default preset:cpu-host / preset:cuda-host)");
    v->add_option("--simulators", args->simulators, "Simulators to compare (comma list)")
        ->capture_default_str();
    v->add_option("--sim-option", args->sim_options,
                  "SIMULATOR:KEY=VALUE for one simulator (repeatable), e.g. "
                  "analytic:slowdown.memory=1.19 (calibrate reports the factors)");
    v->add_option("--slowdowns-from", args->slowdowns_from,
                  "Calibration report (aware calibrate --report or --json output) whose two-at-once "
                  "factors become analytic:slowdown.compute/.memory (and .memory_from_bytes)");
    v->add_option("--measured", args->measured,
                  "Take the measurements from this earlier validate JSON instead of running "
                  "(predict again with other simulator settings; an out-of-sample run is replayed with the "
                  "table it profiled as --costs, its --costs-out)");
    v->add_option("--protocol", args->protocol,
                  "out-of-sample (the default without --costs, and with --measured from such a run): profile the "
                  "graphs here, then "
                  "predict their multi-device placements, the same models at twice the batch and --holdout from "
                  "what was profiled; in-sample: the --costs table as given");
    v->add_option("--holdout", args->holdout,
                  std::string("Out of sample: a model measured and predicted but never profiled. ") + graph_spec_help());
    v->add_option("--pair-rounds", args->pair_rounds,
                  "Out of sample: rounds of each profiled graph beside a copy of itself, whose per-type slowdowns "
                  "price contention (0: the analytic simulator's two factors instead)")
        ->capture_default_str()
        ->check(whole_range(0, 100));
    v->add_option("--profile-rounds", args->profile_rounds, "Out of sample: rounds of the profile")
        ->capture_default_str()
        ->check(whole_range(1, 100));
    v->add_option("--bootstrap", args->bootstrap, "Resamples of Kendall tau's 90% interval")
        ->capture_default_str()
        ->check(whole_range(1, 100000));
    v->add_option("--costs-out", args->costs_out, "Out of sample: also write the profiled cost table here");
    v->add_option("-o,--out", args->out, "Write the table (.md, .csv, .json) here");
    v->add_option("--format", args->format, "table, md, csv or json");
    v->add_flag("--json", args->json, "Print JSON (rows and statistics)");
    v->callback([args] { run_validate(*args); });
  }
}

}  // namespace aware::cli
