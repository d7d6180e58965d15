#include "cli/cli_common.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "core/errors.h"
#include "core/formats.h"
#include "core/units.h"
#include "datasets/families.h"
#include "datasets/load.h"
#include "datasets/zoo.h"

namespace aware::cli {

CLI::Validator whole_range(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        std::size_t used = 0;
        long long value = 0;
        try {
          value = std::stoll(input, &used);
        } catch (const std::out_of_range&) {
          return "'" + input + "' is too large (" + std::to_string(min) + ".." + std::to_string(max) + ")";
        } catch (const std::exception&) {
          used = 0;
        }
        if (input.empty() || used != input.size()) return "'" + input + "' is not a whole number";
        if (value < min || value > max)
          return "'" + input + "' is out of range " + std::to_string(min) + ".." + std::to_string(max);
        return "";
      },
      "INT in " + std::to_string(min) + ".." + std::to_string(max));
}

CLI::Validator number_range(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        std::size_t used = 0;
        double value = 0;
        try {
          value = std::stod(input, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (input.empty() || used != input.size()) return "'" + input + "' is not a number";
        if (!std::isfinite(value)) return "'" + input + "' is not a finite number";
        if (value < min || value > max)
          return "'" + input + "' is out of range " + format_number(min) + ".." + format_number(max);
        return "";
      },
      "NUMBER in " + format_number(min) + ".." + format_number(max));
}

const std::string& graph_spec_help() {
  static const std::string text = [] {
    std::string models, families;
    for (const std::string& n : zoo_model_names()) models += (models.empty() ? "" : ", ") + n;
    for (const std::string& f : family_names()) families += (families.empty() ? "" : ", ") + f;
    return "Graph: a JSON file, zoo:NAME (" + models +
           "), zoo:NAME:key=value,... (a scaled model, keys batch, seq_len, hidden, layers, vocab, "
           "image_size; e.g. zoo:inception_v3:batch=1,image_size=96; the keys each model reads: aware "
           "list models), family:FAMILY:SEED (" + families + ") or random:N:SEED (a seeded layered DAG of N ops)";
  }();
  return text;
}


Placement resolve_placement(const std::string& spec, const OpGraph& graph, const Cluster& cluster) {
  if (spec == "single") return single_device_placement(graph, 0);
  if (spec == "round-robin") return round_robin_placement(graph, cluster);
  return read_placement_file(spec, graph, cluster);
}

void add_evaluator_options(CLI::App* command, EvaluatorChoice& choice, const std::string& label) {
  command
      ->add_option(
          "--evaluator", choice.name,
          registered_names_help(label, EvaluatorRegistry::instance().names(), "evaluators"))
      ->capture_default_str();
  command->add_option("--mode", choice.mode, "Analytic mode: contention (default) or placeto");
  command->add_option("--option", choice.options, "Evaluator option KEY=VALUE (repeatable)");
}

Options evaluator_options(const EvaluatorChoice& choice) {
  Options opts = parse_kv(choice.options, "--option");
  if (!choice.mode.empty()) {
    const auto given = opts.find("mode");
    if (given != opts.end() && given->second != choice.mode)
      throw ConfigError("--mode " + choice.mode + " and --option mode=" + given->second + " disagree");
    opts["mode"] = choice.mode;
  }
  return opts;
}

std::unique_ptr<Evaluator> make_evaluator(const std::string& name, const std::string& mode,
                                          const std::vector<std::string>& options) {
  return make_evaluator(EvaluatorChoice{name, mode, options});
}

std::unique_ptr<Evaluator> make_evaluator(const EvaluatorChoice& choice) {
  return EvaluatorRegistry::instance().create(choice.name, evaluator_options(choice));
}

StepInputs load_step_inputs(const std::string& graph_spec, const std::string& cluster_spec,
                            const EvaluatorChoice& evaluator, const std::string& strategy_spec,
                            std::uint64_t seed, long long budget_evals) {
  StepInputs in{load_graph(graph_spec), load_cluster(cluster_spec), make_evaluator(evaluator),
                std::nullopt};
  if (evaluator.name == "cpu") require_cpu_devices(in.cluster, cluster_spec, "--evaluator cpu");
  if (!strategy_spec.empty())
    in.strategy = run_strategy_rewrite(strategy_spec, in.original, in.cluster, in.evaluator.get(),
                                       seed, budget_evals);
  return in;
}

std::string table_format(const std::string& format, bool json, const std::string& out) {
  if (json && !format.empty() && format != "json")
    throw ConfigError("--json and --format " + format + " disagree");
  std::string f = json ? "json" : format;
  if (f != "" && f != "table" && f != "md" && f != "csv" && f != "json")
    throw ConfigError("--format must be table, md, csv or json, got '" + f + "'");
  // What -o's extension says: .md, .csv, .json, .txt (the plain table); none
  // says nothing. Another extension, or one that contradicts --format/--json,
  // would write one format into a file named for another: refused.
  const std::string ext = std::filesystem::path(out).extension().string();
  std::string from_ext;
  if (ext == ".md") from_ext = "md";
  else if (ext == ".csv") from_ext = "csv";
  else if (ext == ".json") from_ext = "json";
  else if (ext == ".txt") from_ext = "table";
  else if (!ext.empty() && f.empty())
    throw ConfigError("-o " + out + ": '" + ext +
                      "' is not a table file's extension (.md, .csv, .json, or .txt for the plain table); "
                      "or give --format");
  if (!f.empty() && !from_ext.empty() && f != from_ext)
    throw ConfigError((json ? std::string("--json") : "--format " + f) + " and -o " + out + " (a " + from_ext +
                      " file by its extension) disagree");
  if (f.empty()) f = from_ext.empty() ? "table" : from_ext;
  return f;
}

nlohmann::json step_result_json(const StepResult& r, const Cluster& cluster, const LowerBound& bound) {
  nlohmann::json devices = nlohmann::json::array();
  for (int d = 0; d < cluster.num_devices(); ++d) {
    devices.push_back({{"name", cluster.device(d).name},
                       {"busy_us", r.device_busy_us[d]},
                       {"peak_memory_bytes", r.peak_memory_bytes[d]},
                       {"memory_bytes", cluster.device(d).memory_bytes}});
  }
  nlohmann::json out = {{"evaluator", r.evaluator},
                        {"step_time_us", r.step_time_us},
                        {"feasible", r.feasible},
                        {"bytes_moved", r.bytes_moved},
                        {"transfers", r.transfers},
                        {"lower_bound_us", bound.bound_us()},
                        {"critical_path_us", bound.critical_path_us},
                        {"work_bound_us", bound.work_us},
                        {"ratio_to_lower_bound", bound.bound_us() > 0 ? r.step_time_us / bound.bound_us() : 0.0},
                        {"devices", devices}};
  if (!r.feasible) out["infeasible_reason"] = r.infeasible_reason;
  if (!r.notes.empty()) out["notes"] = r.notes;
  return out;
}

namespace {

// Per device, the time in which at least one of its ops runs: the union of its op
// spans, so a compute op and a collective running side by side count once.
std::vector<double> device_active_us(const Trace& trace, int devices) {
  std::vector<std::vector<std::pair<double, double>>> spans(devices);
  for (const OpSpan& s : trace.ops)
    if (s.device >= 0 && s.device < devices && s.end_us > s.start_us) spans[s.device].push_back({s.start_us, s.end_us});
  std::vector<double> active(devices, 0);
  for (int d = 0; d < devices; ++d) {
    std::sort(spans[d].begin(), spans[d].end());
    double open = 0, close = -1;
    for (const auto& [start, end] : spans[d]) {
      if (start > close) {
        if (close > open) active[d] += close - open;
        open = start;
        close = end;
      } else {
        close = std::max(close, end);
      }
    }
    if (close > open) active[d] += close - open;
  }
  return active;
}

}  // namespace

void print_step_result(const StepResult& r, const Cluster& cluster, const LowerBound& bound,
                       const Trace* trace) {
  std::printf("step time      %s%s\n", format_ms(r.step_time_us).c_str(),
              r.feasible ? "" : "  (INFEASIBLE)");
  if (!r.feasible) std::printf("infeasible     %s\n", r.infeasible_reason.c_str());
  std::printf("lower bound    %s  (critical path %s, work %s)\n", format_ms(bound.bound_us()).c_str(),
              format_ms(bound.critical_path_us).c_str(), format_ms(bound.work_us).c_str());
  if (bound.bound_us() > 0)
    std::printf("ratio to bound %s\n", format_fixed(r.step_time_us / bound.bound_us(), 3).c_str());
  std::printf("bytes moved    %s in %d transfers\n",
              format_bytes(r.bytes_moved, BytesStyle::kTable).c_str(), r.transfers);
  std::printf("%-16s %12s %8s %12s\n", "device", "busy", "util", "peak mem");
  const bool traced = trace != nullptr && !trace->ops.empty();
  const std::vector<double> active =
      traced ? device_active_us(*trace, cluster.num_devices()) : r.device_busy_us;
  for (int d = 0; d < cluster.num_devices(); ++d) {
    const double util = r.step_time_us > 0 ? active[d] / r.step_time_us : 0;
    std::printf("%-16s %12s %7.1f%% %12s\n", cluster.device(d).name.c_str(),
                format_ms(r.device_busy_us[d]).c_str(), 100 * util,
                format_bytes(r.peak_memory_bytes[d], BytesStyle::kTable).c_str());
  }
  // A device's two streams (Op::stream: compute, and the communication ops a
  // strategy inserts) run side by side and both count as busy.
  bool past_step = false;
  for (int d = 0; d < cluster.num_devices(); ++d)
    past_step = past_step || r.device_busy_us[d] > r.step_time_us * (1 + 1e-9);
  if (past_step && traced)
    std::printf("note           busy sums a device's compute and communication streams, which run side by "
                "side, so it can pass the step time; util is the share of the step in which either runs\n");
  else if (past_step)
    std::printf("note           busy sums a device's compute and communication streams, which run side by "
                "side, so it (and util, busy over the step) can pass the step time\n");
  for (const std::string& note : r.notes) std::printf("note           %s\n", note.c_str());
}

ModelImportOptions model_import_options(double batch, const std::string& optimizer,
                                        const std::vector<std::string>& input_shapes) {
  ModelImportOptions options;
  options.batch = batch;
  options.optimizer = optimizer;
  for (const std::string& item : input_shapes) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("--input-shape '" + item + "': expected NAME=AxBxC (e.g. input=1x3x224x224)");
    std::vector<std::int64_t> dims;
    std::stringstream in(item.substr(eq + 1));
    for (std::string d; std::getline(in, d, 'x');) {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(d.c_str(), &end, 10);
      if (d.empty() || *end != '\0' || v <= 0)
        throw ConfigError("--input-shape '" + item + "': dimension '" + d + "' is not a positive integer");
      if (errno == ERANGE)
        throw ConfigError("--input-shape '" + item + "': dimension '" + d + "' is too large");
      dims.push_back(v);
    }
    if (dims.empty()) throw ConfigError("--input-shape '" + item + "': no dimensions");
    if (!options.input_shapes.emplace(item.substr(0, eq), dims).second)
      throw ConfigError("--input-shape: input '" + item.substr(0, eq) + "' is given twice");
  }
  return options;
}

}  // namespace aware::cli
