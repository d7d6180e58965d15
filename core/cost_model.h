// Per-op compute time on each device: a measured cost (Op::compute_us or a cost
// table entry) when there is one, else a roofline:
//   max(flops / (peak * efficiency), bytes_accessed / memory bandwidth) + launch overhead.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace aware {

class OpGraph;
class Cluster;
struct Op;
struct Device;

// A per-op-type cost fitted to profiled ops (core/cost_fit.h): what an op that
// the table does not name costs, µs = overhead_us + us_per_flop * flops +
// us_per_byte * bytes_accessed, every coefficient >= 0.
struct CostFit {
  double overhead_us = 0;
  double us_per_flop = 0;
  double us_per_byte = 0;
  int samples = 0;       // profiled ops it was fitted to (for people; not read)
  std::string from;      // "fit" (its own least squares) or "scaled" (the pooled fit, scaled)
  double time_us(const Op& op) const;
};

// Measured op costs that override the roofline: (op name, device kind) -> µs.
// A kind of "*" matches every device. Filled by hw/ profiling or imported.
// An op name may be scoped to one graph as "GRAPH::OP" (see scoped_op_name): a
// table profiled over several graphs that share an op name, with different sizes
// (two models' "softmax/logits/grad_weight"), keeps one entry per graph.
struct CostTable {
  std::map<std::pair<std::string, std::string>, double> us;
  // (op type or "*" for every type, device kind) -> fit, for ops with no entry:
  // an op is priced by its type's fit on its device's kind, else the kind's "*"
  // fit, else the roofline. Empty for tables written before fits existed.
  std::map<std::pair<std::string, std::string>, CostFit> fits;
  // (op type or "*", device kind) -> how much an op of that type slows while
  // every other device is busy, measured by profiling two copies of a graph at
  // once (hw/calibrate.h, profile_pair_slowdowns). The analytic simulator's
  // contention mode takes it, else the type's "*", in place of its one
  // memory-bound / compute-bound pair of factors. Empty: not measured.
  std::map<std::pair<std::string, std::string>, double> pair_slowdowns;
  bool empty() const { return us.empty() && fits.empty() && pair_slowdowns.empty(); }
  // The pair slowdown for an op of `op_type` on `device_kind` (its type's, else
  // the kind's "*"), or 0 when the table has none.
  double pair_slowdown(const std::string& op_type, const std::string& device_kind) const;
  // Returns the entry for (op, kind), or (op, "*"), or -1.
  double lookup(const std::string& op_name, const std::string& device_kind) const;
  // The same for an op of the graph named `graph_name`: its scoped entry
  // ("GRAPH::OP", kind then "*") first, else the plain one.
  double lookup(const std::string& graph_name, const std::string& op_name,
                const std::string& device_kind) const;
  // The fit that prices an op of `op_type` on `device_kind`, or nullptr.
  const CostFit* fit(const std::string& op_type, const std::string& device_kind) const;
};

// "GRAPH::OP": the name under which a table keeps an op of one graph only.
std::string scoped_op_name(const std::string& graph_name, const std::string& op_name);

// Roofline time of `op` on `device`, µs (ignores measured costs).
double roofline_time_us(const Op& op, const Device& device);
// Time of `op` on `device`, µs: the table's entry, else the op's compute_us, else
// the table's fit for its type and the device's kind, else the roofline. With a
// graph name, the table's entries scoped to that graph come first.
double op_time_us(const Op& op, const Device& device, const CostTable* table = nullptr,
                  const std::string& graph_name = {});

// Op x device time matrix, computed once per (graph, cluster). Devices that
// cost every op alike (the same kind, peak_flops, efficiency, memory_Bps and
// launch_overhead_us: the fields op_time_us reads) share one column, so a
// 4,096-core mesh of identical cores keeps one.
class OpCostMatrix {
 public:
  OpCostMatrix() = default;
  OpCostMatrix(const OpGraph& graph, const Cluster& cluster, const CostTable* table = nullptr);
  double time_us(int op, int device) const {
    return time_us_[static_cast<size_t>(op) * num_classes_ + class_of_[device]];
  }
  double min_time_us(int op) const { return min_time_us_[op]; }
  // The mean over every device (summed in device order), computed on first use:
  // its devices x ops sum is most of the matrix's cost on a cluster of thousands.
  double mean_time_us(int op) const;
  int num_devices() const { return num_devices_; }
  int num_ops() const { return static_cast<int>(min_time_us_.size()); }
  // Devices of one class cost every op alike; classes are numbered in order of
  // their first device.
  int num_classes() const { return num_classes_; }
  int device_class(int device) const { return class_of_[device]; }

 private:
  int num_devices_ = 0;
  int num_classes_ = 0;
  std::vector<int> class_of_;
  std::vector<double> time_us_;
  std::vector<double> min_time_us_;
  struct Means {
    std::once_flag once;
    std::vector<double> values;
  };
  std::shared_ptr<Means> means_ = std::make_shared<Means>();
};

}  // namespace aware
