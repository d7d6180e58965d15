// Internal to aware_fusion; not installed and not included outside agents/fusion/.
//
// The state shared by the two halves of fuse_by_comm_ratio: coarsener.cc shrinks
// the graph (colocation contraction, then the greedy merge loop under an
// incrementally repaired topological order), and fused_graph.cc turns the
// surviving nodes into the coarse OpGraph and the op <-> node mapping.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "agents/fusion/fusion.h"

namespace aware::fusion_internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The placers' static per-op memory: parameters + every output + workspace.
inline double op_memory_bytes(const Op& op) {
  return op.param_bytes + op.total_output_bytes() + op.temp_bytes;
}

// One fine tensor (producer op, output slot) as a single sortable key.
inline std::uint64_t tensor_key(int op, int output) {
  return (static_cast<std::uint64_t>(op) << 32) | static_cast<std::uint32_t>(output);
}

// The distinct fine tensors carried by one coarse edge. A tensor read by several
// ops of the destination node is sent once, so it counts once.
struct CoarseEdge {
  std::map<std::uint64_t, double> tensors;
  double bytes = 0;
  void add(std::uint64_t key, double tensor_bytes) {
    auto [it, inserted] = tensors.emplace(key, tensor_bytes);
    if (inserted) {
      bytes += tensor_bytes;
    } else if (tensor_bytes > it->second) {
      bytes += tensor_bytes - it->second;
      it->second = tensor_bytes;
    }
  }
  void absorb(const CoarseEdge& other) {
    for (const auto& [key, b] : other.tensors) add(key, b);
  }
};

// A merge the queue may take. Higher class first (2 chain, 1 comm, 0 target),
// then higher ratio, then smaller ids.
struct Candidate {
  int cls = 0;
  double ratio = 0;
  int u = -1;
  int v = -1;
  std::uint32_t version_u = 0;
  std::uint32_t version_v = 0;
};
struct LowerPriority {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.cls != b.cls) return a.cls < b.cls;
    if (a.ratio != b.ratio) return a.ratio < b.ratio;
    if (a.u != b.u) return a.u > b.u;
    return a.v > b.v;
  }
};

// One run of fuse_by_comm_ratio. Single use: construct, call run() once. Holds
// references to the graph, cluster, options and table, which must outlive it.
// Not thread-safe; separate instances are independent.
class Coarsener {
 public:
  Coarsener(const OpGraph& graph, const Cluster& cluster, const FusionOptions& options,
            const CostTable* table)
      : graph_(graph),
        cluster_(cluster),
        options_(options),
        table_(table),
        costs_(graph, cluster, table) {}

  // Checks the options, merges, and writes the result. Throws as fuse_by_comm_ratio.
  FusionResult run();

 private:
  int find(int op) {
    while (parent_[op] != op) {
      parent_[op] = parent_[parent_[op]];
      op = parent_[op];
    }
    return op;
  }
  int tag_root(int tag) {
    if (tag < 0) return tag;
    while (tag_parent_[tag] != tag) tag = tag_parent_[tag] = tag_parent_[tag_parent_[tag]];
    return tag;
  }
  double transfer_us(double bytes) const {
    if (route_Bps_ == kInf) return 0;  // one device: nothing is ever sent
    return route_latency_us_ + bytes / route_Bps_ * 1e6;
  }
  void init_nodes();
  void contract_colocation_groups();
  void renumber_topologically();
  void push_candidate(int u, int v);
  void push_incident(int node);
  bool other_path_exists(int u, int v);
  void collect_ancestors_after(int u, int v);
  void repair_order(int u, int v);
  void contract(int keep, int drop);
  void merge_loop();
  FusionResult build_result();  // fused_graph.cc

  const OpGraph& graph_;
  const Cluster& cluster_;
  const FusionOptions& options_;
  const CostTable* table_;
  OpCostMatrix costs_;
  FusionStats stats_;

  double route_Bps_ = kInf;
  double route_latency_us_ = 0;
  double memory_limit_ = kInf;

  // Coarse nodes are named by a representative fine op id.
  std::vector<int> parent_;
  std::vector<bool> alive_;
  int alive_count_ = 0;
  std::vector<std::vector<int>> members_;
  std::vector<double> compute_us_;  // summed fastest-device times
  std::vector<double> memory_bytes_;
  std::vector<int> tag_;  // unresolved colocation group (index into group_names_), or -1
  std::vector<int> tag_parent_;
  std::vector<std::string> group_names_;
  std::vector<std::map<int, CoarseEdge>> succ_;
  std::vector<std::set<int>> pred_;
  std::vector<long long> order_;  // a topological numbering of the alive nodes
  std::vector<std::uint32_t> version_;
  std::priority_queue<Candidate, std::vector<Candidate>, LowerPriority> queue_;

  // Scratch for the bounded searches.
  std::vector<std::uint32_t> mark_;
  std::uint32_t stamp_ = 0;
  std::vector<int> stack_;
  std::vector<int> forward_reached_;
  std::vector<int> backward_reached_;
};

}  // namespace aware::fusion_internal
