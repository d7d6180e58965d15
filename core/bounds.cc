#include "core/bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"

namespace aware {

double CertifiedBound::best_us() const {
  double best = 0;
  for (const BoundTerm& t : terms)
    if (t.applies) best = std::max(best, t.us);
  return best;
}

std::string CertifiedBound::binding() const {
  const BoundTerm* best = nullptr;
  for (const BoundTerm& t : terms)
    if (t.applies && (!best || t.us > best->us)) best = &t;
  return best ? best->name : "";
}

namespace {

// One side of the idle-ends bound. For the start side, `from` holds each op's
// earliest start (its head); the work that can be done by time b is
// A(b) = sum clamp(b - head, 0, time), and the capacity left idle by then is at
// least D b - A(b). Returns the breakpoints b (sorted, starting at 0) with A(b)
// and F(b) = b - A(b) / D, for b up to the time A reaches the whole work.
// The end side is the same with tails in place of heads.
struct SidePoint {
  double at = 0;    // b (or e)
  double work = 0;  // A(b): work that fits before b
  double idle = 0;  // b - A(b) / D, the idle time per device, at least 0
};

std::vector<SidePoint> side_points(const std::vector<double>& time_us,
                                   const std::vector<double>& from_us,
                                   const std::vector<bool>& members, int devices) {
  // Slope changes: +1 where an op could start running, -1 where it must be done.
  std::vector<std::pair<double, int>> events;
  double end_all = 0;
  for (size_t i = 0; i < time_us.size(); ++i) {
    if (!members[i] || !(time_us[i] > 0)) continue;
    events.emplace_back(from_us[i], +1);
    events.emplace_back(from_us[i] + time_us[i], -1);
    end_all = std::max(end_all, from_us[i] + time_us[i]);
  }
  std::sort(events.begin(), events.end());
  std::vector<SidePoint> points{{0, 0, 0}};
  double at = 0, work = 0;
  int slope = 0;
  for (const auto& [x, delta] : events) {
    if (x > at) {
      work += slope * (x - at);
      at = x;
      points.push_back({at, work, std::max(0.0, at - work / devices)});
    }
    slope += delta;
    if (at >= end_all) break;
  }
  return points;
}

}  // namespace

double cheapest_transfer_us(const Cluster& cluster, double bytes) {
  const int D = cluster.num_devices();
  if (D < 2 || D > 256) return 0;
  double best = std::numeric_limits<double>::infinity();
  for (int a = 0; a < D; ++a)
    for (int b = 0; b < D; ++b)
      if (a != b) best = std::min(best, cluster.transfer_time_us(a, b, bytes));
  return std::isfinite(best) ? best : 0.0;
}

double idle_ends_bound_us(const std::vector<double>& time_us, const std::vector<double>& head_us,
                          const std::vector<double>& tail_us, const std::vector<bool>& members,
                          int devices) {
  if (devices <= 0) return 0;
  double total = 0;
  for (size_t i = 0; i < time_us.size(); ++i)
    if (members[i] && time_us[i] > 0) total += time_us[i];
  if (!(total > 0)) return 0;
  const std::vector<SidePoint> start = side_points(time_us, head_us, members, devices);
  const std::vector<SidePoint> end = side_points(time_us, tail_us, members, devices);
  // The two ends must not claim more work than there is: for each start point b,
  // the best end point e with B(e) <= W - A(b). B grows with e, so those e form a
  // prefix of `end`; keep the prefix maxima of the idle time.
  std::vector<double> prefix_idle(end.size());
  double best_end = 0;
  for (size_t k = 0; k < end.size(); ++k) prefix_idle[k] = best_end = std::max(best_end, end[k].idle);
  double best = 0;
  for (const SidePoint& s : start) {
    const double room = total - s.work;
    if (room < -1e-9 * total) continue;
    // Last end point whose work fits in `room`.
    auto it = std::upper_bound(end.begin(), end.end(), room + 1e-12 * total,
                               [](double r, const SidePoint& p) { return r < p.work; });
    const size_t k = static_cast<size_t>(it - end.begin());
    const double e_idle = k == 0 ? 0 : prefix_idle[k - 1];
    best = std::max(best, s.idle + e_idle);
  }
  return total / devices + best;
}

CertifiedBound certified_bound(const OpGraph& graph, const Cluster& cluster,
                               const OpCostMatrix& costs) {
  CertifiedBound out;
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  const LowerBound classic = lower_bound(graph, cluster, costs);

  // Critical path, with the transfers memory forces.
  std::vector<double> weight(n);
  for (int op = 0; op < n; ++op) weight[op] = costs.min_time_us(op);
  double largest_device = 0;
  for (int d = 0; d < D; ++d) largest_device = std::max(largest_device, cluster.device(d).memory_bytes);
  std::map<std::string, double> group_params;
  for (const Op& op : graph.ops())
    if (!op.colocation_group.empty()) group_params[op.colocation_group] += op.param_bytes;
  auto unit_params = [&](const Op& op) {
    return op.colocation_group.empty() ? op.param_bytes : group_params[op.colocation_group];
  };
  int forced = 0;
  std::vector<double> finish(n, 0);
  for (int op : topological_order(graph)) {
    double start = 0;
    for (int e : graph.in_edges(op)) {
      const Edge& edge = graph.edge(e);
      const Op& a = graph.op(edge.src);
      const Op& b = graph.op(op);
      double transfer = 0;
      const bool same_unit = !a.colocation_group.empty() && a.colocation_group == b.colocation_group;
      if (!same_unit && D >= 2 && unit_params(a) + unit_params(b) > largest_device) {
        transfer = cheapest_transfer_us(cluster, edge.bytes);
        ++forced;
      }
      start = std::max(start, finish[edge.src] + transfer);
    }
    finish[op] = start + weight[op];
  }
  double path = 0;
  for (double f : finish) path = std::max(path, f);
  out.add({"critical-path", path,
           forced ? std::to_string(forced) + " edges forced across devices by memory"
                  : "each op at its fastest device time, no transfers",
           true});
  out.add({"work", classic.work_us, "each stream's total time spread over the devices", true});

  // Idle ends: identical devices only.
  if (costs.num_classes() != 1 || D < 1) {
    out.add({"idle-ends", 0, "needs devices that cost every op alike", false});
    return out;
  }
  std::vector<double> head(n, 0), tail(n, 0);
  const std::vector<int> order = topological_order(graph);
  for (int op : order)
    for (int e : graph.out_edges(op)) {
      const int dst = graph.edge(e).dst;
      head[dst] = std::max(head[dst], head[op] + weight[op]);
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int e : graph.in_edges(*it)) {
      const int src = graph.edge(e).src;
      tail[src] = std::max(tail[src], tail[*it] + weight[*it]);
    }
  double idle = 0;
  for (int stream = 0; stream < 2; ++stream) {
    std::vector<bool> members(n);
    for (int op = 0; op < n; ++op) members[op] = (graph.op(op).stream == 1 ? 1 : 0) == stream;
    idle = std::max(idle, idle_ends_bound_us(weight, head, tail, members, D));
  }
  out.add({"idle-ends", idle, "work plus the time devices must idle at the start and the end", true});
  return out;
}

CertifiedBound certified_bound(const OpGraph& graph, const Cluster& cluster) {
  return certified_bound(graph, cluster, OpCostMatrix(graph, cluster));
}

}  // namespace aware
