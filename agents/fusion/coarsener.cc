// The coarsening algorithm of fuse_by_comm_ratio: argument checks, colocation
// contraction, and the greedy merge loop that keeps the coarse graph acyclic and
// every node within the memory limit. Writing the result is in fused_graph.cc.
#include "agents/fusion/coarsener.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware {
namespace fusion_internal {

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

}  // namespace fusion_internal

FusionResult fuse_by_comm_ratio(const OpGraph& graph, const Cluster& cluster,
                                const FusionOptions& options, const CostTable* table) {
  fusion_internal::Coarsener coarsener(graph, cluster, options, table);
  return coarsener.run();
}

}  // namespace aware
