// List schedulers: HEFT (Topcuoglu et al. 2002) and Baechi's m-TOPO, m-ETF and
// m-SCT (Jeon et al. 2020). Op times from OpCostMatrix, transfers from the
// cluster's idle-route time (CommModel). Each returns the device of every op of
// the schedule it builds; the schedule itself is discarded (the evaluator scores
// the placement).
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "agents/common/placer_common.h"
#include "agents/baselines/placers.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware::baselines {

using namespace aware::placing;  // the shared placer helpers (agents/common)
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ------------------------------------------------------------------ HEFT

struct Interval {
  double start_us;
  double end_us;
};

// Earliest start >= ready_us of a `duration_us` slot in a device's sorted busy list
// (insertion-based: idle gaps between scheduled ops count).
double earliest_slot(const std::vector<Interval>& busy, double ready_us, double duration_us) {
  double candidate = ready_us;
  for (const Interval& iv : busy) {
    if (iv.end_us <= candidate) continue;
    if (iv.start_us >= candidate + duration_us) return candidate;
    candidate = std::max(candidate, iv.end_us);
  }
  return candidate;
}

Placement heft(const OpGraph& graph, const Cluster& cluster) {
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  const OpCostMatrix costs(graph, cluster);
  const CommModel comm(cluster);
  const Units units = colocation_units(graph);
  const std::vector<int> order = topological_order(graph);
  const std::vector<int> topo_rank = topological_rank(graph);

  // Upward rank with mean compute and mean transfer time.
  std::vector<double> rank(n, 0.0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int op = *it;
    double tail = 0;
    for (int e : graph.out_edges(op)) {
      const Edge& edge = graph.edge(e);
      tail = std::max(tail, comm.mean_time_us(edge.bytes) + rank[edge.dst]);
    }
    rank[op] = costs.mean_time_us(op) + tail;
  }

  // Visiting ready ops by decreasing rank keeps precedence even when zero-cost
  // ops tie on rank.
  auto lower_priority = [&](int a, int b) {
    if (rank[a] != rank[b]) return rank[a] < rank[b];
    return topo_rank[a] > topo_rank[b];
  };
  std::priority_queue<int, std::vector<int>, decltype(lower_priority)> ready(lower_priority);
  std::vector<int> deps(n);
  for (int op = 0; op < n; ++op) {
    deps[op] = static_cast<int>(graph.in_edges(op).size());
    if (deps[op] == 0) ready.push(op);
  }

  std::vector<std::vector<Interval>> busy(D);
  std::vector<double> finish(n, 0.0);
  std::vector<int> unit_device(units.num_units(), -1);
  MemoryLedger ledger(graph, cluster);
  Placement p(std::vector<int>(n, -1));
  while (!ready.empty()) {
    const int op = ready.top();
    ready.pop();
    const int forced = unit_device[units.unit_of_op[op]];
    int best = -1;
    double best_start = 0, best_finish = kInf;
    bool best_fits = false;
    for (int d = 0; d < D; ++d) {
      if (forced >= 0 && d != forced) continue;
      double ready_us = 0;
      for (int e : graph.in_edges(op)) {
        const Edge& edge = graph.edge(e);
        ready_us = std::max(ready_us, finish[edge.src] + comm.time_us(p[edge.src], d, edge.bytes));
      }
      const double duration = costs.time_us(op, d);
      const double start = earliest_slot(busy[d], ready_us, duration);
      const bool fits = ledger.fits(op, d);
      // A device that fits always beats one that does not.
      if ((fits && !best_fits) || (fits == best_fits && start + duration < best_finish)) {
        best = d;
        best_start = start;
        best_finish = start + duration;
        best_fits = fits;
      }
    }
    p[op] = best;
    finish[op] = best_finish;
    unit_device[units.unit_of_op[op]] = best;
    ledger.place(op, best);
    auto& list = busy[best];
    list.insert(std::upper_bound(list.begin(), list.end(), best_start,
                                 [](double s, const Interval& iv) { return s < iv.start_us; }),
                Interval{best_start, best_finish});
    for (int e : graph.out_edges(op))
      if (--deps[graph.edge(e).dst] == 0) ready.push(graph.edge(e).dst);
  }
  return p;
}

// ------------------------------------------------------------------ m-TOPO

// The per-device cap of m-TOPO: the graph's total memory / devices + the largest
// op's memory (so the fill spreads the graph evenly, as in Baechi's m_topo.py),
// never above the device's own memory.
std::vector<double> m_topo_caps(const OpGraph& graph, const Cluster& cluster) {
  double total = 0, largest_op = 0;
  for (const Op& op : graph.ops()) {
    total += op_memory_bytes(op);
    largest_op = std::max(largest_op, op_memory_bytes(op));
  }
  std::vector<double> caps;
  for (const Device& d : cluster.devices())
    caps.push_back(std::min(d.memory_bytes, total / cluster.num_devices() + largest_op));
  return caps;
}

Placement m_topo(const OpGraph& graph, const Cluster& cluster) {
  const int D = cluster.num_devices();
  const Units units = colocation_units(graph);
  const std::vector<double> caps = m_topo_caps(graph, cluster);
  std::vector<double> used(D, 0.0);
  std::vector<int> unit_device(units.num_units(), -1);
  Placement p(std::vector<int>(graph.num_ops(), -1));
  int current = 0;
  for (int op : topological_order(graph)) {
    int& unit_dev = unit_device[units.unit_of_op[op]];
    const double bytes = op_memory_bytes(graph.op(op));
    if (unit_dev < 0) {
      while (current + 1 < D && used[current] + bytes > caps[current]) ++current;
      unit_dev = current;
    }
    p[op] = unit_dev;
    used[unit_dev] += bytes;
  }
  return p;
}

// ------------------------------------------------------------------ m-ETF / m-SCT

// Earliest-task-first list scheduling with Baechi's memory rule: a device's memory
// holds parameters, outputs until their last consumer has been scheduled, received
// copies and the running op's workspace. With `favourite_child` (m-SCT), a device
// that just ran op i is reserved for i's favourite child: another op may use it
// only if it finishes before the child could start there, or if every device is
// reserved for someone else (the op is then urgent).
Placement etf(const OpGraph& graph, const Cluster& cluster, const std::vector<int>* favourite_child) {
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  const OpCostMatrix costs(graph, cluster);
  const CommModel comm(cluster);
  const Units units = colocation_units(graph);
  const std::vector<int> topo_rank = topological_rank(graph);

  std::vector<int> deps(n), consumers_left(n);
  std::vector<int> ready;
  for (int op = 0; op < n; ++op) {
    deps[op] = static_cast<int>(graph.in_edges(op).size());
    consumers_left[op] = static_cast<int>(graph.out_edges(op).size());
    if (deps[op] == 0) ready.push_back(op);
  }
  std::vector<int> favourite_parent(n, -1);
  if (favourite_child != nullptr)
    for (int op = 0; op < n; ++op)
      if ((*favourite_child)[op] >= 0) favourite_parent[(*favourite_child)[op]] = op;

  std::vector<double> device_free(D, 0.0), memory(D, 0.0);
  std::vector<double> channel_free(static_cast<size_t>(D) * D, 0.0);
  std::vector<double> finish(n, 0.0);
  std::vector<int> unit_device(units.num_units(), -1);
  std::vector<int> reserved_for(D, -1);
  Placement p(std::vector<int>(n, -1));

  // Arrival of op's last input on device d given the channels' current state.
  auto ready_time = [&](int op, int d) {
    double t = 0;
    for (int e : graph.in_edges(op)) {
      const Edge& edge = graph.edge(e);
      const int s = p[edge.src];
      if (s < 0) continue;  // only for the reservation estimate of unscheduled children
      if (s == d) {
        t = std::max(t, finish[edge.src]);
      } else {
        const double begin = std::max(finish[edge.src], channel_free[s * D + d]);
        t = std::max(t, begin + comm.time_us(s, d, edge.bytes));
      }
    }
    return t;
  };
  auto received = [&](int op, int d) {
    double bytes = 0;
    for (int e : graph.in_edges(op))
      if (p[graph.edge(e).src] != d) bytes += graph.edge(e).bytes;
    return bytes;
  };
  auto needs = [&](int op, int d) {
    const Op& o = graph.op(op);
    return o.param_bytes + o.total_output_bytes() + o.temp_bytes + received(op, d);
  };

  for (int scheduled = 0; scheduled < n; ++scheduled) {
    AWARE_CHECK(!ready.empty(), "ETF ran out of ready ops on a DAG");
    bool all_reserved = favourite_child != nullptr;
    for (int d = 0; d < D && all_reserved; ++d) all_reserved = reserved_for[d] >= 0;
    struct Choice {
      int op = -1, device = -1;
      double start = kInf;
      bool fits = false;
    } best;
    for (int pass = 0; pass < 2 && best.op < 0; ++pass) {
      // Pass 0 honours m-SCT reservations; pass 1 (only if nothing was allowed) not.
      for (int op : ready) {
        const int forced = unit_device[units.unit_of_op[op]];
        const int fav_parent = favourite_parent[op];
        const int fav_dev = fav_parent >= 0 ? p[fav_parent] : -1;
        for (int d = 0; d < D; ++d) {
          if (forced >= 0 && d != forced) continue;
          // The favourite child goes where its favourite parent ran.
          if (forced < 0 && fav_dev >= 0 && d != fav_dev && pass == 0 &&
              memory[fav_dev] + needs(op, fav_dev) <= cluster.device(fav_dev).memory_bytes)
            continue;
          const double start = std::max(ready_time(op, d), device_free[d]);
          const double end = start + costs.time_us(op, d);
          const int owner = reserved_for[d];
          if (pass == 0 && forced < 0 && owner >= 0 && owner != op && !all_reserved &&
              end > ready_time(owner, d))
            continue;
          const bool fits = memory[d] + needs(op, d) <= cluster.device(d).memory_bytes;
          const bool better =
              (fits && !best.fits) ||
              (fits == best.fits &&
               (start < best.start ||
                (start == best.start && (topo_rank[op] < topo_rank[best.op] ||
                                         (op == best.op && d < best.device)))));
          if (better) best = Choice{op, d, start, fits};
        }
      }
    }
    const int op = best.op, d = best.device;
    AWARE_CHECK(op >= 0, "ETF found no candidate");
    for (int e : graph.in_edges(op)) {
      const Edge& edge = graph.edge(e);
      const int s = p[edge.src];
      if (s != d) {
        const double begin = std::max(finish[edge.src], channel_free[s * D + d]);
        channel_free[s * D + d] = begin + comm.time_us(s, d, edge.bytes);
      }
    }
    const Op& o = graph.op(op);
    p[op] = d;
    finish[op] = best.start + costs.time_us(op, d);
    device_free[d] = finish[op];
    unit_device[units.unit_of_op[op]] = d;
    // Workspace and received copies are gone once the op has run; its outputs stay
    // until the last consumer is scheduled.
    memory[d] += o.param_bytes + o.total_output_bytes();
    for (int e : graph.in_edges(op)) {
      const int src = graph.edge(e).src;
      if (--consumers_left[src] == 0) memory[p[src]] -= graph.op(src).total_output_bytes();
    }
    if (consumers_left[op] == 0) memory[d] -= o.total_output_bytes();
    // A reservation ends when its owner is scheduled; an op that slipped in ahead
    // of a favourite child leaves the reservation in place.
    for (int& owner : reserved_for)
      if (owner == op) owner = -1;
    if (favourite_child != nullptr && (*favourite_child)[op] >= 0)
      reserved_for[d] = (*favourite_child)[op];

    ready.erase(std::find(ready.begin(), ready.end(), op));
    for (int e : graph.out_edges(op))
      if (--deps[graph.edge(e).dst] == 0) ready.push_back(graph.edge(e).dst);
  }
  return p;
}

// m-SCT's favourite children without an LP: edges by decreasing mean transfer
// time, each taken when its parent has no favourite child yet and its child no
// favourite parent (a greedy maximum-weight matching, standing in for rounding the
// LP relaxation at 0.5). Edges whose transfer is cheaper than the child's compute
// are skipped: SCT only pays off where communication is what hurts.
std::vector<int> favourite_children(const OpGraph& graph, const Cluster& cluster) {
  const int n = graph.num_ops();
  const OpCostMatrix costs(graph, cluster);
  const CommModel comm(cluster);
  std::vector<int> edges(graph.num_edges());
  for (int e = 0; e < graph.num_edges(); ++e) edges[e] = e;
  std::vector<double> weight(graph.num_edges());
  for (int e = 0; e < graph.num_edges(); ++e) weight[e] = comm.mean_time_us(graph.edge(e).bytes);
  std::stable_sort(edges.begin(), edges.end(), [&](int a, int b) { return weight[a] > weight[b]; });
  std::vector<int> child(n, -1);
  std::vector<char> has_parent(n, 0);
  for (int e : edges) {
    const Edge& edge = graph.edge(e);
    if (child[edge.src] >= 0 || has_parent[edge.dst]) continue;
    if (weight[e] <= 0) break;
    child[edge.src] = edge.dst;
    has_parent[edge.dst] = 1;
  }
  return child;
}

// A list scheduler wrapped as a Placer: option-free, deterministic.
class ListPlacer final : public Placer {
 public:
  enum class Kind { kHeft, kTopo, kEtf, kSct };
  explicit ListPlacer(Kind kind) : kind_(kind) {}
  std::string name() const override {
    switch (kind_) {
      case Kind::kHeft: return "heft";
      case Kind::kTopo: return "m-topo";
      case Kind::kEtf: return "m-etf";
      case Kind::kSct: return "m-sct";
    }
    return "";
  }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_context(context, name());
    check_graph_can_fit(graph, cluster);
    Placement p;
    switch (kind_) {
      case Kind::kHeft: p = heft(graph, cluster); break;
      case Kind::kTopo: p = m_topo(graph, cluster); break;
      case Kind::kEtf: p = etf(graph, cluster, nullptr); break;
      case Kind::kSct: {
        const std::vector<int> fav = favourite_children(graph, cluster);
        p = etf(graph, cluster, &fav);
        break;
      }
    }
    return with_memory_fallback(graph, cluster, std::move(p), context.evaluator);
  }

 private:
  Kind kind_;
};

}  // namespace

std::vector<double> m_topo_memory_caps(const OpGraph& graph, const Cluster& cluster) {
  return m_topo_caps(graph, cluster);
}

std::unique_ptr<Placer> make_heft_placer() {
  return std::make_unique<ListPlacer>(ListPlacer::Kind::kHeft);
}
std::unique_ptr<Placer> make_m_topo_placer() {
  return std::make_unique<ListPlacer>(ListPlacer::Kind::kTopo);
}
std::unique_ptr<Placer> make_m_etf_placer() {
  return std::make_unique<ListPlacer>(ListPlacer::Kind::kEtf);
}
std::unique_ptr<Placer> make_m_sct_placer() {
  return std::make_unique<ListPlacer>(ListPlacer::Kind::kSct);
}

}  // namespace aware::baselines
