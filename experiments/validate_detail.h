// What the two validation protocols (validate_experiment.cc: in sample, a given
// cost table; validate_protocol.cc: out of sample, profiled here) share: the
// placements each graph is measured under, the rounds that measure them, the
// simulators' options, and the statistics beyond the error (a bootstrap interval
// for Kendall's tau). Internal to experiments/.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "hw/executor.h"

namespace aware::experiments::detail {

using Log = std::function<void(const std::string&)>;

struct PlacementJob {
  int graph = 0;        // index into the caller's graphs
  std::string label;    // "single:cpu0", "round-robin", "m-etf", "random:3"
  Placement placement;
};

// Single on each device, round-robin, each method (placed with
// `search_evaluator`) and `random` seeded random placements of `graph`.
void add_validation_placements(std::vector<PlacementJob>& jobs, int graph_index, const OpGraph& graph,
                               const Cluster& cluster, const std::vector<std::string>& methods, int random,
                               std::uint64_t seed, Evaluator* search_evaluator, const Log& log);

struct MeasuredJob {
  bool feasible = true;
  std::vector<double> step_us;  // every measured step over the rounds
  std::vector<double> iqr_us;   // each round's run-to-run IQR
  double peak_bytes = -1;       // the largest device's measured peak (-1: not measured)
  double reserved_bytes = -1;   // the largest device's reserved bytes (-1: not reported)
};

// Measures every job `rounds` times, each round in a new order drawn from `rng`,
// so that drift on the machine does not line up with one graph or method.
std::vector<MeasuredJob> measure_in_rounds(HardwareEvaluator& hw, const std::vector<const OpGraph*>& graphs,
                                           const std::vector<PlacementJob>& jobs, const Cluster& cluster, int rounds,
                                           std::mt19937_64& rng, const Log& log);

// The options of simulator `name` from --sim-option SIMULATOR:KEY=VALUE items
// (ConfigError for one not of that form).
Options simulator_options(const std::string& name, const std::vector<std::string>& sim_options);

// Kendall's tau-b of (x, y) over `resamples` bootstrap resamples of the pairs
// (seeded): the 5th and 95th percentiles.
std::pair<double, double> kendall_tau_interval(const std::vector<double>& x, const std::vector<double>& y,
                                               int resamples, std::uint64_t seed);

}  // namespace aware::experiments::detail

namespace aware::experiments {
struct ValidationConfig;
// The out-of-sample protocol (validate_protocol.cc); run_validation routes to it.
std::string run_out_of_sample(const ValidationConfig& config, const std::string& format, const detail::Log& log);
}  // namespace aware::experiments
