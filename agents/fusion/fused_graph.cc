// Coarsener::build_result: turns the nodes left after merging into the coarse
// OpGraph (names, costs, memory, output slots and edges) and the op <-> node
// mapping. The merging itself is in coarsener.cc.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "agents/fusion/coarsener.h"
#include "core/errors.h"

namespace aware::fusion_internal {
namespace {

bool same_cost_parameters(const Device& a, const Device& b) {
  return a.kind == b.kind && a.peak_flops == b.peak_flops && a.efficiency == b.efficiency &&
         a.memory_Bps == b.memory_Bps && a.launch_overhead_us == b.launch_overhead_us;
}

}  // namespace

FusionResult Coarsener::build_result() {
  renumber_topologically();
  const int n = graph_.num_ops();
  std::vector<int> nodes;
  for (int x = 0; x < n; ++x)
    if (alive_[x]) nodes.push_back(x);
  std::sort(nodes.begin(), nodes.end(), [&](int a, int b) { return order_[a] < order_[b]; });

  FusionResult result;
  const int groups = static_cast<int>(nodes.size());
  result.ops_of_group.resize(groups);
  result.group_of_op.assign(n, -1);
  for (int g = 0; g < groups; ++g) {
    std::vector<int>& ops = result.ops_of_group[g];
    ops = members_[nodes[g]];
    std::sort(ops.begin(), ops.end());
    for (int op : ops) result.group_of_op[op] = g;
  }

  // Tensors crossing each (source node, destination node) pair, and which member
  // outputs leave their node at all.
  std::vector<std::map<int, CoarseEdge>> crossing(groups);
  std::set<std::uint64_t> exported;
  for (const Edge& e : graph_.edges()) {
    const int gs = result.group_of_op[e.src];
    const int gd = result.group_of_op[e.dst];
    if (gs == gd) {
      stats_.internal_bytes += e.bytes;
      continue;
    }
    stats_.cut_bytes += e.bytes;
    crossing[gs][gd].add(tensor_key(e.src, e.src_output), e.bytes);
    exported.insert(tensor_key(e.src, e.src_output));
  }

  bool homogeneous = cluster_.num_devices() > 0;
  for (int d = 1; d < cluster_.num_devices(); ++d)
    homogeneous = homogeneous && same_cost_parameters(cluster_.device(0), cluster_.device(d));

  OpGraph coarse(graph_.name() + "/fused");
  coarse.set_source(graph_.source().empty() ? "fused graph" : graph_.source() + " (fused)");
  // Per node: (destination node, output slot, bytes) of each coarse edge.
  std::vector<std::vector<std::tuple<int, int, double>>> planned(groups);
  std::set<std::string> used_names;
  for (const Op& op : graph_.ops()) used_names.insert(op.name);
  for (int g = 0; g < groups; ++g) {
    const std::vector<int>& ops = result.ops_of_group[g];
    const Op& first = graph_.op(ops.front());
    Op node;
    if (ops.size() == 1) {
      node = first;
      node.output_bytes.clear();
    } else {
      node.name = first.name + "+" + std::to_string(ops.size() - 1);
      for (int k = 2; used_names.count(node.name) > 0; ++k)
        node.name = first.name + "+" + std::to_string(ops.size() - 1) + "#" + std::to_string(k);
      used_names.insert(node.name);
      node.type = "Fused";
      node.shape = {{"fused_ops", static_cast<double>(ops.size())}};
      int phase_count[3] = {0, 0, 0};
      bool all_measured = table_ == nullptr || table_->empty();
      double measured_sum = 0, device0_sum = 0;
      node.block = first.block;
      node.layer = first.layer;
      for (int op : ops) {
        const Op& m = graph_.op(op);
        ++phase_count[static_cast<int>(m.phase)];
        node.flops += m.flops;
        node.bytes_accessed += m.bytes_accessed;
        node.param_bytes += m.param_bytes;
        node.temp_bytes += m.temp_bytes;
        all_measured = all_measured && m.has_measured_cost();
        measured_sum += m.compute_us;
        if (cluster_.num_devices() > 0) device0_sum += costs_.time_us(op, 0);
        if (m.block != node.block) node.block.clear();
        if (m.layer != node.layer) node.layer = -1;
      }
      int best_phase = 0;
      for (int p = 1; p < 3; ++p)
        if (phase_count[p] > phase_count[best_phase]) best_phase = p;
      node.phase = static_cast<Phase>(best_phase);
      if (options_.cost_mode == FusedCostMode::kExactWhenHomogeneous && homogeneous) {
        node.compute_us = device0_sum;
      } else if (all_measured) {
        node.compute_us = measured_sum;
      } else {
        node.compute_us = -1;
      }
      // forward_of: kept when every member belongs to one other node's forward op.
      int forward_node = -2;
      for (int op : ops) {
        const int f = graph_.op(op).forward_of;
        const int fg = f >= 0 ? result.group_of_op[f] : -1;
        if (forward_node == -2) forward_node = fg;
        if (fg != forward_node) forward_node = -1;
      }
      node.forward_of = forward_node >= 0 && forward_node != g ? forward_node : -1;
    }
    if (ops.size() == 1) {
      const int f = first.forward_of;
      node.forward_of = f >= 0 && result.group_of_op[f] != g ? result.group_of_op[f] : -1;
    }
    // Member outputs nobody outside reads stay live inside the node: count them
    // as workspace so the node's memory is never below its members' total.
    for (int op : ops) {
      const Op& m = graph_.op(op);
      for (size_t o = 0; o < m.output_bytes.size(); ++o)
        if (exported.count(tensor_key(op, static_cast<int>(o))) == 0)
          node.temp_bytes += m.output_bytes[o];
    }
    const int tag = tag_root(tag_[nodes[g]]);
    node.colocation_group = tag >= 0 ? group_names_[tag] : std::string();
    double members_memory = 0;
    for (int op : ops) members_memory += op_memory_bytes(graph_.op(op));
    const double base_temp = node.temp_bytes;
    auto plan_by_class = [&] {
      node.output_bytes.clear();
      planned[g].clear();
      node.temp_bytes = base_temp;
      // Exported tensors grouped by the exact set of nodes that read them: one
      // output slot per class, one edge per (class, reader). Each tensor is held
      // once and sent once per device, as in the full graph.
      std::map<std::uint64_t, std::pair<double, std::vector<int>>> readers;
      for (const auto& [dst, edge] : crossing[g]) {
        for (const auto& [key, b] : edge.tensors) {
          auto& entry = readers[key];
          entry.first = std::max(entry.first, b);
          entry.second.push_back(dst);
        }
      }
      std::map<std::vector<int>, int> slot_of_class;
      std::vector<const std::vector<int>*> class_readers;
      for (const auto& [key, entry] : readers) {
        auto [it, inserted] =
            slot_of_class.emplace(entry.second, static_cast<int>(node.output_bytes.size()));
        if (inserted) {
          node.output_bytes.push_back(0);
          class_readers.push_back(&it->first);
        }
        node.output_bytes[it->second] += entry.first;
      }
      for (size_t slot = 0; slot < class_readers.size(); ++slot)
        for (int dst : *class_readers[slot])
          planned[g].push_back({dst, static_cast<int>(slot), node.output_bytes[slot]});
      std::sort(planned[g].begin(), planned[g].end());
    };
    auto plan_by_pair = [&] {
      node.output_bytes.clear();
      planned[g].clear();
      node.temp_bytes = base_temp;
      // One edge per reader node; readers receiving exactly the same tensors
      // share a slot (a weight read by many nodes stays one tensor).
      std::map<std::vector<std::uint64_t>, int> slot_of_set;
      for (const auto& [dst, edge] : crossing[g]) {
        std::vector<std::uint64_t> set;
        for (const auto& [key, b] : edge.tensors) set.push_back(key);
        auto [it, inserted] = slot_of_set.emplace(set, static_cast<int>(node.output_bytes.size()));
        if (inserted) {
          node.output_bytes.push_back(edge.bytes);
        } else {
          node.output_bytes[it->second] = std::max(node.output_bytes[it->second], edge.bytes);
        }
        planned[g].push_back({dst, it->second, edge.bytes});
      }
    };
    auto claimed = [&] {
      double m = node.param_bytes + node.temp_bytes;
      for (double b : node.output_bytes) m += b;
      return m;
    };
    double memory = 0;
    if (options_.edges == FusedEdgeMode::kOnePerPair) {
      plan_by_pair();
      // A tensor sent to readers with different sets sits in several slots; take
      // the excess out of the workspace, and where that is not enough, write this
      // node's edges by class so it never claims more than its members.
      memory = claimed();
      if (memory > members_memory) {
        const double excess = std::min(memory - members_memory, node.temp_bytes);
        node.temp_bytes -= excess;
        memory -= excess;
      }
      if (memory > members_memory * (1 + 1e-12)) {
        plan_by_class();
        memory = claimed();
      }
    } else {
      plan_by_class();
      memory = claimed();
    }
    stats_.largest_node_memory_bytes = std::max(stats_.largest_node_memory_bytes, memory);
    stats_.largest_node_ops = std::max(stats_.largest_node_ops, static_cast<int>(ops.size()));
    coarse.add_op(std::move(node));
  }
  for (int g = 0; g < groups; ++g) {
    for (const auto& [dst, slot, bytes] : planned[g]) coarse.add_edge(g, dst, slot, bytes);
  }
  try {
    coarse.validate();
  } catch (const GraphError& e) {
    throw InternalError(std::string("fusion produced an invalid graph: ") + e.what());
  }
  stats_.ops_after = coarse.num_ops();
  stats_.edges_after = coarse.num_edges();
  result.coarse = std::move(coarse);
  result.stats = stats_;
  return result;
}

}  // namespace aware::fusion_internal
