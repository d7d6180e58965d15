// The analytic (event-driven) simulator, registered as evaluator "analytic".
//
// Two modes:
//  - "contention" (default): each device runs one stream of ops in order of
//    readiness (ties by topological rank); each cross-device tensor is sent once
//    per (output, destination device) along the cluster route; copy engines are
//    separate from compute, so transfers overlap computation; a directed link
//    channel carries one transfer at a time; a transfer occupies every channel of
//    its route for latency + bytes / bottleneck bandwidth. Memory is tracked:
//    parameters resident, outputs from the op's start until their last consumer
//    finishes (received copies likewise on the receiving device), workspace while
//    the op runs. A device over its capacity makes the result infeasible.
//  - "placeto": the semantics of Placeto's simulator (see docs/simulators.md):
//    per-source-device bus at 7600 B/us, 5.7 us after each op, 25 us after each
//    transfer, one global event order with its tie rules.
//
// Either mode takes an optional measured cost table (option costs=FILE, see
// core/cost_table.h): ops it prices on a device's kind take that time there;
// the others keep their compute_us or the roofline.
//
// Deterministic. After the first call on a (graph, cluster) pair, evaluate()
// allocates nothing. evaluate_move() in contention mode keeps checkpoints of the
// last base step and re-simulates a move from the last one before it matters. An instance is not thread-safe; clone() one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/cost_model.h"
#include "core/evaluator.h"

namespace aware {

enum class AnalyticMode { kContention, kPlaceto };

struct PlacetoConstants {
  double device_overhead_us = 5.7;   // delta1: a device stays busy this long after an op
  double bus_overhead_us = 25.0;     // delta2: a bus stays busy this long after a transfer
  double transfer_bytes_per_us = 7600.0;
  double init_offset_us = 0.0;
};

// Devices that slow each other down (cores sharing memory bandwidth, logical
// devices on one GPU), contention mode only: an op that starts while k of the
// other D - 1 devices are busy takes 1 + (slowdown - 1) * k / (D - 1) times its
// cost, with the memory-bound factor for ops whose roofline is memory-bound on
// their device and the compute-bound factor for the others. 1 = independent
// devices (the default). `aware calibrate` measures both factors.
//
// copies_on_consumer: a cross-device copy also occupies the receiving device's
// compute stream for its duration (route latency + bytes / route bandwidth, not
// booked on the links), queued behind the ops already ready there in topological
// order (as its producer's rank + 0.5). That is how the hardware executors run a
// copy (hw/README.md): on the consumer's core or CUDA stream, not overlapping
// its compute.
//
// memory_from_bytes: the memory-bound factor applies only to ops (and copies) that
// touch at least this many bytes; smaller ones take the compute-bound factor. An
// op whose working set stays in a core's own cache does not compete for the
// shared memory bandwidth that the calibration's large streaming pass measures
// (0, the default: every memory-bound op takes the memory factor).
//
// rank_queue: each device runs the queued task of lowest topological rank,
// not the first queued (first come first served, the default and Placeto's
// simulator's order): the order of the cpu executor's `order=rank`. A move is
// then simulated from the start (checkpoints assume first come first served).
//
// host_op_us, host_copy_us: one host thread issues every task of the step, for
// every device, ahead of them and never waiting for them (the CUDA executor:
// hw/cuda_backend.cc, run()), and needs this long to issue an op or a copy. The
// k-th task the simulator starts, over all devices, cannot start before the
// issue costs of the first k add up; a device whose next task is not issued yet
// waits for it (in stream order: nothing else runs there meanwhile). While the
// devices are the bottleneck the host runs ahead and changes nothing; a stream
// of short ops runs at the host's pace. 0 (the default): no host.
struct Interference {
  double compute = 1;
  double memory = 1;
  double memory_from_bytes = 0;
  bool rank_queue = false;
  bool copies_on_consumer = false;
  double host_op_us = 0;
  double host_copy_us = 0;
  bool none() const {
    return compute == 1 && memory == 1 && !copies_on_consumer && !rank_queue && !host_issues();
  }
  bool slows() const { return compute != 1 || memory != 1; }
  bool host_issues() const { return host_op_us > 0 || host_copy_us > 0; }
};

class AnalyticSimulator final : public Evaluator {
 public:
  explicit AnalyticSimulator(AnalyticMode mode = AnalyticMode::kContention,
                             PlacetoConstants constants = {});
  // Options: mode=contention|placeto; placeto.delta1_us, placeto.delta2_us,
  // placeto.bytes_per_us; costs=FILE (a cost table); slowdown.compute,
  // slowdown.memory, slowdown.memory_from_bytes, copies=links|consumer, queue=fifo|rank,
  // host.op_us, host.copy_us (Interference, contention mode). Throws ConfigError on unknown
  // keys or values, ParseError naming the option and the file for a bad table.
  static std::unique_ptr<AnalyticSimulator> from_options(const Options& options);

  std::string name() const override { return "analytic"; }
  std::string describe() const override;
  std::unique_ptr<Evaluator> clone() const override;

  AnalyticMode mode() const { return mode_; }

  // Whether evaluate_move() records checkpoints: kAdaptive (the default) stops
  // while they skip under a fifth of the rounds, kAlways keeps them (the tests
  // use it to exercise resumption). Results are the same either way.
  enum class MoveCheckpoints { kAdaptive, kAlways };
  void set_move_checkpoints(MoveCheckpoints policy) { move_checkpoints_ = policy; }

  // How routes are kept: kAuto (the default) keeps every device pair's route
  // up to 256 devices and above that only the routes steps cross (numbered as
  // they are first crossed); kSparse keeps the crossed ones at any size (the
  // tests use it to check that both give the same steps; it also keeps the
  // step's events in a heap, where small clusters keep them sorted). Results
  // are the same either way; moves on sparse routes are full runs. Takes effect
  // at the next evaluation.
  enum class RouteTable { kAuto, kSparse };
  void set_route_table(RouteTable table);

  // Prices ops from `table` from the next evaluation on (null or empty: no table).
  // The table is shared, never modified, by this instance and its clones.
  // `label` names it in describe() (the file it came from).
  void set_cost_table(std::shared_ptr<const CostTable> table, std::string label);
  const CostTable* cost_table() const { return cost_table_.get(); }
  void set_interference(Interference interference);
  const Interference& interference() const { return interference_; }

  // Per-(graph, cluster) state and scratch; defined in prepared.h (internal).
  struct Prepared;

 protected:
  StepResult run_step(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      StepObserver* observer) override;
  // Contention mode: resumes the last base's (or the last move's) step at its
  // latest checkpoint before any moved op's placement is read (the round its
  // first producer finished; round 0 for a source op). Placeto mode: in full.
  StepResult run_move(const OpGraph& graph, const Cluster& cluster, const Placement& prev,
                      const std::vector<OpMove>& moves) override;

 private:
  void prepare(const OpGraph& graph, const Cluster& cluster);
  StepResult run_contention(const OpGraph& graph, const Cluster& cluster,
                            const Placement& placement, StepObserver* observer);
  StepResult run_placeto(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                         StepObserver* observer);

  AnalyticMode mode_;
  PlacetoConstants constants_;
  std::shared_ptr<const CostTable> cost_table_;  // null: roofline / compute_us only
  std::string cost_table_label_;
  Interference interference_;
  MoveCheckpoints move_checkpoints_ = MoveCheckpoints::kAdaptive;
  RouteTable route_table_ = RouteTable::kAuto;
  bool sparse_routes(const Cluster& cluster) const;
  std::shared_ptr<Prepared> prepared_;  // per (graph, cluster) revision; scratch included
};


}  // namespace aware
