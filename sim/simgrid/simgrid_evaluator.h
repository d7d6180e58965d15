// The SimGrid evaluator, registered as "simgrid": scores a placement with
// SimGrid's flow-level network model (links shared fairly between concurrent
// transfers, multi-hop routes) and one in-order stream per device.
//
// SimGrid allows one Engine per process, so simulations run in a pool of
// aware-simgrid-worker processes (see README.md); this header names no SimGrid
// type and the library links no SimGrid.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/evaluator.h"

namespace aware {

class SimGridWorkerPool;

struct SimGridOptions {
  int workers = 0;        // worker processes; 0 = number of cores
  double timeout_s = 60;  // per request; a worker over it is killed and replaced
  // Extra SimGrid configuration, "KEY:VALUE", applied after the exact network
  // defaults (network/latency-factor:1, network/bandwidth-factor:1,
  // network/crosstraffic:0, network/TCP-gamma:0), so they may override them.
  std::vector<std::string> cfg;
  std::string worker_path;  // empty: find_simgrid_worker()
  // How each device stream picks its next op: "ready" (the first whose inputs have
  // arrived, in SimGrid's own time; ties by topological rank) or "analytic" (the
  // order of the analytic contention schedule, fixed before the run).
  std::string order = "ready";
  // A measured cost table (core/cost_table.h) both the SimGrid execs and the
  // analytic device order use; ops it lacks keep compute_us or the roofline.
  // `costs` is its file, read by the constructor unless `cost_table` is given
  // (then `costs` only names it in describe()).
  std::string costs;
  std::shared_ptr<const CostTable> cost_table;
  // Tests only: make the first request's worker "crash" (abort) or "hang".
  std::string debug_fail_first;
};

class SimGridEvaluator final : public Evaluator {
 public:
  // Workers start lazily, on the first evaluation. Throws ConfigError on bad
  // options or when the worker binary cannot be found, ParseError naming the
  // option and the file for a bad cost table.
  explicit SimGridEvaluator(SimGridOptions options = {});
  // Options: workers=N, timeout_s=S, worker=PATH, cfg=KEY:VALUE[;KEY:VALUE...],
  // cfg.KEY=VALUE (one per key), costs=FILE, debug.fail_first=crash|hang. Throws
  // ConfigError (ParseError for a bad cost table).
  static std::unique_ptr<SimGridEvaluator> from_options(const Options& options);
  ~SimGridEvaluator() override;

  std::string name() const override { return "simgrid"; }
  std::string describe() const override;
  // Evaluates many placements, spread over the pool; results in input order.
  // Throws the first error met (the other evaluations still finish).
  std::vector<StepResult> evaluate_batch(const OpGraph& graph, const Cluster& cluster,
                                         const std::vector<Placement>& placements);
  // Shares this instance's worker pool: each clone may be used by its own thread.
  std::unique_ptr<Evaluator> clone() const override;

  // Process ids of the live workers (diagnostics and tests).
  std::vector<int> worker_pids() const;
  const SimGridOptions& options() const { return options_; }

 protected:
  // Simulates one step in a worker. Throws what the worker threw for bad input
  // (DeviceError, GraphError, ConfigError, ...); a worker that dies or exceeds
  // timeout_s is killed and replaced and the request retried once, after which an
  // aware::Error carrying the worker's stderr is thrown. Never hangs.
  StepResult run_step(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      StepObserver* observer) override;

 private:
  SimGridOptions options_;
  std::shared_ptr<SimGridWorkerPool> pool_;
};

// Path of the aware-simgrid-worker binary: next to the running executable, else
// $AWARE_SIMGRID_WORKER, else the build directory it was compiled in. Throws
// ConfigError listing the places looked at.
std::string find_simgrid_worker();

// Reads a SimGrid XML platform (in a short-lived worker process, since parsing
// needs an Engine): hosts become devices (memory from the host property
// `memory_bytes`, required; optional `memory_Bps`, `launch_overhead_us`, `kind`),
// each host pair a direct link with its route's bottleneck bandwidth and total
// latency. The result's source() is the file's absolute path; the simgrid
// evaluator then simulates on the XML platform itself. Every pair of hosts needs
// a route both ways through at least one link. Throws ParseError for a file
// SimGrid cannot load (including one that makes SimGrid end the worker, or one
// still loading after `timeout_s`, when the worker is killed), DeviceError for a
// host without memory; either names the file in one line. Leaves no process.
Cluster cluster_from_simgrid_xml(const std::string& path, double timeout_s = 60);

}  // namespace aware
