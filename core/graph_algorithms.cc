#include "core/graph_algorithms.h"

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/op_graph.h"

namespace aware {

std::vector<int> topological_order(const OpGraph& graph) {
  const int n = graph.num_ops();
  std::vector<int> indegree(n, 0);
  for (const Edge& e : graph.edges()) ++indegree[e.dst];
  // Smallest id first keeps the order deterministic and close to insertion order.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int op = ready.top();
    ready.pop();
    order.push_back(op);
    for (int e : graph.out_edges(op)) {
      if (--indegree[graph.edge(e).dst] == 0) ready.push(graph.edge(e).dst);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (indegree[i] > 0) {
        // An op left unscheduled waits on another unscheduled op: that edge is on
        // (or leads out of) a cycle.
        const std::string where = graph.source().empty() ? graph.name() : graph.source();
        std::string from;
        for (int e : graph.in_edges(i)) {
          if (indegree[graph.edge(e).src] > 0) {
            from = " from op '" + graph.op(graph.edge(e).src).name + "'";
            break;
          }
        }
        throw GraphError(where + ": op '" + graph.op(i).name + "': the edge" + from +
                         " (field 'edges') is on a cycle: the graph must be a DAG");
      }
    }
  }
  return order;
}

std::vector<int> topological_rank(const OpGraph& graph) {
  const std::vector<int> order = topological_order(graph);
  std::vector<int> rank(order.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i) rank[order[i]] = i;
  return rank;
}

Reachability::Reachability(const OpGraph& graph) : n_(graph.num_ops()), words_((n_ + 63) / 64) {
  desc_.assign(static_cast<size_t>(n_) * words_, 0);
  const std::vector<int> order = topological_order(graph);
  // Reverse topological order: a node's descendants are its children and theirs.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int op = *it;
    std::uint64_t* row = &desc_[static_cast<size_t>(op) * words_];
    for (int e : graph.out_edges(op)) {
      const int child = graph.edge(e).dst;
      const std::uint64_t* child_row = &desc_[static_cast<size_t>(child) * words_];
      for (int w = 0; w < words_; ++w) row[w] |= child_row[w];
      row[child / 64] |= std::uint64_t{1} << (child % 64);
    }
  }
}

bool Reachability::reaches(int from, int to) const {
  return (desc_[static_cast<size_t>(from) * words_ + to / 64] >> (to % 64)) & 1u;
}

std::vector<int> Reachability::descendants(int op) const {
  std::vector<int> out;
  for (int j = 0; j < n_; ++j)
    if (reaches(op, j)) out.push_back(j);
  return out;
}

std::vector<int> Reachability::ancestors(int op) const {
  std::vector<int> out;
  for (int j = 0; j < n_; ++j)
    if (reaches(j, op)) out.push_back(j);
  return out;
}

std::vector<int> Reachability::parallel(int op) const {
  std::vector<int> out;
  for (int j = 0; j < n_; ++j)
    if (j != op && !reaches(op, j) && !reaches(j, op)) out.push_back(j);
  return out;
}

CriticalPath critical_path(const OpGraph& graph, const std::vector<double>& weight_us) {
  AWARE_CHECK(static_cast<int>(weight_us.size()) == graph.num_ops(), "one weight per op");
  const std::vector<int> order = topological_order(graph);
  std::vector<double> finish(graph.num_ops(), 0);
  std::vector<int> via(graph.num_ops(), -1);
  for (int op : order) {
    double start = 0;
    for (int e : graph.in_edges(op)) {
      const int parent = graph.edge(e).src;
      if (via[op] < 0 || finish[parent] > start) {
        start = finish[parent];
        via[op] = parent;
      }
    }
    finish[op] = start + weight_us[op];
  }
  CriticalPath path;
  int last = -1;
  for (int op = 0; op < graph.num_ops(); ++op) {
    if (last < 0 || finish[op] > finish[last]) last = op;
  }
  if (last < 0) return path;
  path.length_us = finish[last];
  for (int op = last; op >= 0; op = via[op]) path.ops.push_back(op);
  std::reverse(path.ops.begin(), path.ops.end());
  return path;
}

CriticalPath compute_critical_path(const OpGraph& graph, const OpCostMatrix& costs) {
  std::vector<double> weight(graph.num_ops());
  for (int op = 0; op < graph.num_ops(); ++op) weight[op] = costs.min_time_us(op);
  return critical_path(graph, weight);
}

LowerBound lower_bound(const OpGraph& graph, const Cluster& cluster, const OpCostMatrix& costs) {
  LowerBound bound;
  bound.critical_path_us = compute_critical_path(graph, costs).length_us;
  const int devices = cluster.num_devices();
  if (devices == 0 || graph.num_ops() == 0) return bound;
  // Are the devices "uniform" (each device's times a fixed multiple of device 0's)?
  std::vector<double> ratio(devices, 0);
  bool uniform = true;
  for (int d = 0; d < devices && uniform; ++d) {
    bool have_ratio = false;
    for (int op = 0; op < graph.num_ops(); ++op) {
      const double t0 = costs.time_us(op, 0);
      const double td = costs.time_us(op, d);
      if (t0 <= 0 && td <= 0) continue;
      if (t0 <= 0 || td <= 0) {
        uniform = false;
        break;
      }
      const double r = td / t0;
      if (!have_ratio) {
        ratio[d] = r;
        have_ratio = true;
      } else if (std::fabs(r - ratio[d]) > 1e-9 * std::max(1.0, ratio[d])) {
        uniform = false;
        break;
      }
    }
    if (!have_ratio) ratio[d] = 1;
  }
  // Each device runs two in-order streams side by side (compute, and the
  // communication stream a strategy's collectives use), so the work term is per
  // stream: the larger of the two streams' totals spread over the devices. Summing
  // both would give a "bound" a step that overlaps them can beat.
  double total[2] = {0, 0};
  double speed_sum = devices;
  for (int op = 0; op < graph.num_ops(); ++op) {
    const int stream = graph.op(op).stream == 1 ? 1 : 0;
    total[stream] += uniform ? costs.time_us(op, 0) : costs.min_time_us(op);
  }
  if (uniform) {
    speed_sum = 0;
    for (int d = 0; d < devices; ++d) speed_sum += 1.0 / ratio[d];
  }
  bound.work_us = std::max(total[0], total[1]) / speed_sum;
  return bound;
}

LowerBound lower_bound(const OpGraph& graph, const Cluster& cluster) {
  return lower_bound(graph, cluster, OpCostMatrix(graph, cluster));
}

}  // namespace aware
