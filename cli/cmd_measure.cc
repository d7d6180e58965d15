// aware measure: the real LibTorch training step of a TorchScript model against
// the cpu executor's measured step and the simulators' prediction, for the graph
// the importer makes of the same file, all single-device on this machine's CPU.
#include <cstdio>
#include <iostream>

#include "cli/cli_common.h"
#include "core/errors.h"
#include "datasets/torchscript_import.h"
#include "experiments/validate_experiment.h"
#include "hw/calibrate.h"
#include "hw/executor.h"
#include "hw/torch_step.h"

namespace aware::cli {
namespace {

struct MeasureArgs {
  std::string model;
  double batch = 0;
  std::string optimizer = "momentum";
  std::vector<std::string> input_shapes;
  std::string cluster;
  std::string costs;
  int repeats = 5;
  int warmup = 1;
  int threads = 1;
  bool executor = true;
  std::string out;
  std::string format;
  bool json = false;
};

struct Row {
  std::string what;
  double step_us = 0;
  double iqr_us = -1;  // < 0: a prediction
  std::string note;
};

void run_measure(const MeasureArgs& a) {
  const std::string format = table_format(a.format, a.json, a.out);
  if (format == "csv") throw ConfigError("measure writes a table, md or json, not csv");
  check_distinct_files({{"-o", a.out}}, {{"model", a.model}, {"--cluster", a.cluster}, {"--costs", a.costs}});
  prepare_output_path(a.out, "-o");
  if (a.repeats < 1 || a.warmup < 0 || a.threads < 1)
    throw ConfigError("--repeats must be >= 1, --warmup >= 0 and --threads >= 1");
  const ModelImportOptions options = model_import_options(a.batch, a.optimizer, a.input_shapes);
  const OpGraph graph = import_torchscript(a.model, options);
  const std::string spec = a.cluster.empty() ? experiments::default_host_cluster("cpu", 1) : a.cluster;
  const Cluster cluster = experiments::host_cluster(spec, 0);
  require_cpu_devices(cluster, spec, "measure");
  if (!is_calibrated_cluster(cluster))
    std::fprintf(stderr,
                 "warning: --cluster %s was not calibrated (aware calibrate writes a '...-calibrated' cluster): "
                 "the prediction uses its preset rates, not this machine's; run aware calibrate --backend cpu "
                 "-o cluster.json and pass --cluster cluster.json\n",
                 spec.c_str());
  const Placement single(std::vector<int>(graph.num_ops(), 0));

  std::vector<Row> rows;
  std::fprintf(stderr, "measure: %s: the LibTorch step, %d warm-up + %d timed, %d thread%s\n", a.model.c_str(),
               a.warmup, a.repeats, a.threads, a.threads == 1 ? "" : "s");
  TorchStepOptions torch_options;
  torch_options.repeats = a.repeats;
  torch_options.warmup = a.warmup;
  torch_options.threads = a.threads;
  TorchStepInputs inputs;
  inputs.batch = options.batch;
  inputs.input_shapes = options.input_shapes;
  inputs.optimizer = options.optimizer;
  const TorchStepResult real = measure_torch_step(a.model, inputs, torch_options);
  char note[160];
  std::snprintf(note, sizeof note, "forward + autograd backward + %s step; loss %.4g -> %.4g", a.optimizer.c_str(),
                real.first_loss, real.last_loss);
  rows.push_back({"libtorch", real.median_us, real.iqr_us, note});
  if (a.executor) {
    std::fprintf(stderr, "measure: the cpu executor on the imported graph (%d ops)\n", graph.num_ops());
    std::unique_ptr<Evaluator> cpu =
        make_evaluator("cpu", "", {"repeats=" + std::to_string(a.repeats), "warmup=" + std::to_string(a.warmup)});
    HardwareEvaluator& hw = experiments::as_hardware(*cpu, "cpu");
    const StepResult r = hw.evaluate(graph, cluster, single);
    if (!r.feasible) throw ConfigError("the cpu executor could not run the graph: " + r.infeasible_reason);
    rows.push_back({"cpu executor", r.step_time_us, hw.last_measurement().iqr_us, hw.describe()});
  }
  std::vector<std::string> sim_options;
  if (!a.costs.empty()) sim_options.push_back("costs=" + a.costs);
  const StepResult predicted = make_evaluator("analytic", "", sim_options)->evaluate(graph, cluster, single);
  rows.push_back({"analytic", predicted.step_time_us, -1,
                  "on " + spec + (a.costs.empty() ? std::string() : " with " + a.costs)});

  nlohmann::json doc = {{"model", a.model},   {"inputs", real.inputs}, {"ops", graph.num_ops()},
                        {"parameters", real.parameters}, {"threads", real.threads}, {"cluster", spec},
                        {"cluster_calibrated", is_calibrated_cluster(cluster)}};
  for (const Row& r : rows) {
    nlohmann::json row = {{"what", r.what}, {"step_us", r.step_us}, {"note", r.note},
                          {"error_vs_libtorch", r.step_us / real.median_us - 1}};
    if (r.iqr_us >= 0) row["iqr_us"] = r.iqr_us;
    doc["rows"].push_back(row);
  }
  std::string text;
  if (format == "json") {
    text = doc.dump(1) + "\n";
  } else {
    const bool md = format == "md";
    char line[512];
    text += md ? "| step | ms | IQR ms | vs LibTorch | note |\n|---|---:|---:|---:|---|\n"
               : "step            ms       IQR ms   vs LibTorch  note\n";
    for (const Row& r : rows) {
      const std::string iqr = r.iqr_us >= 0 ? std::to_string(r.iqr_us / 1e3).substr(0, 6) : "-";
      std::snprintf(line, sizeof line, md ? "| %s | %.3f | %s | %+.1f%% | %s |\n" : "%-14s %8.3f %9s %+11.1f%%  %s\n",
                    r.what.c_str(), r.step_us / 1e3, iqr.c_str(), 100 * (r.step_us / real.median_us - 1),
                    r.note.c_str());
      text += line;
    }
    std::snprintf(line, sizeof line, "%smodel %s, inputs %s, %d ops, %.0f parameters\n", md ? "\n" : "",
                  a.model.c_str(), real.inputs.c_str(), graph.num_ops(), real.parameters);
    text += line;
  }
  if (!a.out.empty()) {
    write_text_file_atomic(a.out, text);
    std::printf("%swritten         %s\n", format == "json" ? "" : text.c_str(), a.out.c_str());
  } else {
    std::fputs(text.c_str(), stdout);
  }
}

}  // namespace

void add_measure_command(CLI::App& app) {
  auto args = std::make_shared<MeasureArgs>();
  CLI::App* m = app.add_subcommand(
      "measure", "Time a TorchScript model's real LibTorch training step on this CPU and set the cpu "
                 "executor's step and the simulator's prediction for its imported graph beside it");
  m->add_option("model", args->model, "A TorchScript MODEL.pt (.pth, .ts)")->required();
  m->add_option("--batch", args->batch, "Batch size: the data inputs' first dimension")
      ->check(whole_range(1, 10000000));
  m->add_option("--input-shape", args->input_shapes, "NAME=AxBx... for a data input (repeatable)");
  m->add_option("--optimizer", args->optimizer, "sgd, momentum, rmsprop or adam")->capture_default_str();
  m->add_option("--cluster", args->cluster,
                "The calibrated one-device cluster the prediction uses (aware calibrate --devices 1 -o ...; "
                "default preset:cpu-host, with a warning)");
  m->add_option("--costs", args->costs, "Cost table for the prediction (aware calibrate --costs-out)");
  m->add_option("--repeats", args->repeats, "Timed steps (the median is reported)")
      ->capture_default_str()
      ->check(whole_range(1, 10000));
  m->add_option("--warmup", args->warmup, "Untimed steps first")->capture_default_str()->check(whole_range(0, 10000));
  m->add_option("--threads", args->threads, "LibTorch's threads (1: one core, as the cpu executor's device)")
      ->capture_default_str()
      ->check(whole_range(1, 4096));
  m->add_flag("!--no-executor", args->executor, "Leave out the cpu executor's measurement");
  m->add_option("-o,--out", args->out, "Write the table (.md, .json, or text) here");
  m->add_option("--format", args->format, "table, md or json");
  m->add_flag("--json", args->json, "Print JSON");
  m->callback([args] { run_measure(*args); });
}

}  // namespace aware::cli
