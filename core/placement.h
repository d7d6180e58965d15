// Placement (a device per op), the evaluator's StepResult, and the Trace of a
// simulated or measured step. Plain values.
#pragma once

#include <string>
#include <vector>

namespace aware {

class OpGraph;
class Cluster;

struct Placement {
  std::vector<int> device_of_op;  // device id per op id

  Placement() = default;
  explicit Placement(std::vector<int> devices) : device_of_op(std::move(devices)) {}
  int size() const { return static_cast<int>(device_of_op.size()); }
  int operator[](int op) const { return device_of_op[op]; }
  int& operator[](int op) { return device_of_op[op]; }
  bool operator==(const Placement&) const = default;
};

// One op of a move and the device it moves to (Evaluator::evaluate_move).
struct OpMove {
  int op = -1;
  int device = -1;
};

// Throws DeviceError naming `source`, the op and the device unless `placement`
// gives every op of `graph` a device of `cluster`, and co-located ops share one.
void check_placement(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                     const std::string& source = "placement");

// Everything on device `device`.
Placement single_device_placement(const OpGraph& graph, int device);
// Ops dealt to devices in topological order, one at a time.
Placement round_robin_placement(const OpGraph& graph, const Cluster& cluster);

struct StepResult {
  double step_time_us = 0;
  std::vector<double> device_busy_us;      // compute time per device
  std::vector<double> peak_memory_bytes;   // per device
  double bytes_moved = 0;                  // bytes sent between devices
  int transfers = 0;                       // number of cross-device transfers
  bool feasible = true;
  std::string infeasible_reason;           // empty when feasible
  std::string evaluator;                   // which evaluator produced it
  std::vector<std::string> notes;          // what a reader should know (e.g. ops that ran nothing)
};

// What happened when, for timelines (Chrome trace / Gantt).
struct OpSpan {
  int op = -1;
  int device = -1;
  double start_us = 0;
  double end_us = 0;
};

struct TransferSpan {
  int src_op = -1;         // producer
  int src_output = 0;
  int src_device = -1;
  int dst_device = -1;     // -1 when one transfer serves several devices (placeto mode)
  double bytes = 0;
  double start_us = 0;
  double end_us = 0;
  std::vector<int> channels;  // directed link channels used (Hop::channel); empty for a bus
  std::string lane;           // display lane: a link or bus name
};

struct Trace {
  std::vector<OpSpan> ops;            // one per op, in op-id order once filled
  std::vector<TransferSpan> transfers;
  void clear() {
    ops.clear();
    transfers.clear();
  }
};

}  // namespace aware
