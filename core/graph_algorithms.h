// Graph algorithms every layer needs: topological order, reachability,
// critical path and the lower bound on step time.
#pragma once

#include <cstdint>
#include <vector>

namespace aware {

class OpGraph;
class Cluster;
class OpCostMatrix;

// Kahn's order; ties broken by smallest op id, so the order is deterministic.
// Throws GraphError naming an op on a cycle.
std::vector<int> topological_order(const OpGraph& graph);
// rank[op] = position of op in topological_order(graph).
std::vector<int> topological_rank(const OpGraph& graph);

// Transitive reachability as bitsets: descendants(i) holds every op reachable from i.
// Memory is n^2 / 8 bytes (10,000 ops: 12.5 MB).
class Reachability {
 public:
  explicit Reachability(const OpGraph& graph);
  int num_ops() const { return n_; }
  // True when there is a path of length >= 1 from `from` to `to`.
  bool reaches(int from, int to) const;
  std::vector<int> ancestors(int op) const;
  std::vector<int> descendants(int op) const;
  // Ops that are neither ancestors nor descendants of `op` (and not op itself).
  std::vector<int> parallel(int op) const;

 private:
  int n_ = 0;
  int words_ = 0;
  std::vector<std::uint64_t> desc_;  // row-major bitsets, n_ x words_
};

struct CriticalPath {
  double length_us = 0;   // sum of op times along the path
  std::vector<int> ops;   // the path, source to sink
};

// Longest path where each op weighs `weight_us[op]` and edges weigh nothing.
CriticalPath critical_path(const OpGraph& graph, const std::vector<double>& weight_us);
// Critical path with each op at its fastest device time, communication free.
CriticalPath compute_critical_path(const OpGraph& graph, const OpCostMatrix& costs);

struct LowerBound {
  double critical_path_us = 0;  // longest chain of compute, each op on its fastest device
  double work_us = 0;           // total compute spread perfectly over all devices
  double bound_us() const { return critical_path_us > work_us ? critical_path_us : work_us; }
};

// No placement's step time is below max(critical path, work). With devices whose op
// times are proportional to each other (same kind, or uniform speeds) the work term
// is sum(time on device 0) / sum(speed relative to device 0); otherwise the weaker
// but still valid sum(fastest time) / devices.
LowerBound lower_bound(const OpGraph& graph, const Cluster& cluster, const OpCostMatrix& costs);
LowerBound lower_bound(const OpGraph& graph, const Cluster& cluster);

}  // namespace aware
