// Worker side of the simgrid evaluator: the process's one SimGrid Engine, the
// platform built from a Cluster (or loaded from a SimGrid XML file), and the
// translation of a placed OpGraph into a SimGrid activity DAG.
//
// Only aware-simgrid-worker links this (it needs SimGrid); the header itself
// names no SimGrid type. Not thread-safe: SimGrid allows one Engine per process.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

class DagSimulator {
 public:
  // Creates the Engine, sets the exact network factors (latency-factor 1,
  // bandwidth-factor 1, crosstraffic 0, TCP-gamma 0), then `cfg` entries
  // ("KEY:VALUE", applied in order, so they override the defaults). Throws
  // ConfigError naming the entry on an unknown key or a bad value.
  explicit DagSimulator(const std::vector<std::string>& cfg);
  ~DagSimulator();
  DagSimulator(const DagSimulator&) = delete;
  DagSimulator& operator=(const DagSimulator&) = delete;

  // Builds the platform once per process: each device a host of speed
  // peak_flops * efficiency, each link a split-duplex link, each switch a
  // router, and for every ordered device pair the route Cluster::route gives.
  // When `platform_file` is non-empty the SimGrid XML file is loaded instead and
  // every device must name one of its hosts. Throws DeviceError / ParseError.
  void load_cluster(const Cluster& cluster, const std::string& platform_file);

  // Simulates one step of `graph` placed by `placement` (see README.md for the
  // model). Times are µs from the start of this simulation, rounded to 1e-3 µs.
  // Reports every op span, then every transfer, to `observer` when non-null.
  StepResult evaluate(const OpGraph& graph, const Placement& placement, StepObserver* observer);

  // Prices ops from `table` (ops it lacks keep compute_us or the roofline), both
  // for the SimGrid execs and for the analytic schedule that fixes each device's
  // order. Applies from the next evaluate().
  void set_cost_table(CostTable table);

  // The settings in use, for Evaluator::describe().
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace aware
