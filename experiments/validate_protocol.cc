// The out-of-sample validation protocol (issue 40, part 4): nothing a prediction
// is judged on was profiled.
//
//  1. Profile each --graph at its batch B, every op on one device (the executor's
//     per-op medians into a cost table, with per-type fits: core/cost_fit.h).
//  2. Measure, in shuffled rounds: (a) each graph's placements (single on each
//     device, round-robin, each method, seeded random ones: none of them is the
//     profile, every multi-device one splits the graph in a way nothing measured);
//     (b) the same model at batch 2B (zoo specs), which nothing profiled; (c)
//     --holdout, a model never profiled.
//  3. Predict (a) with the table; (b) with each op's profile at B grown as its
//     type's fit grows from the op's size at B to its size at 2B
//     (scale_cost_table: no op is priced by a measurement at 2B); (c) with the
//     fits alone (the entries are dropped, so no op is priced by a profile of
//     another model).
//  4. Per model and set: median and max |error|, Kendall's tau with a bootstrap
//     90% interval, and two trivial predictors: every placement at the model's
//     mean measured step (its error), and "fewer cut edges is faster" (its tau).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/cost_fit.h"
#include "core/cost_table.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/lists.h"
#include "core/units.h"
#include "datasets/load.h"
#include "experiments/validate_detail.h"
#include "experiments/validate_experiment.h"
#include "hw/calibrate.h"
#include "hw/validate.h"

namespace aware::experiments {

namespace {

// "zoo:NAME[:k=v,...]" with batch set to `batch`; "" for a spec that is not a zoo model.
std::string with_batch(const std::string& spec, double batch) {
  if (spec.rfind("zoo:", 0) != 0 || !(batch >= 1)) return {};
  const std::string value = std::to_string(static_cast<long long>(std::llround(batch)));
  const size_t colon = spec.find(':', 4);
  if (colon == std::string::npos) return spec + ":batch=" + value;
  std::string keys;
  for (const std::string& item : split_list(spec.substr(colon + 1)))
    if (item.rfind("batch=", 0) != 0) keys += item + ",";
  return spec.substr(0, colon) + ":" + keys + "batch=" + value;
}

// A file removed when it goes out of scope.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& tag)
      : path((std::filesystem::temp_directory_path() /
              ("aware-validate-" + std::to_string(::getpid()) + "-" + tag + ".json"))
                 .string()) {}
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

int cut_edges(const OpGraph& graph, const Placement& placement) {
  int cut = 0;
  for (const Edge& e : graph.edges()) cut += placement[e.src] != placement[e.dst] ? 1 : 0;
  return cut;
}

// The steps an earlier out-of-sample run measured (its JSON rows), one job each,
// matched by graph and placement name; a job the file lacks is left out (not
// feasible), and one whose cut edges differ from the file's is an error (the
// placements were not made the same way).
std::vector<detail::MeasuredJob> replayed_measurements(const std::string& path, const std::vector<OpGraph>& graphs,
                                                       const std::vector<detail::PlacementJob>& jobs,
                                                       std::string& backend_settings, const detail::Log& log) {
  const nlohmann::json doc = parse_json_text(read_text_file(path), path);
  if (!doc.contains("rows") || !doc["rows"].is_array())
    throw ParseError(path + ": not an aware validate JSON (no 'rows')");
  if (doc.value("protocol", std::string()) != "out-of-sample")
    throw ParseError(path + ": field 'protocol': not an out-of-sample run (replay it with --protocol in-sample)");
  backend_settings = doc.value("backend_settings", std::string()) + " (replayed from " + path + ")";
  std::map<std::pair<std::string, std::string>, const nlohmann::json*> rows;
  for (const auto& r : doc["rows"]) {
    if (!r.contains("graph") || !r["graph"].is_string() || !r.contains("placement") || !r["placement"].is_string() ||
        !r.contains("measured_us") || !r["measured_us"].is_number())
      throw ParseError(path + ": a row lacks 'graph', 'placement' or 'measured_us'");
    rows[{r["graph"].get<std::string>(), r["placement"].get<std::string>()}] = &r;
  }
  std::vector<detail::MeasuredJob> out(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    const OpGraph& graph = graphs[jobs[j].graph];
    const auto it = rows.find({graph.name(), jobs[j].label});
    if (it == rows.end()) {
      out[j].feasible = false;
      log(graph.name() + " " + jobs[j].label + ": not in " + path + ", left out");
      continue;
    }
    const nlohmann::json& r = *it->second;
    if (r.contains("cut_edges") && r["cut_edges"].is_number_integer() &&
        r["cut_edges"].get<int>() != cut_edges(graph, jobs[j].placement))
      throw ConfigError(path + ": " + graph.name() + " " + jobs[j].label + " cut " +
                        std::to_string(r["cut_edges"].get<int>()) + " edges there and " +
                        std::to_string(cut_edges(graph, jobs[j].placement)) +
                        " here: replay with that run's graphs, methods, --random and --seed");
    out[j].step_us = {r["measured_us"].get<double>()};
    out[j].iqr_us = {r.value("measured_iqr_us", 0.0)};
    if (r.contains("measured_peak_bytes") && r["measured_peak_bytes"].is_number())
      out[j].peak_bytes = r["measured_peak_bytes"].get<double>();
  }
  return out;
}

struct Set {
  std::string model;   // the profiled model's name (or the held-out one's)
  std::string what;    // "placements", "batch 2B", "never profiled"
  std::vector<int> jobs;
};

}  // namespace

std::string run_out_of_sample(const ValidationConfig& a, const std::string& format, const detail::Log& log) {
  // A replay (--measured with --costs): the table an earlier out-of-sample run
  // profiled (its --costs-out) and the steps it measured (its JSON) are read
  // back, and only the predictions are made again, with today's fits and these
  // simulator settings. Nothing is run; the report says it is a replay.
  const bool replay = !a.measured.empty();
  if (replay && a.costs.empty())
    throw ConfigError("--protocol out-of-sample --measured replays an earlier run: give its profiled table as --costs "
                      "(what that run wrote with --costs-out)");
  if (!replay && !a.costs.empty())
    throw ConfigError("--protocol out-of-sample profiles its own cost table: leave out --costs (or give --measured "
                      "to replay an earlier run, or use --protocol in-sample)");
  if (replay && !a.costs_out.empty())
    throw ConfigError("--costs-out: a replay profiles nothing (its table is --costs)");
  if (a.profile_rounds < 1 || a.profile_rounds > 100) throw ConfigError("--profile-rounds must be 1..100");
  const std::vector<std::string> named = split_list(a.simulators);
  for (const std::string& name : named)
    if (name != "analytic" && name != "simgrid")
      throw ConfigError("--simulators: unknown evaluator '" + name + "'");
  for (const std::string& item : a.sim_options) {
    const std::string sim = item.substr(0, item.find(':'));
    detail::simulator_options(sim, {item});  // SIMULATOR:KEY=VALUE, or one line
    if (std::find(named.begin(), named.end(), sim) == named.end())
      throw ConfigError("--sim-option '" + item + "': '" + sim + "' is not among --simulators");
  }

  // Graphs: the profiled ones, each at 2B, the held-out one.
  std::vector<OpGraph> graphs;
  std::vector<Set> sets;
  std::vector<int> source_of;  // a batch-2B graph -> its profiled graph
  for (const std::string& spec : a.graphs) graphs.push_back(load_graph(spec));
  const int profiled = static_cast<int>(graphs.size());
  for (int i = 0; i < profiled; ++i) {
    const std::string doubled = with_batch(a.graphs[i], 2 * graphs[i].batch());
    if (doubled.empty()) {
      log(a.graphs[i] + ": not a zoo model with a batch, so no batch-2B set");
      continue;
    }
    graphs.push_back(load_graph(doubled));
    graphs.back().set_name(graphs[i].name() + "@2B");
    source_of.push_back(i);
  }
  const int before_holdout = static_cast<int>(graphs.size());
  if (!a.holdout.empty()) graphs.push_back(load_graph(a.holdout));

  const Cluster cluster = load_cluster(a.cluster);
  if (a.backend == "cpu") require_cpu_devices(cluster, a.cluster, "--backend cpu");
  if (!is_calibrated_cluster(cluster))
    log("warning: --cluster " + a.cluster + " was not calibrated (aware calibrate writes a '...-calibrated' "
        "cluster): its rates are not this machine's; run aware calibrate --backend " + a.backend +
        " --devices " + std::to_string(cluster.num_devices()) + " -o cluster.json and pass --cluster cluster.json");
  std::unique_ptr<Evaluator> backend;
  HardwareEvaluator* hw = nullptr;
  if (!replay) {
    backend = EvaluatorRegistry::instance().create(a.backend, parse_kv(a.options, "--option"));
    hw = &as_hardware(*backend, a.backend);
  }

  // 1. Profile the --graph models only (a replay reads that profile back and fits
  // it again, so a change to the fits is what the replay shows).
  const std::vector<OpGraph> to_profile(graphs.begin(), graphs.begin() + profiled);
  CostTable table;
  if (replay) {
    table = read_cost_table_file(a.costs);
    fit_cost_table(table, to_profile);
  } else {
    table = profile_graphs(*hw, to_profile, cluster, a.profile_rounds, log);
    // Contention from the profiled models' own ops, each beside a copy of itself:
    // not a placement that is validated (those split one graph across devices).
    if (a.pair_rounds > 0) profile_pair_slowdowns(*hw, to_profile, cluster, a.pair_rounds, table, log);
  }
  CostTable fits_only;
  fits_only.fits = table.fits;
  fits_only.pair_slowdowns = table.pair_slowdowns;
  const TempFile full_file("profile"), fits_file("fits");
  std::string profiled_specs;
  for (int i = 0; i < profiled; ++i) profiled_specs += (i ? "," : "") + a.graphs[i];
  write_cost_table_file(table, full_file.path, {profiled_specs, a.backend});
  write_cost_table_file(fits_only, fits_file.path, {profiled_specs, a.backend});
  if (!a.costs_out.empty()) write_cost_table_file(table, a.costs_out, {profiled_specs, a.backend});
  // (b) The same model at 2B: each op's profile at B, grown as its type's fit
  // grows (scale_cost_table); nothing of the 2B graph was profiled.
  std::vector<std::unique_ptr<TempFile>> scaled_files;
  for (int gi = profiled; gi < before_holdout; ++gi) {
    const OpGraph& source = graphs[source_of[gi - profiled]];
    int entries = 0;
    const CostTable scaled = scale_cost_table(table, source, graphs[gi], &entries);
    scaled_files.push_back(std::make_unique<TempFile>("scaled" + std::to_string(gi)));
    write_cost_table_file(scaled, scaled_files.back()->path, {profiled_specs + " scaled to " + graphs[gi].name(), a.backend});
    log(graphs[gi].name() + ": " + std::to_string(entries) + " of " + std::to_string(graphs[gi].num_ops()) +
        " ops priced by their profile at batch " + std::to_string(static_cast<long long>(std::llround(source.batch()))) +
        " scaled by their type's fit");
  }
  const auto costs_of = [&](int graph) {
    if (graph < profiled) return full_file.path;
    if (graph < before_holdout) return scaled_files[static_cast<size_t>(graph - profiled)]->path;
    return fits_file.path;
  };

  // 2. Placements, each graph placed by the methods with the costs it is predicted with.
  std::vector<detail::PlacementJob> jobs;
  const std::vector<std::string> methods = split_list(a.methods);
  for (int gi = 0; gi < static_cast<int>(graphs.size()); ++gi) {
    std::unique_ptr<Evaluator> search =
        EvaluatorRegistry::instance().create("analytic", {{"costs", costs_of(gi)}});
    const size_t first = jobs.size();
    detail::add_validation_placements(jobs, gi, graphs[gi], cluster, methods, a.random, a.seed, search.get(), log);
    Set set;
    set.model = graphs[gi].name();
    set.what = gi < profiled ? "held-out placements" : gi < before_holdout ? "batch 2B, not profiled" : "model never profiled";
    for (size_t j = first; j < jobs.size(); ++j) set.jobs.push_back(static_cast<int>(j));
    sets.push_back(set);
  }
  std::vector<const OpGraph*> pointers;
  for (const OpGraph& g : graphs) pointers.push_back(&g);
  std::mt19937_64 rng(a.seed);
  std::string backend_settings;
  std::vector<detail::MeasuredJob> measured;
  std::vector<double> iqr(jobs.size(), 0);  // each job's IQR over its measured steps
  if (replay) {
    measured = replayed_measurements(a.measured, graphs, jobs, backend_settings, log);
    for (size_t j = 0; j < jobs.size(); ++j) iqr[j] = measured[j].iqr_us.empty() ? 0 : measured[j].iqr_us[0];
  } else {
    measured = detail::measure_in_rounds(*hw, pointers, jobs, cluster, a.rounds, rng, log);
    backend_settings = hw->describe();
    for (size_t j = 0; j < jobs.size(); ++j)
      if (!measured[j].step_us.empty()) iqr[j] = iqr_of(measured[j].step_us);
  }

  // 3. Predictions.
  std::vector<std::string> simulators = split_list(a.simulators);
  const auto& registry = EvaluatorRegistry::instance();
  simulators.erase(std::remove_if(simulators.begin(), simulators.end(),
                                  [&](const std::string& s) {
                                    if (registry.has(s)) return false;
                                    log(s + " is not built here; its column is left out");
                                    return true;
                                  }),
                   simulators.end());
  std::map<std::string, std::vector<double>> predicted;  // simulator -> by job
  std::map<std::string, std::vector<double>> predicted_peak;  // simulator -> by job: the largest device's
  for (const std::string& sim : simulators) {
    std::map<std::string, std::unique_ptr<Evaluator>> by_costs;
    std::vector<std::string> tables = {full_file.path, fits_file.path};
    for (const auto& f : scaled_files) tables.push_back(f->path);
    for (const std::string& costs : tables) {
      Options options = detail::simulator_options(sim, a.sim_options);
      options["costs"] = costs;
      by_costs[costs] = registry.create(sim, options);
    }
    std::vector<double>& out = predicted[sim];
    std::vector<double>& peak = predicted_peak[sim];
    out.assign(jobs.size(), std::nan(""));
    peak.assign(jobs.size(), -1);
    for (size_t j = 0; j < jobs.size(); ++j) {
      const StepResult r = by_costs[costs_of(jobs[j].graph)]->evaluate(graphs[jobs[j].graph], cluster, jobs[j].placement);
      if (r.feasible) out[j] = r.step_time_us;
      if (!r.peak_memory_bytes.empty())
        peak[j] = *std::max_element(r.peak_memory_bytes.begin(), r.peak_memory_bytes.end());
    }
  }

  // 4. Statistics per set.
  nlohmann::json doc;
  doc["protocol"] = "out-of-sample";
  doc["backend"] = a.backend;
  doc["backend_settings"] = backend_settings;
  if (replay) doc["measured_from"] = a.measured;
  doc["cluster"] = a.cluster;
  doc["rounds"] = a.rounds;
  doc["profile_rounds"] = a.profile_rounds;
  doc["pair_rounds"] = a.pair_rounds;
  doc["pair_slowdown_types"] = static_cast<int>(table.pair_slowdowns.size());
  doc["sim_options"] = a.sim_options;
  std::vector<double> spreads;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!measured[j].feasible || measured[j].step_us.empty()) continue;
    const double m = median_of(measured[j].step_us);
    if (m > 0) spreads.push_back(iqr[j] / m);
    nlohmann::json row = {{"graph", graphs[jobs[j].graph].name()},
                          {"placement", jobs[j].label},
                          {"measured_us", m},
                          {"measured_iqr_us", iqr[j]},
                          {"cut_edges", cut_edges(graphs[jobs[j].graph], jobs[j].placement)}};
    for (const auto& [sim, values] : predicted) row["predicted_us"][sim] = values[j];
    if (measured[j].peak_bytes >= 0) {
      row["measured_peak_bytes"] = measured[j].peak_bytes;
      if (measured[j].reserved_bytes >= 0) row["measured_reserved_bytes"] = measured[j].reserved_bytes;
      for (const auto& [sim, values] : predicted_peak)
        if (values[j] > 0) row["predicted_peak_bytes"][sim] = values[j];
    }
    doc["rows"].push_back(row);
  }
  const double spread = median_of(spreads);
  doc["measurement_spread_median_iqr_over_median"] = spread;

  std::string text;
  const bool md = format == "md";
  char line[512];
  if (format != "json" && format != "csv")
    text += md ? "| model | set | n | simulator | median err | max err | Kendall tau [90% CI] | mean-step predictor: median err | cut-edges predictor: tau |\n"
                 "|---|---|---:|---|---:|---:|---|---:|---:|\n"
               : "model                  set                       n  simulator   median err   max err  tau [90% CI]        mean-step err  cut-edges tau\n";
  for (const Set& set : sets) {
    std::vector<double> m_all, cut;
    std::vector<int> kept;
    for (int j : set.jobs)
      if (measured[j].feasible && !measured[j].step_us.empty()) {
        kept.push_back(j);
        m_all.push_back(median_of(measured[j].step_us));
        cut.push_back(cut_edges(graphs[jobs[j].graph], jobs[j].placement));
      }
    if (kept.size() < 2) continue;
    const double mean = std::accumulate(m_all.begin(), m_all.end(), 0.0) / static_cast<double>(m_all.size());
    const PredictionError trivial = prediction_error(m_all, std::vector<double>(m_all.size(), mean));
    const double cut_tau = kendall_tau(cut, m_all);
    for (const auto& [sim, values] : predicted) {
      std::vector<double> p;
      for (int j : kept) p.push_back(values[j]);
      const PredictionError e = prediction_error(m_all, p);
      const auto [lo, hi] = detail::kendall_tau_interval(m_all, p, a.bootstrap, a.seed);
      doc["summary"].push_back({{"model", set.model},
                                {"set", set.what},
                                {"simulator", sim},
                                {"count", e.count},
                                {"median_abs_rel_error", e.median_abs_rel},
                                {"max_abs_rel_error", e.max_abs_rel},
                                {"kendall_tau", e.kendall_tau},
                                {"kendall_tau_90", {lo, hi}},
                                {"mean_step_median_abs_rel_error", trivial.median_abs_rel},
                                {"cut_edges_kendall_tau", cut_tau}});
      if (format == "json" || format == "csv") continue;
      std::snprintf(line, sizeof line,
                    md ? "| %s | %s | %d | %s | %.1f%% | %.1f%% | %.2f [%.2f, %.2f] | %.1f%% | %.2f |\n"
                       : "%-22s %-24s %3d  %-10s %9.1f%% %9.1f%%  %5.2f [%5.2f, %5.2f]  %12.1f%%  %12.2f\n",
                    set.model.c_str(), set.what.c_str(), e.count, sim.c_str(), 100 * e.median_abs_rel,
                    100 * e.max_abs_rel, e.kendall_tau, lo, hi, 100 * trivial.median_abs_rel, cut_tau);
      text += line;
    }
  }
  if (format == "json") return doc.dump(1) + "\n";
  if (format == "csv") {
    text = "graph,placement,measured_us,measured_iqr_us,cut_edges";
    for (const auto& [sim, values] : predicted) text += "," + sim + "_us";
    text += "\n";
    for (const auto& row : doc["rows"]) {
      std::snprintf(line, sizeof line, "%s,%s,%.3f,%.3f,%d", row["graph"].get<std::string>().c_str(),
                    row["placement"].get<std::string>().c_str(), row["measured_us"].get<double>(),
                    row["measured_iqr_us"].get<double>(), row["cut_edges"].get<int>());
      text += line;
      for (const auto& [sim, values] : predicted) {
        std::snprintf(line, sizeof line, ",%.3f", row["predicted_us"][sim].is_number() ? row["predicted_us"][sim].get<double>() : std::nan(""));
        text += line;
      }
      text += "\n";
    }
    return text;
  }
  std::snprintf(line, sizeof line,
                "%sprofiled: %d model(s) at their batch, %d round(s), beside a copy of itself %d round(s) (%d "
                "per-type contention factors); measured: %d round(s); measurement spread "
                "(median IQR / median over placements): %.2f%%\n",
                md ? "\n" : "", profiled, a.profile_rounds, replay ? 0 : a.pair_rounds,
                static_cast<int>(table.pair_slowdowns.size()), a.rounds, 100 * spread);
  text += line;
  if (replay)
    text += std::string(md ? "\n" : "") + "replayed: the measurements and the profile of " + a.measured + " and " +
            a.costs + ", predicted again with today's fits and these simulator settings (nothing was run)\n";
  // Peak memory: the largest device's measured bytes over each simulator's prediction.
  for (const auto& [sim, peaks] : predicted_peak) {
    std::vector<double> ratios;
    for (size_t j = 0; j < jobs.size(); ++j)
      if (measured[j].feasible && measured[j].peak_bytes > 0 && peaks[j] > 0)
        ratios.push_back(measured[j].peak_bytes / peaks[j]);
    if (ratios.empty()) continue;
    std::snprintf(line, sizeof line,
                  "%speak memory, measured / %s's prediction over %zu runs: median %.3f, range %.3f-%.3f\n",
                  md ? "\n" : "", sim.c_str(), ratios.size(), median_of(ratios),
                  *std::min_element(ratios.begin(), ratios.end()), *std::max_element(ratios.begin(), ratios.end()));
    text += line;
  }
  return text;
}

}  // namespace aware::experiments
