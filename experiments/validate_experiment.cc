// The validation experiment (validate_experiment.h): measured steps of many
// placements against every simulator's prediction.
#include "experiments/validate_experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>

#include <nlohmann/json.hpp>

#include "core/cost_table.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/lists.h"
#include "core/placer.h"
#include "core/units.h"
#include "datasets/load.h"
#include "hw/calibrate.h"
#include "hw/validate.h"
#include "experiments/validate_detail.h"

namespace aware::experiments {

HardwareEvaluator& as_hardware(Evaluator& evaluator, const std::string& backend) {
  auto* hw = dynamic_cast<HardwareEvaluator*>(&evaluator);
  if (!hw)
    throw ConfigError("--backend " + backend +
                      " is not a hardware executor (use cpu, or cuda where it is built)");
  return *hw;
}

// The machine as a cluster: every core (cpu-host) or every GPU (cuda-host); for
// cuda with a device count, that many logical devices spread over the GPUs
// (cuda-host:N), so that a one-GPU machine still has several devices.
std::string default_host_cluster(const std::string& backend, int devices) {
  if (backend == "cuda")
    return devices > 0 ? "preset:cuda-host:" + std::to_string(devices) : "preset:cuda-host";
  return "preset:cpu-host";
}

Cluster host_cluster(const std::string& spec, int devices) {
  Cluster c = load_cluster(spec);
  if (devices > 0 && devices != c.num_devices()) c = restrict_devices(c, devices);
  return c;
}

namespace {


struct Row {
  std::string graph;
  std::string label;
  double measured_us = 0;
  double iqr_us = 0;
  std::map<std::string, double> predicted_us;
  // The largest per-device peak: as the executor measured it (when it measures
  // memory; replays keep what the earlier run recorded, or -1) and as each
  // simulator predicts it.
  double measured_peak_bytes = -1;
  std::map<std::string, double> predicted_peak_bytes;
};

struct Predictor {
  std::string label;
  std::unique_ptr<Evaluator> evaluator;
  const Cluster* cluster;
};

nlohmann::json stats_json(const PredictionError& e) {
  return {{"count", e.count},
          {"median_abs_rel_error", e.median_abs_rel},
          {"mean_abs_rel_error", e.mean_abs_rel},
          {"max_abs_rel_error", e.max_abs_rel},
          {"kendall_tau", e.kendall_tau}};
}

// The analytic simulator's slowdown options from a calibration report (aware
// calibrate --report FILE, or its --json output): the factors by which two
// devices working at once stretch a GEMM and a streaming op.
std::vector<std::string> slowdown_options(const std::string& path) {
  const nlohmann::json doc = parse_json_text(read_text_file(path), path);
  std::vector<std::string> out;
  for (const auto& [field, key] : {std::pair<const char*, const char*>{"concurrent_gemm_slowdown", "compute"},
                                   {"concurrent_stream_slowdown", "memory"}}) {
    if (!doc.is_object() || !doc.contains(field) || !doc.at(field).is_number())
      throw ParseError(path + ": field '" + field + "' missing or not a number (not a calibration report)");
    const double v = doc.at(field).get<double>();
    if (!(v > 0) || v > 100)
      throw ParseError(path + ": field '" + field + "' is " + std::to_string(v) +
                       " (a positive factor; 0 means calibrate measured one device only)");
    out.push_back(std::string("analytic:slowdown.") + key + "=" + std::to_string(v));
  }
  // Reports written before the streaming ladder lack it: every memory-bound op contends.
  if (doc.contains("concurrent_stream_from_bytes")) {
    const auto& f = doc.at("concurrent_stream_from_bytes");
    if (!f.is_number() || !(f.get<double>() >= 0))
      throw ParseError(path + ": field 'concurrent_stream_from_bytes' is not a byte count >= 0");
    out.push_back("analytic:slowdown.memory_from_bytes=" + std::to_string(f.get<double>()));
  }
  return out;
}

}  // namespace

std::string run_validation(const ValidationConfig& a_in, const std::string& format,
                           const std::function<void(const std::string&)>& log) {
  ValidationConfig a = a_in;
  if (!a.slowdowns_from.empty()) {
    const std::vector<std::string> sims = split_list(a.simulators);
    if (std::find(sims.begin(), sims.end(), "analytic") == sims.end())
      throw ConfigError("--slowdowns-from sets the analytic simulator's slowdowns: add analytic to --simulators");
    for (const std::string& o : slowdown_options(a.slowdowns_from)) a.sim_options.push_back(o);
  }
  if (a.random < 0 || a.random > 10000) throw ConfigError("--random must be 0..10000");
  if (a.rounds < 1 || a.rounds > 1000) throw ConfigError("--rounds must be 1..1000");
  if (a.cluster.empty()) throw ConfigError("--cluster is required (a calibrated cluster file)");
  std::string protocol = a.protocol;
  if (protocol.empty() && !a.measured.empty()) {
    // A replay follows the protocol of the run it replays.
    const nlohmann::json doc = parse_json_text(read_text_file(a.measured), a.measured);
    protocol = doc.is_object() && doc.value("protocol", std::string()) == "out-of-sample" ? "out-of-sample" : "in-sample";
  }
  if (protocol.empty()) protocol = a.costs.empty() ? "out-of-sample" : "in-sample";
  if (protocol != "in-sample" && protocol != "out-of-sample")
    throw ConfigError("--protocol must be in-sample or out-of-sample, got '" + protocol + "'");
  if (protocol == "in-sample" && !a.holdout.empty())
    throw ConfigError("--holdout is a model the out-of-sample protocol never profiles: add --protocol out-of-sample");
  std::vector<OpGraph> graphs;
  for (const std::string& spec : a.graphs) graphs.push_back(load_graph(spec));
  const Cluster cluster = load_cluster(a.cluster);
  if (a.backend == "cpu") require_cpu_devices(cluster, a.cluster, "--backend cpu");
  // The uncalibrated column's cluster: named by the user, or this machine's host
  // preset; an error names which, and the --cluster it has to match.
  const std::string uncalibrated_spec =
      a.uncalibrated.empty() ? default_host_cluster(a.backend, cluster.num_devices()) : a.uncalibrated;
  Cluster uncalibrated("");
  try {
    uncalibrated = host_cluster(uncalibrated_spec, cluster.num_devices());
  } catch (const ConfigError& e) {
    throw ConfigError("--cluster " + a.cluster + " has " + std::to_string(cluster.num_devices()) +
                      " devices, but the uncalibrated column's cluster " + uncalibrated_spec +
                      (a.uncalibrated.empty() ? " (the default for --backend " + a.backend + ")" : std::string()) +
                      " cannot give that many (" + first_line(e.what()) +
                      "): validate on this machine's devices, e.g. aware calibrate --devices N -o c.json, "
                      "then --cluster c.json");
  }
  if (uncalibrated.num_devices() != cluster.num_devices())
    throw ConfigError("--uncalibrated cluster has " + std::to_string(uncalibrated.num_devices()) +
                      " devices, --cluster " + std::to_string(cluster.num_devices()));
  // The cluster checks above hold for both protocols; the rest is in sample.
  if (protocol == "out-of-sample") return run_out_of_sample(a, format, log);
  // A preset's rates are a data sheet's (or a guess), not this machine's: the
  // errors then measure the preset, which is not what a reader of the table takes
  // them for. Say so once, with the command that calibrates.
  if (!is_calibrated_cluster(cluster))
    log("warning: --cluster " + a.cluster + " was not calibrated (aware calibrate writes a '...-calibrated' "
        "cluster): its rates are not this machine's; run aware calibrate --backend " + a.backend +
        " --devices " + std::to_string(cluster.num_devices()) + " -o cluster.json and pass --cluster cluster.json");
  // How much of each graph the cost table prices without a profile of its own.
  nlohmann::json coverage_doc = nlohmann::json::object();
  std::string coverage_text;
  if (!a.costs.empty()) {
    const CostTable table = read_cost_table_file(a.costs);
    for (const OpGraph& g : graphs) {
      const CostTableCoverage c = cost_table_coverage(table, g, cluster);
      const double share = c.flops_total > 0 ? c.flops_unprofiled / c.flops_total : 0;
      coverage_doc[g.name()] = {{"ops", g.num_ops()},
                                {"ops_unprofiled", c.ops_unprofiled},
                                {"ops_by_fit", c.ops_by_fit},
                                {"ops_by_roofline", c.ops_unprofiled - c.ops_by_fit},
                                {"flops_unprofiled_share", share}};
      char line[256];
      std::snprintf(line, sizeof line,
                    "%s: %d of %d ops priced without a profile (%.1f%% of the FLOPs): %d by the table's fits, %d by the roofline",
                    g.name().c_str(), c.ops_unprofiled, g.num_ops(), 100 * share, c.ops_by_fit,
                    c.ops_unprofiled - c.ops_by_fit);
      log(line);
      coverage_text += std::string(line) + "\n";
    }
  }
  // --measured replays an earlier run: nothing is run, so no backend is opened (the
  // figures of a GPU run can be predicted again on a machine without one).
  std::unique_ptr<Evaluator> backend_evaluator;
  HardwareEvaluator* hw = nullptr;
  if (a.measured.empty()) {
    backend_evaluator = EvaluatorRegistry::instance().create(a.backend, parse_kv(a.options, "--option"));
    hw = &as_hardware(*backend_evaluator, a.backend);
  }

  // The predictors: each simulator on the calibrated cluster with the cost table,
  // and the uncalibrated cost model (roofline on the preset, no table).
  std::vector<Predictor> predictors;
  const auto& registry = EvaluatorRegistry::instance();
  for (const std::string& name : split_list(a.simulators)) {
    if (!registry.has(name)) {
      if (name == "simgrid") {
        log("simgrid is not built here; its column is left out");
        continue;
      }
      throw ConfigError("--simulators: unknown evaluator '" + name + "'");
    }
    Options options = detail::simulator_options(name, a.sim_options);
    if (!a.costs.empty()) options["costs"] = a.costs;
    predictors.push_back({name, registry.create(name, options), &cluster});
  }
  for (const std::string& item : a.sim_options) {
    const std::string sim = item.substr(0, item.find(':'));
    bool used = false;
    for (const Predictor& p : predictors) used = used || p.label == sim;
    if (!used) throw ConfigError("--sim-option '" + item + "': '" + sim + "' is not among --simulators");
  }
  predictors.push_back({"uncalibrated", registry.create("analytic"), &uncalibrated});
  std::unique_ptr<Evaluator> search_evaluator =
      registry.create("analytic", a.costs.empty() ? Options{} : Options{{"costs", a.costs}});

  // Placements: single, round-robin, every method, and seeded random ones.
  using Job = detail::PlacementJob;
  std::vector<Job> jobs;
  const std::vector<std::string> methods = split_list(a.methods);
  for (int gi = 0; gi < static_cast<int>(graphs.size()); ++gi)
    detail::add_validation_placements(jobs, gi, graphs[gi], cluster, methods, a.random, a.seed,
                                      search_evaluator.get(), log);

  // Measure in rounds, each in its own seeded random order, so that drift on the
  // machine does not line up with one graph or one method; a placement's time is
  // the median of its steps over every round.
  std::vector<Row> rows(jobs.size());
  std::vector<char> keep(jobs.size(), 1);
  std::vector<std::vector<double>> samples(jobs.size());
  std::vector<std::vector<double>> iqrs(jobs.size());
  std::vector<double> replayed_iqr(jobs.size(), -1);
  std::vector<double> measured_peak(jobs.size(), -1);
  std::mt19937_64 rng(a.seed);
  // --measured: the measurements of an earlier run (same graphs, seed and methods),
  // to predict them again with other simulator settings without running anything.
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> earlier;
  std::map<std::pair<std::string, std::string>, double> earlier_peak;
  std::string backend_settings = hw != nullptr ? hw->describe() : std::string();
  if (!a.measured.empty()) {
    const nlohmann::json doc = parse_json_text(read_text_file(a.measured), a.measured);
    if (doc.contains("backend_settings") && doc["backend_settings"].is_string())
      backend_settings = doc["backend_settings"].get<std::string>() + " (replayed from " + a.measured + ")";
    if (!doc.contains("rows") || !doc["rows"].is_array())
      throw ParseError(a.measured + ": not an aware validate JSON (no 'rows')");
    for (const auto& r : doc["rows"])
      earlier[{r.at("graph").get<std::string>(), r.at("placement").get<std::string>()}] = {
          r.at("measured_us").get<double>(), r.at("measured_iqr_us").get<double>()};
    for (const auto& r : doc["rows"])
      if (r.contains("measured_peak_bytes") && r["measured_peak_bytes"].is_number())
        earlier_peak[{r.at("graph").get<std::string>(), r.at("placement").get<std::string>()}] =
            r["measured_peak_bytes"].get<double>();
  }
  const int rounds = a.measured.empty() ? a.rounds : 0;
  for (size_t j = 0; j < jobs.size() && !a.measured.empty(); ++j) {
    const auto it = earlier.find({graphs[jobs[j].graph].name(), jobs[j].label});
    if (it == earlier.end()) {
      keep[j] = 0;
      log(graphs[jobs[j].graph].name() + " " + jobs[j].label + ": not in " +
                               a.measured + ", left out");
      continue;
    }
    samples[j] = {it->second.first};
    replayed_iqr[j] = it->second.second;
    const auto peak = earlier_peak.find(it->first);
    if (peak != earlier_peak.end()) measured_peak[j] = peak->second;
  }
  if (rounds > 0) {
    std::vector<const OpGraph*> graph_ptrs;
    for (const OpGraph& g : graphs) graph_ptrs.push_back(&g);
    const std::vector<detail::MeasuredJob> measured =
        detail::measure_in_rounds(*hw, graph_ptrs, jobs, cluster, rounds, rng, log);
    for (size_t j = 0; j < jobs.size(); ++j) {
      keep[j] = measured[j].feasible ? 1 : 0;
      samples[j] = measured[j].step_us;
      iqrs[j] = measured[j].iqr_us;
      measured_peak[j] = measured[j].peak_bytes;
    }
  }
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!keep[j]) continue;
    const Job& job = jobs[j];
    const OpGraph& g = graphs[job.graph];
    Row& row = rows[j];
    row.graph = g.name();
    row.label = job.label;
    row.measured_us = median_of(samples[j]);
    row.iqr_us = replayed_iqr[j] >= 0 ? replayed_iqr[j] : iqr_of(samples[j]);
    row.measured_peak_bytes = measured_peak[j];
    for (Predictor& p : predictors) {
      const StepResult r = p.evaluator->evaluate(g, *p.cluster, job.placement);
      row.predicted_us[p.label] = r.feasible ? r.step_time_us : std::nan("");
      row.predicted_peak_bytes[p.label] =
          r.peak_memory_bytes.empty() ? 0 : *std::max_element(r.peak_memory_bytes.begin(), r.peak_memory_bytes.end());
    }
  }

  // Statistics per graph and over everything.
  std::vector<std::string> labels;
  for (const Predictor& p : predictors) labels.push_back(p.label);
  std::map<std::string, std::map<std::string, PredictionError>> per_graph;  // graph -> sim -> error
  std::map<std::string, PredictionError> pooled;
  std::vector<double> spreads;
  for (const std::string& label : labels) {
    std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> series;
    std::vector<double> all_m, all_p;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (!keep[j]) continue;
      series[rows[j].graph].first.push_back(rows[j].measured_us);
      series[rows[j].graph].second.push_back(rows[j].predicted_us[label]);
      all_m.push_back(rows[j].measured_us);
      all_p.push_back(rows[j].predicted_us[label]);
    }
    for (const auto& [graph, s] : series) per_graph[graph][label] = prediction_error(s.first, s.second);
    pooled[label] = prediction_error(all_m, all_p);
  }
  for (size_t j = 0; j < rows.size(); ++j)
    if (keep[j] && rows[j].measured_us > 0) spreads.push_back(rows[j].iqr_us / rows[j].measured_us);
  const double spread = median_of(spreads);

  nlohmann::json doc;
  doc["backend"] = a.backend;
  doc["backend_settings"] = backend_settings;
  doc["cluster"] = a.cluster;
  doc["costs"] = a.costs;
  if (!a.costs.empty()) doc["costs_coverage"] = coverage_doc;
  doc["cluster_calibrated"] = is_calibrated_cluster(cluster);
  doc["rounds"] = a.rounds;
  doc["sim_options"] = a.sim_options;
  if (!a.measured.empty()) doc["measured_from"] = a.measured;
  doc["measurement_spread_median_iqr_over_median"] = spread;
  nlohmann::json jrows = nlohmann::json::array();
  for (size_t j = 0; j < rows.size(); ++j) {
    if (!keep[j]) continue;
    nlohmann::json r = {{"graph", rows[j].graph},
                        {"placement", rows[j].label},
                        {"measured_us", rows[j].measured_us},
                        {"measured_iqr_us", rows[j].iqr_us}};
    for (const auto& [label, us] : rows[j].predicted_us) r["predicted_us"][label] = us;
    if (rows[j].measured_peak_bytes >= 0) {
      r["measured_peak_bytes"] = rows[j].measured_peak_bytes;
      for (const auto& [label, bytes] : rows[j].predicted_peak_bytes) r["predicted_peak_bytes"][label] = bytes;
    }
    jrows.push_back(r);
  }
  doc["rows"] = jrows;
  for (const std::string& label : labels) {
    doc["summary"]["all"][label] = stats_json(pooled[label]);
    for (const auto& [graph, sims] : per_graph) doc["summary"][graph][label] = stats_json(sims.at(label));
  }

  std::string text;
  if (format == "json") {
    text = doc.dump(1) + "\n";
  } else if (format == "csv") {
    text = "graph,placement,measured_us,measured_iqr_us";
    for (const std::string& label : labels) text += "," + label + "_us";
    text += "\n";
    for (size_t j = 0; j < rows.size(); ++j) {
      if (!keep[j]) continue;
      char buffer[128];
      std::snprintf(buffer, sizeof buffer, "%s,%s,%.3f,%.3f", rows[j].graph.c_str(),
                    rows[j].label.c_str(), rows[j].measured_us, rows[j].iqr_us);
      text += buffer;
      for (const std::string& label : labels) {
        std::snprintf(buffer, sizeof buffer, ",%.3f", rows[j].predicted_us[label]);
        text += buffer;
      }
      text += "\n";
    }
  } else {
    const bool md = format == "md";
    char buffer[256];
    text += md ? "| graph | placements | simulator | median abs error | mean | max | Kendall tau |\n"
                 "|---|---:|---|---:|---:|---:|---:|\n"
               : "graph                     n  simulator      median err   mean err    max err    tau\n";
    auto add = [&](const std::string& graph, const std::string& label, const PredictionError& e) {
      std::snprintf(buffer, sizeof buffer,
                    md ? "| %s | %d | %s | %.1f%% | %.1f%% | %.1f%% | %.3f |\n"
                       : "%-22s %4d  %-13s %9.1f%% %9.1f%% %9.1f%% %6.3f\n",
                    graph.c_str(), e.count, label.c_str(), 100 * e.median_abs_rel,
                    100 * e.mean_abs_rel, 100 * e.max_abs_rel, e.kendall_tau);
      text += buffer;
    };
    for (const auto& [graph, sims] : per_graph)
      for (const std::string& label : labels) add(graph, label, sims.at(label));
    for (const std::string& label : labels) add("all", label, pooled.at(label));
    std::snprintf(buffer, sizeof buffer,
                  "%smeasurement spread (median IQR / median over placements): %.2f%%\n",
                  md ? "\n" : "", 100 * spread);
    text += buffer;
    for (const std::string& label : labels) {
      std::vector<double> ratios;
      for (size_t j = 0; j < rows.size(); ++j)
        if (keep[j] && rows[j].measured_peak_bytes > 0 && rows[j].predicted_peak_bytes[label] > 0)
          ratios.push_back(rows[j].measured_peak_bytes / rows[j].predicted_peak_bytes[label]);
      if (ratios.empty()) continue;
      std::sort(ratios.begin(), ratios.end());
      std::snprintf(buffer, sizeof buffer,
                    "%speak memory, measured / %s's prediction (largest device, %zu placements): median %.2f, range %.2f-%.2f\n",
                    md ? "\n" : "", label.c_str(), ratios.size(), median_of(ratios), ratios.front(), ratios.back());
      text += buffer;
    }
    if (!coverage_text.empty()) {
      text += md ? "\ncost table " + a.costs + ":\n\n" : "cost table " + a.costs + ":\n";
      size_t start = 0;
      for (size_t end; (end = coverage_text.find('\n', start)) != std::string::npos; start = end + 1)
        text += (md ? "- " : "  ") + coverage_text.substr(start, end - start + 1);
    }
  }
  return text;
}


namespace detail {

void add_validation_placements(std::vector<PlacementJob>& jobs, int graph_index, const OpGraph& g,
                               const Cluster& cluster, const std::vector<std::string>& methods, int random,
                               std::uint64_t seed, Evaluator* search_evaluator, const Log& log) {
  for (int d = 0; d < cluster.num_devices(); ++d)
    jobs.push_back({graph_index, "single:" + cluster.device(d).name, single_device_placement(g, d)});
  jobs.push_back({graph_index, "round-robin", round_robin_placement(g, cluster)});
  for (const std::string& method : methods) {
    auto placer = PlacerRegistry::instance().create(method);
    PlaceContext context;
    context.evaluator = search_evaluator;
    context.seed = seed;
    log(g.name() + ": placing with " + method);
    jobs.push_back({graph_index, method, placer->place(g, cluster, context)});
  }
  auto sampler = PlacerRegistry::instance().create("random");
  for (int i = 0; i < random; ++i) {
    PlaceContext context;
    context.seed = seed * 1000 + static_cast<std::uint64_t>(i);
    jobs.push_back({graph_index, "random:" + std::to_string(i), sampler->place(g, cluster, context)});
  }
}

std::vector<MeasuredJob> measure_in_rounds(HardwareEvaluator& hw, const std::vector<const OpGraph*>& graphs,
                                           const std::vector<PlacementJob>& jobs, const Cluster& cluster, int rounds,
                                           std::mt19937_64& rng, const Log& log) {
  std::vector<MeasuredJob> out(jobs.size());
  const int total = static_cast<int>(jobs.size()) * rounds;
  int done = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> order(jobs.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (int j : order) {
      if (!out[j].feasible) continue;
      const PlacementJob& job = jobs[j];
      const OpGraph& g = *graphs[job.graph];
      const StepResult measured = hw.evaluate(g, cluster, job.placement);
      ++done;
      const std::string where =
          "[" + std::to_string(done) + "/" + std::to_string(total) + "] " + g.name() + " " + job.label;
      if (!measured.feasible) {
        log(where + ": infeasible, left out (" + measured.infeasible_reason + ")");
        out[j].feasible = false;
        continue;
      }
      const Measurement& m = hw.last_measurement();
      if (!m.measured_peak_bytes.empty())
        out[j].peak_bytes = std::max(out[j].peak_bytes,
                                     *std::max_element(m.measured_peak_bytes.begin(), m.measured_peak_bytes.end()));
      if (!m.reserved_bytes.empty())
        out[j].reserved_bytes = std::max(out[j].reserved_bytes,
                                         *std::max_element(m.reserved_bytes.begin(), m.reserved_bytes.end()));
      out[j].step_us.insert(out[j].step_us.end(), m.step_us.begin(), m.step_us.end());
      out[j].iqr_us.push_back(m.iqr_us);
      log(where + ": measured " + format_ms(m.median_us));
    }
  }
  return out;
}

Options simulator_options(const std::string& name, const std::vector<std::string>& sim_options) {
  Options options;
  for (const std::string& item : sim_options) {
    const size_t colon = item.find(':');
    const size_t equals = item.find('=');
    if (colon == std::string::npos || equals == std::string::npos || equals < colon)
      throw ConfigError("--sim-option must be SIMULATOR:KEY=VALUE, got '" + item + "'");
    if (item.substr(0, colon) == name) options[item.substr(colon + 1, equals - colon - 1)] = item.substr(equals + 1);
  }
  return options;
}

std::pair<double, double> kendall_tau_interval(const std::vector<double>& x, const std::vector<double>& y,
                                               int resamples, std::uint64_t seed) {
  if (x.size() < 2 || resamples < 1) return {0, 0};
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, x.size() - 1);
  std::vector<double> taus;
  std::vector<double> bx(x.size()), by(y.size());
  for (int r = 0; r < resamples; ++r) {
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t k = pick(rng);
      bx[i] = x[k];
      by[i] = y[k];
    }
    taus.push_back(kendall_tau(bx, by));
  }
  std::sort(taus.begin(), taus.end());
  const auto at = [&](double q) { return taus[static_cast<size_t>(q * static_cast<double>(taus.size() - 1))]; };
  return {at(0.05), at(0.95)};
}

}  // namespace detail

}  // namespace aware::experiments
