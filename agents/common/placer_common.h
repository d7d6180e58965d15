// Shared machinery of every placer (the non-learned ones, the fused wrappers, the agents): the memory rules they check
// placements against, colocation units, the "graph cannot fit at all" check and
// the memory-aware greedy fallback. Their seeded generator is core's MersenneRng.
//
// Everything here is a plain function or value type; nothing is thread-safe to
// mutate from two threads, any number of threads may read.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "core/placer.h"
#include "core/rng.h"

namespace aware::placing {

// Memory an op brings to its device in the placers' static model, bytes:
// parameters + all outputs + workspace (Baechi's per-op memory).
double op_memory_bytes(const Op& op);

// A sound lower bound on the memory any placement of `graph` needs in total,
// bytes: every parameter is resident for the whole step, and while the largest op
// runs its inputs, outputs and workspace are live as well.
double graph_memory_lower_bound_bytes(const OpGraph& graph);

// Throws ConfigError "graph X needs N GB but cluster Y has M GB in total" when
// no placement of `graph` on `cluster` can fit (total memory, or one op larger
// than the largest device). Every placer calls it first.
void check_graph_can_fit(const OpGraph& graph, const Cluster& cluster);

// Colocation units: ops sharing a non-empty colocation group form one unit, every
// other op is a unit on its own. Units are numbered in order of their first op.
struct Units {
  std::vector<int> unit_of_op;
  std::vector<std::vector<int>> ops_of_unit;
  int num_units() const { return static_cast<int>(ops_of_unit.size()); }
};
Units colocation_units(const OpGraph& graph);

// The static memory rule every placer checks against. A device's load is its ops'
// parameters and outputs, one copy of each tensor it receives from another device
// (per producer output), and its largest workspace. This bounds from above the
// peak the analytic simulator can reach with any schedule, so a placement that
// passes here is feasible there.
//
// Incremental: add ops one at a time (producers before consumers for exact
// received-copy accounting; a consumer added first is accounted when its producer
// arrives). Not thread-safe.
class MemoryLedger {
 public:
  MemoryLedger(const OpGraph& graph, const Cluster& cluster);
  // Bytes placing `op` on `device` would add now.
  double added_bytes(int op, int device) const;
  // True when `op` fits on `device` within `cap_bytes` (the device's memory when < 0).
  bool fits(int op, int device, double cap_bytes = -1) const;
  // Records `op` on `device`.
  void place(int op, int device);
  double used_bytes(int device) const { return load_[device] + max_temp_[device]; }
  double capacity_bytes(int device) const { return cluster_->device(device).memory_bytes; }
  double free_bytes(int device) const { return capacity_bytes(device) - used_bytes(device); }
  int device_of(int op) const { return device_of_[op]; }

 private:
  // Received-copy bytes placing `op` on `device` would add on `device`.
  double received_bytes(int op, int device) const;
  void add_copy(int device, int producer, int output, double bytes);
  const OpGraph* graph_;
  const Cluster* cluster_;
  std::vector<int> device_of_;
  std::vector<double> load_;
  std::vector<double> max_temp_;
  // Per device: (producer op, output) key -> bytes of the copy held there.
  std::vector<std::unordered_map<std::uint64_t, double>> received_;
};

// True when every device's load under MemoryLedger rules fits its memory.
// `reason` (optional) receives the first device over capacity.
bool placement_fits_memory(const OpGraph& graph, const Cluster& cluster,
                           const Placement& placement, std::string* reason = nullptr);

// A placer's final check: fits by the static rule, or (when an evaluator is given)
// the evaluator reports it feasible.
bool placement_acceptable(const OpGraph& graph, const Cluster& cluster,
                          const Placement& placement, Evaluator* evaluator);

// Memory-aware greedy: units in topological order of their first op, each on the
// device with the most free memory (ties: the fastest, then lowest id) that fits.
// When no device fits a unit, it goes where the most memory is free (the result
// then fails placement_fits_memory).
Placement memory_aware_greedy(const OpGraph& graph, const Cluster& cluster);

// Returns `placement` when acceptable; otherwise the greedy fallback when that is
// acceptable, else core's round_robin_placement when that is; otherwise
// `placement` unchanged (nothing better is known).
Placement with_memory_fallback(const OpGraph& graph, const Cluster& cluster, Placement placement,
                               Evaluator* evaluator);

// Forces every colocation group onto the device of its first op in topological
// order (used after algorithms that place ops independently).
void enforce_colocation(const OpGraph& graph, const Units& units, Placement& placement);

// A uniformly random device per unit (visited in `order`) among those its memory
// fits on by the static rule; any device when none fits.
Placement random_placement(const OpGraph& graph, const Cluster& cluster, const Units& units,
                           const std::vector<int>& order, MersenneRng& rng);

// Device ids ordered fastest first (by summed op time under `costs`), ties by id.
std::vector<int> devices_fastest_first(const OpCostMatrix& costs);

// The one-pass placers a search starts from and `--imitate cheap` takes the best
// of, by registry name, in the order they are tried: m-etf, heft, m-sct, expert,
// m-topo, single, round-robin.
const std::vector<std::string>& cheap_placer_names();

// Validates the common context fields: negative budgets -> ConfigError naming
// `placer`. (Options are checked against the placer's registry entry before
// place() runs: PlacerRegistry::create wraps every placer.)
void check_context(const PlaceContext& context, const std::string& placer);

// Transfer-time model of the list schedulers: the cluster's idle-route time, and
// the mean over ordered pairs of distinct devices (HEFT's c-bar).
class CommModel {
 public:
  explicit CommModel(const Cluster& cluster);
  double time_us(int src_device, int dst_device, double bytes) const;
  double mean_time_us(double bytes) const;

 private:
  int devices_ = 0;
  std::vector<double> latency_us_;
  std::vector<double> us_per_byte_;
  double mean_latency_us_ = 0;
  double mean_us_per_byte_ = 0;
};

}  // namespace aware::placing
