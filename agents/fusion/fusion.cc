#include "agents/fusion/fusion.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The placers' static per-op memory: parameters + every output + workspace.
double op_memory_bytes(const Op& op) {
  return op.param_bytes + op.total_output_bytes() + op.temp_bytes;
}

std::uint64_t tensor_key(int op, int output) {
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

bool same_cost_parameters(const Device& a, const Device& b) {
  return a.kind == b.kind && a.peak_flops == b.peak_flops && a.efficiency == b.efficiency &&
         a.memory_Bps == b.memory_Bps && a.launch_overhead_us == b.launch_overhead_us;
}

class Coarsener {
 public:
  Coarsener(const OpGraph& graph, const Cluster& cluster, const FusionOptions& options,
            const CostTable* table)
      : graph_(graph),
        cluster_(cluster),
        options_(options),
        table_(table),
        costs_(graph, cluster, table) {}

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
  FusionResult build_result();

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

void Coarsener::init_nodes() {
  const int n = graph_.num_ops();
  parent_.resize(n);
  alive_.assign(n, true);
  alive_count_ = n;
  members_.resize(n);
  compute_us_.resize(n);
  memory_bytes_.resize(n);
  tag_.assign(n, -1);
  succ_.resize(n);
  pred_.resize(n);
  order_.resize(n);
  version_.assign(n, 0);
  mark_.assign(n, 0);
  for (int op = 0; op < n; ++op) {
    parent_[op] = op;
    members_[op] = {op};
    compute_us_[op] = costs_.min_time_us(op);
    memory_bytes_[op] = op_memory_bytes(graph_.op(op));
  }
  for (const Edge& e : graph_.edges()) {
    if (e.src == e.dst) continue;
    succ_[e.src][e.dst].add(tensor_key(e.src, e.src_output), e.bytes);
    pred_[e.dst].insert(e.src);
  }
  const std::vector<int> rank = topological_rank(graph_);
  for (int op = 0; op < n; ++op) order_[op] = rank[op];
}

// Kahn over the alive nodes, ties by smallest id; rewrites order_.
void Coarsener::renumber_topologically() {
  const int n = graph_.num_ops();
  std::vector<int> indegree(n, 0);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int x = 0; x < n; ++x) {
    if (!alive_[x]) continue;
    indegree[x] = static_cast<int>(pred_[x].size());
    if (indegree[x] == 0) ready.push(x);
  }
  long long next = 0;
  while (!ready.empty()) {
    const int x = ready.top();
    ready.pop();
    order_[x] = next++;
    for (const auto& [s, edge] : succ_[x])
      if (--indegree[s] == 0) ready.push(s);
  }
  AWARE_CHECK(next == alive_count_, "coarse graph has a cycle after a contraction");
}

// Moves `drop` into `keep`; edges between them vanish, parallel edges merge.
void Coarsener::contract(int keep, int drop) {
  for (auto& [s, edge] : succ_[drop]) {
    pred_[s].erase(drop);
    if (s == keep) continue;
    pred_[s].insert(keep);
    succ_[keep][s].absorb(edge);
  }
  succ_[drop].clear();
  for (int p : pred_[drop]) {
    if (p == keep) continue;
    auto it = succ_[p].find(drop);
    succ_[p][keep].absorb(it->second);
    succ_[p].erase(drop);
    pred_[keep].insert(p);
  }
  pred_[drop].clear();
  succ_[keep].erase(drop);
  pred_[keep].erase(drop);

  if (members_[keep].size() < members_[drop].size()) members_[keep].swap(members_[drop]);
  members_[keep].insert(members_[keep].end(), members_[drop].begin(), members_[drop].end());
  members_[drop].clear();
  members_[drop].shrink_to_fit();
  compute_us_[keep] += compute_us_[drop];
  memory_bytes_[keep] += memory_bytes_[drop];
  if (tag_[keep] < 0) tag_[keep] = tag_[drop];
  parent_[drop] = keep;
  alive_[drop] = false;
  --alive_count_;
  ++version_[keep];
  ++version_[drop];
}

// Colocation groups first: each group with every node on a path between two of
// its members (the convex hull a contraction must absorb), when that fits in
// memory. Otherwise the group's nodes are tagged and never merged with another
// group's, and the coarse graph carries the constraint for the placers.
void Coarsener::contract_colocation_groups() {
  std::map<std::string, int> index_of;
  std::vector<std::vector<int>> group_ops;
  for (int op = 0; op < graph_.num_ops(); ++op) {
    const std::string& name = graph_.op(op).colocation_group;
    if (name.empty()) continue;
    auto [it, inserted] = index_of.emplace(name, static_cast<int>(group_names_.size()));
    if (inserted) {
      group_names_.push_back(name);
      group_ops.emplace_back();
    }
    group_ops[it->second].push_back(op);
  }
  tag_parent_.resize(group_names_.size());
  for (size_t g = 0; g < tag_parent_.size(); ++g) tag_parent_[g] = static_cast<int>(g);

  const int n = graph_.num_ops();
  for (size_t g = 0; g < group_ops.size(); ++g) {
    std::vector<int> nodes;
    for (int op : group_ops[g]) nodes.push_back(find(op));
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    if (group_ops[g].size() < 2) continue;

    bool resolved = false;
    if (options_.colocation && nodes.size() > 1) {
      // Forward and backward reach from the group's nodes; the hull is their intersection.
      std::vector<char> reach(n, 0);  // bit 1 forward, bit 2 backward
      for (int pass = 0; pass < 2; ++pass) {
        const char bit = pass == 0 ? 1 : 2;
        std::vector<int> stack(nodes.begin(), nodes.end());
        for (int x : nodes) reach[x] |= bit;
        while (!stack.empty()) {
          const int x = stack.back();
          stack.pop_back();
          auto visit = [&](int y) {
            if (!(reach[y] & bit)) {
              reach[y] |= bit;
              stack.push_back(y);
            }
          };
          if (pass == 0) {
            for (const auto& [s, edge] : succ_[x]) visit(s);
          } else {
            for (int p : pred_[x]) visit(p);
          }
        }
      }
      std::vector<int> hull;
      double memory = 0;
      bool touches_unresolved = false;
      for (int x = 0; x < n; ++x) {
        if (!alive_[x] || reach[x] != 3) continue;
        hull.push_back(x);
        memory += memory_bytes_[x];
        if (tag_[x] >= 0) touches_unresolved = true;
      }
      if (memory <= memory_limit_ && !touches_unresolved) {
        const int keep = hull.front();
        for (size_t i = 1; i < hull.size(); ++i) contract(keep, hull[i]);
        renumber_topologically();
        ++stats_.colocation_merges;
        resolved = true;
      }
    } else if (nodes.size() == 1) {
      resolved = true;
    }
    if (!resolved) {
      ++stats_.colocation_unresolved;
      for (int x : nodes) {
        if (tag_[x] >= 0) tag_parent_[tag_root(tag_[x])] = static_cast<int>(g);
        tag_[x] = static_cast<int>(g);
      }
    }
  }
}

void Coarsener::push_candidate(int u, int v) {
  const double bytes = succ_[u].at(v).bytes;
  const double transfer = transfer_us(bytes);
  const double smaller = std::min(compute_us_[u], compute_us_[v]);
  Candidate c;
  c.u = u;
  c.v = v;
  c.version_u = version_[u];
  c.version_v = version_[v];
  c.ratio = transfer / std::max(smaller, 1e-9);
  if (options_.chain_rule && succ_[u].size() == 1 && pred_[v].size() == 1) {
    c.cls = 2;
  } else if (options_.comm_rule && transfer > options_.threshold * smaller) {
    c.cls = 1;
  } else {
    c.cls = 0;
  }
  queue_.push(c);
}

void Coarsener::push_incident(int node) {
  for (const auto& [s, edge] : succ_[node]) push_candidate(node, s);
  for (int p : pred_[node]) push_candidate(p, node);
}

// Is there a path u -> x ~> v besides the edge u -> v? Any such path runs through
// nodes numbered below v, so the DFS stays inside (order u, order v). Leaves the
// descendants of u it met in forward_reached_.
bool Coarsener::other_path_exists(int u, int v) {
  ++stamp_;
  forward_reached_.clear();
  stack_.clear();
  const long long limit = order_[v];
  for (const auto& [s, edge] : succ_[u]) {
    if (s == v || order_[s] >= limit) continue;
    mark_[s] = stamp_;
    stack_.push_back(s);
  }
  while (!stack_.empty()) {
    const int x = stack_.back();
    stack_.pop_back();
    forward_reached_.push_back(x);
    for (const auto& [y, edge] : succ_[x]) {
      if (y == v) return true;
      if (order_[y] < limit && mark_[y] != stamp_) {
        mark_[y] = stamp_;
        stack_.push_back(y);
      }
    }
  }
  return false;
}

// The ancestors of v numbered after u (none of them descends from u, or the merge
// would have been refused), into backward_reached_.
void Coarsener::collect_ancestors_after(int u, int v) {
  ++stamp_;
  backward_reached_.clear();
  stack_.clear();
  const long long limit = order_[u];
  for (int p : pred_[v]) {
    if (p == u || order_[p] <= limit) continue;
    mark_[p] = stamp_;
    stack_.push_back(p);
  }
  while (!stack_.empty()) {
    const int x = stack_.back();
    stack_.pop_back();
    backward_reached_.push_back(x);
    for (int p : pred_[x]) {
      if (order_[p] > limit && mark_[p] != stamp_) {
        mark_[p] = stamp_;
        stack_.push_back(p);
      }
    }
  }
}

// Keeps order_ topological when u -> v merges into u (Pearce-Kelly style): the
// numbers held by u, v, the ancestors A of v after u and the descendants D of u
// before v are pooled and handed out as A (old order), u, D (old order).
void Coarsener::repair_order(int u, int v) {
  if (forward_reached_.empty() && backward_reached_.empty()) return;  // u keeps its number
  std::vector<long long> pool;
  pool.reserve(forward_reached_.size() + backward_reached_.size() + 2);
  pool.push_back(order_[u]);
  pool.push_back(order_[v]);
  auto by_order = [&](int a, int b) { return order_[a] < order_[b]; };
  std::sort(backward_reached_.begin(), backward_reached_.end(), by_order);
  std::sort(forward_reached_.begin(), forward_reached_.end(), by_order);
  for (int x : backward_reached_) pool.push_back(order_[x]);
  for (int x : forward_reached_) pool.push_back(order_[x]);
  std::sort(pool.begin(), pool.end());
  size_t next = 0;
  for (int x : backward_reached_) order_[x] = pool[next++];
  order_[u] = pool[next++];
  for (int x : forward_reached_) order_[x] = pool[next++];
}

void Coarsener::merge_loop() {
  for (int u = 0; u < graph_.num_ops(); ++u) {
    if (!alive_[u]) continue;
    for (const auto& [s, edge] : succ_[u]) push_candidate(u, s);
  }
  const int target = options_.target_size;
  while (!queue_.empty()) {
    const Candidate c = queue_.top();
    queue_.pop();
    if (!alive_[c.u] || !alive_[c.v] || version_[c.u] != c.version_u ||
        version_[c.v] != c.version_v)
      continue;
    if (c.cls == 0 && (target <= 0 || alive_count_ <= target)) break;
    const int tu = tag_root(tag_[c.u]);
    const int tv = tag_root(tag_[c.v]);
    if (tu >= 0 && tv >= 0 && tu != tv) continue;  // two groups that must stay apart
    if (memory_bytes_[c.u] + memory_bytes_[c.v] > memory_limit_) {
      ++stats_.rejected_memory;
      continue;
    }
    if (other_path_exists(c.u, c.v)) {
      ++stats_.rejected_cycle;
      continue;
    }
    collect_ancestors_after(c.u, c.v);
    repair_order(c.u, c.v);
    contract(c.u, c.v);
    if (c.cls == 2) {
      ++stats_.chain_merges;
    } else if (c.cls == 1) {
      ++stats_.comm_merges;
    } else {
      ++stats_.target_merges;
    }
    push_incident(c.u);
  }
  stats_.target_met = target <= 0 || alive_count_ <= target;
}

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

FusionResult Coarsener::run() {
  if (!cluster_.finalized())
    throw ConfigError("fusion: cluster '" + cluster_.name() + "' is not finalized");
  if (!(options_.threshold > 0))
    throw ConfigError("fusion: threshold must be > 0, got " + std::to_string(options_.threshold));
  if (!(options_.memory_fraction > 0 && options_.memory_fraction <= 1))
    throw ConfigError("fusion: memory_fraction must be in (0, 1], got " +
                      std::to_string(options_.memory_fraction));
  if (options_.target_size < 0) throw ConfigError("fusion: target_size must not be negative");
  graph_.validate();

  stats_.ops_before = graph_.num_ops();
  stats_.edges_before = graph_.num_edges();
  // The slowest device-to-device route (ties: the longer latency).
  bool any_route = false;
  for (int s = 0; s < cluster_.num_devices(); ++s) {
    for (int d = 0; d < cluster_.num_devices(); ++d) {
      if (s == d) continue;
      const double bw = cluster_.route_bandwidth_Bps(s, d);
      const double lat = cluster_.route_latency_us(s, d);
      if (!any_route || bw < route_Bps_ || (bw == route_Bps_ && lat > route_latency_us_)) {
        route_Bps_ = bw;
        route_latency_us_ = lat;
      }
      any_route = true;
    }
  }
  stats_.slowest_route_Bps = route_Bps_;
  stats_.slowest_route_latency_us = route_latency_us_;
  double smallest = kInf;
  for (const Device& d : cluster_.devices()) smallest = std::min(smallest, d.memory_bytes);
  memory_limit_ = options_.memory_fraction * smallest;
  stats_.memory_limit_bytes = memory_limit_;

  init_nodes();
  contract_colocation_groups();
  merge_loop();
  return build_result();
}

}  // namespace

FusionResult fuse_by_comm_ratio(const OpGraph& graph, const Cluster& cluster,
                                const FusionOptions& options, const CostTable* table) {
  Coarsener coarsener(graph, cluster, options, table);
  return coarsener.run();
}

Placement expand_placement(const FusionResult& fusion, const Placement& coarse) {
  const int groups = static_cast<int>(fusion.ops_of_group.size());
  if (coarse.size() != groups)
    throw ConfigError("expand_placement: the coarse placement has " +
                      std::to_string(coarse.size()) + " entries for " + std::to_string(groups) +
                      " fused nodes");
  Placement fine(std::vector<int>(fusion.group_of_op.size(), -1));
  for (size_t op = 0; op < fusion.group_of_op.size(); ++op)
    fine[static_cast<int>(op)] = coarse[fusion.group_of_op[op]];
  return fine;
}

Placement coarsen_placement(const FusionResult& fusion, const Placement& fine) {
  if (fine.size() != static_cast<int>(fusion.group_of_op.size()))
    throw ConfigError("coarsen_placement: the placement has " + std::to_string(fine.size()) +
                      " entries for " + std::to_string(fusion.group_of_op.size()) + " ops");
  Placement coarse(std::vector<int>(fusion.ops_of_group.size(), 0));
  std::map<int, int> votes;
  for (size_t g = 0; g < fusion.ops_of_group.size(); ++g) {
    votes.clear();
    for (int op : fusion.ops_of_group[g]) ++votes[fine[op]];
    int best = -1, best_votes = -1;
    for (const auto& [device, count] : votes)
      if (count > best_votes) best = device, best_votes = count;
    coarse[static_cast<int>(g)] = best;
  }
  return coarse;
}

std::vector<std::string> fusion_option_keys() {
  return {"fusion.target_size",     "fusion.threshold", "fusion.chain", "fusion.comm",
          "fusion.memory_fraction", "fusion.cost",      "fusion.edges"};
}

FusionOptions fusion_options_from(const Options& options, const std::string& owner) {
  FusionOptions out;
  out.target_size = static_cast<int>(option_int(options, "fusion.target_size", 0, owner));
  out.threshold = option_double(options, "fusion.threshold", out.threshold, owner);
  out.chain_rule = option_int(options, "fusion.chain", 1, owner) != 0;
  out.comm_rule = option_int(options, "fusion.comm", 1, owner) != 0;
  out.memory_fraction =
      option_double(options, "fusion.memory_fraction", out.memory_fraction, owner);
  const std::string cost = option_string(options, "fusion.cost", "exact");
  if (cost == "exact") {
    out.cost_mode = FusedCostMode::kExactWhenHomogeneous;
  } else if (cost == "roofline") {
    out.cost_mode = FusedCostMode::kRooflineOfSum;
  } else {
    throw ConfigError(owner + ": fusion.cost must be exact or roofline, got '" + cost + "'");
  }
  const std::string edges = option_string(options, "fusion.edges", "pair");
  if (edges == "class") {
    out.edges = FusedEdgeMode::kPerTensorClass;
  } else if (edges == "pair") {
    out.edges = FusedEdgeMode::kOnePerPair;
  } else {
    throw ConfigError(owner + ": fusion.edges must be pair or class, got '" + edges + "'");
  }
  if (out.target_size < 0) throw ConfigError(owner + ": fusion.target_size must not be negative");
  if (!(out.threshold > 0)) throw ConfigError(owner + ": fusion.threshold must be > 0");
  if (!(out.memory_fraction > 0 && out.memory_fraction <= 1))
    throw ConfigError(owner + ": fusion.memory_fraction must be in (0, 1]");
  return out;
}

nlohmann::json fusion_stats_json(const FusionStats& s) {
  nlohmann::json j;
  j["ops_before"] = s.ops_before;
  j["ops_after"] = s.ops_after;
  j["edges_before"] = s.edges_before;
  j["edges_after"] = s.edges_after;
  j["colocation_merges"] = s.colocation_merges;
  j["colocation_unresolved"] = s.colocation_unresolved;
  j["chain_merges"] = s.chain_merges;
  j["comm_merges"] = s.comm_merges;
  j["target_merges"] = s.target_merges;
  j["rejected_cycle"] = s.rejected_cycle;
  j["rejected_memory"] = s.rejected_memory;
  j["target_met"] = s.target_met;
  j["slowest_route_Bps"] = s.slowest_route_Bps == kInf ? -1.0 : s.slowest_route_Bps;
  j["slowest_route_latency_us"] = s.slowest_route_latency_us;
  j["memory_limit_bytes"] = s.memory_limit_bytes == kInf ? -1.0 : s.memory_limit_bytes;
  j["largest_node_memory_bytes"] = s.largest_node_memory_bytes;
  j["largest_node_ops"] = s.largest_node_ops;
  j["internal_bytes"] = s.internal_bytes;
  j["cut_bytes"] = s.cut_bytes;
  return j;
}

nlohmann::json fusion_mapping_json(const OpGraph& fine, const FusionResult& fusion) {
  nlohmann::json j;
  j["graph"] = fine.name();
  j["coarse_graph"] = fusion.coarse.name();
  nlohmann::json groups = nlohmann::json::array();
  for (size_t g = 0; g < fusion.ops_of_group.size(); ++g) {
    nlohmann::json names = nlohmann::json::array();
    for (int op : fusion.ops_of_group[g]) names.push_back(fine.op(op).name);
    groups.push_back({{"node", fusion.coarse.op(static_cast<int>(g)).name}, {"ops", names}});
  }
  j["groups"] = groups;
  j["stats"] = fusion_stats_json(fusion.stats);
  return j;
}

}  // namespace aware
