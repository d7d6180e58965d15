#include "agents/common/placer_common.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/units.h"

namespace aware::placing {
namespace {

std::string gb(double bytes) { return format_fixed(bytes / 1e9, 2); }

std::uint64_t copy_key(int producer, int output) {
  return (static_cast<std::uint64_t>(producer) << 20) | static_cast<std::uint64_t>(output);
}

}  // namespace

double op_memory_bytes(const Op& op) {
  return op.param_bytes + op.total_output_bytes() + op.temp_bytes;
}

double graph_memory_lower_bound_bytes(const OpGraph& graph) {
  double params = 0;
  double largest_live = 0;
  for (int op = 0; op < graph.num_ops(); ++op) {
    const Op& o = graph.op(op);
    params += o.param_bytes;
    double inputs = 0;
    for (int e : graph.in_edges(op)) inputs += graph.edge(e).bytes;
    largest_live = std::max(largest_live, o.total_output_bytes() + o.temp_bytes + inputs);
  }
  return params + largest_live;
}

void check_graph_can_fit(const OpGraph& graph, const Cluster& cluster) {
  if (cluster.num_devices() == 0)
    throw ConfigError("cluster '" + cluster.name() + "' has no devices");
  double total = 0;
  double largest = 0;
  for (const Device& d : cluster.devices()) {
    total += d.memory_bytes;
    largest = std::max(largest, d.memory_bytes);
  }
  const double need = graph_memory_lower_bound_bytes(graph);
  if (need > total) {
    throw ConfigError("graph '" + graph.name() + "' needs " + gb(need) + " GB but cluster '" +
                      cluster.name() + "' has " + gb(total) + " GB in total");
  }
  for (int op = 0; op < graph.num_ops(); ++op) {
    const Op& o = graph.op(op);
    const double own = o.param_bytes + o.total_output_bytes() + o.temp_bytes;
    if (own > largest) {
      throw ConfigError("graph '" + graph.name() + "': op '" + o.name + "' needs " + gb(own) +
                        " GB but the largest device of cluster '" + cluster.name() + "' has " +
                        gb(largest) + " GB");
    }
  }
}

Units colocation_units(const OpGraph& graph) {
  Units units;
  units.unit_of_op.assign(graph.num_ops(), -1);
  std::map<std::string, int> unit_of_group;
  for (int op = 0; op < graph.num_ops(); ++op) {
    const std::string& group = graph.op(op).colocation_group;
    int unit;
    if (group.empty()) {
      unit = units.num_units();
      units.ops_of_unit.emplace_back();
    } else {
      auto [it, inserted] = unit_of_group.emplace(group, units.num_units());
      if (inserted) units.ops_of_unit.emplace_back();
      unit = it->second;
    }
    units.unit_of_op[op] = unit;
    units.ops_of_unit[unit].push_back(op);
  }
  return units;
}

// ------------------------------------------------------------------ MemoryLedger

MemoryLedger::MemoryLedger(const OpGraph& graph, const Cluster& cluster)
    : graph_(&graph),
      cluster_(&cluster),
      device_of_(graph.num_ops(), -1),
      load_(cluster.num_devices(), 0.0),
      max_temp_(cluster.num_devices(), 0.0),
      received_(cluster.num_devices()) {}

double MemoryLedger::received_bytes(int op, int device) const {
  // One copy per (producer, output) and device, sized by its largest edge.
  std::unordered_map<std::uint64_t, double> fresh;
  for (int e : graph_->in_edges(op)) {
    const Edge& edge = graph_->edge(e);
    const int src_dev = device_of_[edge.src];
    if (src_dev < 0 || src_dev == device) continue;
    const std::uint64_t key = copy_key(edge.src, edge.src_output);
    auto held = received_[device].find(key);
    const double have = held == received_[device].end() ? 0.0 : held->second;
    double& want = fresh[key];
    want = std::max({want, have, edge.bytes});
  }
  double added = 0;
  for (const auto& [key, bytes] : fresh) {
    auto held = received_[device].find(key);
    added += bytes - (held == received_[device].end() ? 0.0 : held->second);
  }
  return added;
}

double MemoryLedger::added_bytes(int op, int device) const {
  const Op& o = graph_->op(op);
  return o.param_bytes + o.total_output_bytes() + received_bytes(op, device) +
         std::max(0.0, o.temp_bytes - max_temp_[device]);
}

bool MemoryLedger::fits(int op, int device, double cap_bytes) const {
  const double cap = cap_bytes < 0 ? capacity_bytes(device) : cap_bytes;
  // Cheap bound first: every input from another device counted in full is at
  // least the copies it would really add. Clearly under the cap (by more than
  // rounding could move the exact sum), it fits without building the copy map.
  const Op& o = graph_->op(op);
  double upper = 0;
  for (int e : graph_->in_edges(op)) {
    const Edge& edge = graph_->edge(e);
    const int src_dev = device_of_[edge.src];
    if (src_dev >= 0 && src_dev != device) upper += edge.bytes;
  }
  const double bound = used_bytes(device) + (o.param_bytes + o.total_output_bytes() + upper +
                                             std::max(0.0, o.temp_bytes - max_temp_[device]));
  if (bound <= cap - 1e-9 * std::abs(cap)) return true;
  return used_bytes(device) + added_bytes(op, device) <= cap;
}

void MemoryLedger::add_copy(int device, int producer, int output, double bytes) {
  double& held = received_[device][copy_key(producer, output)];
  if (bytes > held) {
    load_[device] += bytes - held;
    held = bytes;
  }
}

void MemoryLedger::place(int op, int device) {
  AWARE_CHECK(device_of_[op] < 0, "op placed twice in MemoryLedger");
  const Op& o = graph_->op(op);
  device_of_[op] = device;
  load_[device] += o.param_bytes + o.total_output_bytes();
  max_temp_[device] = std::max(max_temp_[device], o.temp_bytes);
  for (int e : graph_->in_edges(op)) {
    const Edge& edge = graph_->edge(e);
    const int src_dev = device_of_[edge.src];
    if (src_dev >= 0 && src_dev != device) add_copy(device, edge.src, edge.src_output, edge.bytes);
  }
  for (int e : graph_->out_edges(op)) {
    const Edge& edge = graph_->edge(e);
    const int dst_dev = device_of_[edge.dst];
    if (dst_dev >= 0 && dst_dev != device) add_copy(dst_dev, op, edge.src_output, edge.bytes);
  }
}

bool placement_fits_memory(const OpGraph& graph, const Cluster& cluster,
                           const Placement& placement, std::string* reason) {
  MemoryLedger ledger(graph, cluster);
  for (int op : topological_order(graph)) ledger.place(op, placement[op]);
  for (int d = 0; d < cluster.num_devices(); ++d) {
    if (ledger.used_bytes(d) > ledger.capacity_bytes(d)) {
      if (reason != nullptr) {
        *reason = "device '" + cluster.device(d).name + "' needs " + gb(ledger.used_bytes(d)) +
                  " GB, has " + gb(ledger.capacity_bytes(d)) + " GB";
      }
      return false;
    }
  }
  return true;
}

bool placement_acceptable(const OpGraph& graph, const Cluster& cluster,
                          const Placement& placement, Evaluator* evaluator) {
  if (placement_fits_memory(graph, cluster, placement)) return true;
  if (evaluator == nullptr) return false;
  return evaluator->evaluate(graph, cluster, placement).feasible;
}

std::vector<int> devices_fastest_first(const OpCostMatrix& costs) {
  std::vector<double> total(costs.num_devices(), 0.0);
  for (int op = 0; op < costs.num_ops(); ++op)
    for (int d = 0; d < costs.num_devices(); ++d) total[d] += costs.time_us(op, d);
  std::vector<int> order(costs.num_devices());
  for (int d = 0; d < costs.num_devices(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return total[a] < total[b]; });
  return order;
}

Placement memory_aware_greedy(const OpGraph& graph, const Cluster& cluster) {
  const Units units = colocation_units(graph);
  const OpCostMatrix costs(graph, cluster);
  const std::vector<int> speed_order = devices_fastest_first(costs);
  MemoryLedger ledger(graph, cluster);
  Placement placement(std::vector<int>(graph.num_ops(), -1));
  for (int op : topological_order(graph)) {
    if (placement[op] >= 0) continue;
    const std::vector<int>& members = units.ops_of_unit[units.unit_of_op[op]];
    double unit_bytes = 0;
    for (int m : members) unit_bytes += op_memory_bytes(graph.op(m));
    int best = -1;
    int roomiest = speed_order.front();
    for (int d : speed_order) {
      if (ledger.free_bytes(d) > ledger.free_bytes(roomiest)) roomiest = d;
      const double need = members.size() == 1 ? ledger.added_bytes(op, d) : unit_bytes;
      if (need > ledger.free_bytes(d)) continue;
      if (best < 0 || ledger.free_bytes(d) > ledger.free_bytes(best)) best = d;
    }
    if (best < 0) best = roomiest;
    for (int m : members) {
      placement[m] = best;
      ledger.place(m, best);
    }
  }
  return placement;
}

Placement with_memory_fallback(const OpGraph& graph, const Cluster& cluster, Placement placement,
                               Evaluator* evaluator) {
  if (placement_acceptable(graph, cluster, placement, evaluator)) return placement;
  Placement greedy = memory_aware_greedy(graph, cluster);
  if (placement_acceptable(graph, cluster, greedy, evaluator)) return greedy;
  // Dealing ops round-robin spreads live activations most evenly over time, which
  // the static rule cannot see but the evaluator can.
  Placement dealt = round_robin_placement(graph, cluster);
  if (placement_acceptable(graph, cluster, dealt, evaluator)) return dealt;
  return placement;
}

void enforce_colocation(const OpGraph& graph, const Units& units, Placement& placement) {
  std::vector<int> unit_device(units.num_units(), -1);
  for (int op : topological_order(graph)) {
    int& d = unit_device[units.unit_of_op[op]];
    if (d < 0) d = placement[op];
    placement[op] = d;
  }
}

void check_context(const PlaceContext& context, const std::string& placer) {
  if (context.budget_evals < 0)
    throw ConfigError(placer + ": budget must be >= 0 evaluations (0 = default), got " +
                      std::to_string(context.budget_evals));
  if (context.budget_seconds < 0 || !std::isfinite(context.budget_seconds))
    throw ConfigError(placer + ": budget_seconds must be >= 0");
}

// ------------------------------------------------------------------ CommModel

CommModel::CommModel(const Cluster& cluster) : devices_(cluster.num_devices()) {
  latency_us_.assign(devices_ * devices_, 0.0);
  us_per_byte_.assign(devices_ * devices_, 0.0);
  int pairs = 0;
  for (int s = 0; s < devices_; ++s) {
    for (int d = 0; d < devices_; ++d) {
      if (s == d) continue;
      latency_us_[s * devices_ + d] = cluster.route_latency_us(s, d);
      us_per_byte_[s * devices_ + d] = 1e6 / cluster.route_bandwidth_Bps(s, d);
      mean_latency_us_ += latency_us_[s * devices_ + d];
      mean_us_per_byte_ += us_per_byte_[s * devices_ + d];
      ++pairs;
    }
  }
  if (pairs > 0) {
    mean_latency_us_ /= pairs;
    mean_us_per_byte_ /= pairs;
  }
}

double CommModel::time_us(int src_device, int dst_device, double bytes) const {
  if (src_device == dst_device) return 0;
  const int i = src_device * devices_ + dst_device;
  return latency_us_[i] + bytes * us_per_byte_[i];
}

double CommModel::mean_time_us(double bytes) const {
  if (devices_ < 2) return 0;
  return mean_latency_us_ + bytes * mean_us_per_byte_;
}

Placement random_placement(const OpGraph& graph, const Cluster& cluster, const Units& units,
                           const std::vector<int>& order, MersenneRng& rng) {
  MemoryLedger ledger(graph, cluster);
  Placement p(std::vector<int>(graph.num_ops(), -1));
  std::vector<int> fitting;
  for (int op : order) {
    if (p[op] >= 0) continue;
    fitting.clear();
    for (int d = 0; d < cluster.num_devices(); ++d)
      if (ledger.fits(op, d)) fitting.push_back(d);
    const int chosen = fitting.empty() ? rng.below(cluster.num_devices())
                                       : fitting[rng.below(static_cast<int>(fitting.size()))];
    for (int m : units.ops_of_unit[units.unit_of_op[op]]) {
      p[m] = chosen;
      ledger.place(m, chosen);
    }
  }
  return p;
}

const std::vector<std::string>& cheap_placer_names() {
  static const std::vector<std::string> names = {"m-etf",  "heft",   "m-sct",      "expert",
                                                 "m-topo", "single", "round-robin"};
  return names;
}

}  // namespace aware::placing
