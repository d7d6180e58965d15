// Calibration: measures a backend with small synthetic steps run through its
// own executor (so the figures include exactly the overheads a real step pays)
// and writes a cluster whose rates are the measured ones; profiles a graph's ops
// into a cost table (op -> µs per device kind) that the simulators honour.
//
// Backend-agnostic: everything goes through a HardwareEvaluator ("cpu", "cuda").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/op_graph.h"
#include "hw/executor.h"

namespace aware {

struct CalibrationOptions {
  std::vector<int> gemm_sizes = {64, 128, 256, 512, 1024};  // square GEMMs, m = n = k
  double stream_bytes = 64e6;                                // bytes read + written
  // Smaller streaming passes, two devices at once: from which size the devices
  // compete for memory bandwidth (below it a pass stays in a core's own cache).
  std::vector<double> stream_ladder_bytes = {256e3, 1e6, 4e6, 8e6, 16e6, 32e6};
  std::vector<double> copy_bytes = {4e3, 64e3, 1e6, 8e6, 32e6};
  int chain = 5;          // identical ops per measurement (their median is taken)
  int overhead_ops = 200; // tiny ops in the launch-overhead chain
};

struct GemmRate {
  int size = 0;
  double flops_per_s = 0;
};

// Time = latency + bytes / bandwidth, least squares over a sweep of copies.
struct CopyFit {
  int src = -1, dst = -1;
  double bandwidth_Bps = 0;
  double latency_us = 0;
  std::vector<std::pair<double, double>> samples;  // (bytes, µs)
};

struct Calibration {
  std::string backend;
  std::vector<GemmRate> gemm;      // device 0
  // The sweep fitted as time = gemm_overhead_us + flops / fitted_flops (relative
  // least squares); peak_flops = max(best measured rate, fitted_flops) and
  // efficiency = fitted_flops / peak_flops, so the roofline (which adds the
  // per-op overhead below) prices a large GEMM at the rate large GEMMs reached.
  double peak_flops = 0;
  double efficiency = 1;
  double fitted_flops = 0;
  double gemm_overhead_us = 0;
  double memory_Bps = 0;           // streaming rate (bytes read + written per s)
  double launch_overhead_us = 0;   // per op, from a chain of tiny ops
  std::vector<CopyFit> copies;     // every ordered pair of devices
  // Two equal chains of GEMMs (of streaming ops) on devices 0 and 1 at once,
  // against both chains on device 0: the time of the pair over half the time of
  // one device. 1 = the two devices are independent; 2 = they share one device's
  // throughput. The simulators assume 1; the measured value says how far off that is.
  double concurrent_gemm_slowdown = 0;    // 0 when the cluster has one device
  double concurrent_stream_slowdown = 0;
  // The streaming pair at each ladder size and at stream_bytes: (bytes, factor).
  std::vector<std::pair<double, double>> stream_slowdown_by_bytes;
  // The smallest ladder size from which every larger pass is slowed by at least
  // half the large pass's slowdown (0 when the large pass itself is slowed by
  // less than 5%): the analytic simulator's slowdown.memory_from_bytes.
  double concurrent_stream_from_bytes = 0;
  Cluster cluster;                 // the base cluster with the measured rates
};

using CalibrationLog = std::function<void(const std::string&)>;

// Measures `backend` on the devices of `base` (which names how many devices and
// their memory) and returns the calibrated cluster: devices keep their names,
// kinds and memory and take the measured rates; links become a star whose
// routes reproduce the median measured copy latency and bandwidth. Throws
// HardwareError from the backend, ConfigError on bad options.
Calibration calibrate(HardwareEvaluator& backend, const Cluster& base,
                      const CalibrationOptions& options = {}, const CalibrationLog& log = {});

// From (bytes, two-at-once slowdown) pairs sorted by bytes, the last of them the
// large streaming pass: the smallest size from which every pair is slowed by at
// least half as much as the last (1 + (last - 1) / 2); 0 when the last is slowed
// by less than 5% or there is only one pair.
double stream_contention_from_bytes(const std::vector<std::pair<double, double>>& by_bytes);

// Whether `cluster` came out of calibrate(): its name ends in "-calibrated".
bool is_calibrated_cluster(const Cluster& cluster);

// Sets peak_flops, efficiency, fitted_flops and gemm_overhead_us from
// `cal.gemm` (see Calibration). Throws ConfigError when it is empty.
void fit_gemm_sweep(Calibration& cal);

// Fits time = latency + bytes / bandwidth to (bytes, µs) samples (least squares;
// latency clamped at 0). Needs two distinct sizes; throws ConfigError otherwise.
CopyFit fit_copy(const std::vector<std::pair<double, double>>& samples);

// Runs each graph with every op on the first device of each kind in `cluster`,
// `rounds` times (graph after graph, round after round, so that a passing
// disturbance hits one round of every graph rather than every round of one), and
// returns each op's median time over the rounds' per-op medians as a cost table
// entry for that kind, with per-type fits to them (core/cost_fit.h) that price
// the ops no graph had.
CostTable profile_graphs(HardwareEvaluator& backend, const std::vector<OpGraph>& graphs,
                         const Cluster& cluster, int rounds = 3, const CalibrationLog& log = {});
// Contention measured on the graphs' own ops: each graph and a copy of it run at
// once, one on each of two devices of a kind, `rounds` times; each op type's
// time over both copies, against `table`'s entries for the same ops run alone
// (profile_graphs), becomes the type's pair slowdown on that kind, and the time
// of every op the kind's "*" (CostTable::pair_slowdowns; existing factors of the
// kind are replaced). Kinds with one device are skipped. Returns the number of
// factors set. Throws ConfigError when a graph does not fit (two copies must).
int profile_pair_slowdowns(HardwareEvaluator& backend, const std::vector<OpGraph>& graphs, const Cluster& cluster,
                           int rounds, CostTable& table, const CalibrationLog& log = {});

CostTable profile_graph(HardwareEvaluator& backend, const OpGraph& graph, const Cluster& cluster,
                        const CalibrationLog& log = {});

// The calibration's figures as JSON (what `aware calibrate --report` writes).
std::string calibration_report_json(const Calibration& calibration);

}  // namespace aware
