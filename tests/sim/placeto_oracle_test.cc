// The Placeto mode against a plain oracle: the semantics of docs/simulators.md
// ("placeto") written the obvious way, one event queue holding every dependency,
// device and bus event, ordered by (time, kind, first name rank, second name
// rank), and a memory sweep that sorts every change. The simulator keeps fewer
// events and sorts less (sim/analytic/placeto_mode.cc); every field of the
// result must be the same, bit for bit, on zoo models and on random DAGs whose
// integer and zero costs make ties common.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>

#include "core/cost_model.h"
#include "core/random_dag.h"
#include "datasets/zoo.h"
#include "sim/analytic/analytic_simulator.h"
#include "sim/schedule_checks.h"
#include "test_graphs.h"

namespace aware {
namespace {

std::vector<int> name_ranks(std::vector<std::string> names) {
  std::vector<int> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return names[x] < names[y]; });
  std::vector<int> rank(names.size());
  for (size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<int>(i);
  return rank;
}

StepResult oracle(const OpGraph& g, const Cluster& cluster, const Placement& where,
                  const PlacetoConstants& k) {
  const int n = g.num_ops();
  const int D = cluster.num_devices();
  const OpCostMatrix costs(g, cluster);
  std::vector<std::string> names(n), dev_names(D);
  for (int op = 0; op < n; ++op) names[op] = g.op(op).name;
  for (int d = 0; d < D; ++d) dev_names[d] = cluster.device(d).name;
  const std::vector<int> rank = name_ranks(names), dev_rank = name_ranks(dev_names);
  std::vector<int> op_at(n), dev_at(D);
  for (int op = 0; op < n; ++op) op_at[rank[op]] = op;
  for (int d = 0; d < D; ++d) dev_at[dev_rank[d]] = d;

  // One dependency per (parent, child); the output is that of the child's last
  // input edge from the parent.
  std::vector<std::vector<std::pair<int, int>>> children(n);
  std::vector<int> parents_left(n, 0);
  for (int c = 0; c < n; ++c) {
    std::vector<std::pair<int, int>> seen;
    for (int e : g.in_edges(c)) {
      const Edge& edge = g.edge(e);
      auto it = std::find_if(seen.begin(), seen.end(), [&](auto& s) { return s.first == edge.src; });
      if (it == seen.end()) seen.push_back({edge.src, edge.src_output});
      else it->second = edge.src_output;
    }
    parents_left[c] = static_cast<int>(seen.size());
    for (auto& [parent, output] : seen) children[parent].push_back({c, output});
  }

  enum { kDependency = 0, kBus = 1, kDevice = 2 };
  using Ev = std::tuple<double, int, int, int>;  // time, kind, first rank, second rank
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> events;
  using Ready = std::tuple<double, long, int>;    // time, insertion counter, op or transfer
  std::vector<std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>>> ready(D), bus(D);
  struct Xfer { int op, output; double bytes; };
  std::vector<Xfer> xfers;
  std::vector<double> device_free(D, k.init_offset_us), bus_free(D, k.init_offset_us);
  std::vector<double> start(n, 0), end(n, 0);
  long counter = 0;
  StepResult r;
  r.device_busy_us.assign(D, 0);
  r.peak_memory_bytes.assign(D, 0);
  for (int op = 0; op < n; ++op)
    if (parents_left[op] == 0) {
      ready[where[op]].push({k.init_offset_us, counter++, op});
      events.push({k.init_offset_us, kDevice, dev_rank[where[op]], 0});
    }
  double last = k.init_offset_us;
  while (!events.empty()) {
    const auto [now, kind, a, b] = events.top();
    events.pop();
    last = now;
    if (kind == kDependency) {
      const int child = op_at[b];
      if (--parents_left[child] == 0) {
        ready[where[child]].push({now, counter++, child});
        events.push({now, kDevice, dev_rank[where[child]], 0});
      }
    } else if (kind == kDevice) {
      const int d = dev_at[a];
      if (now < device_free[d] || ready[d].empty() || std::get<0>(ready[d].top()) > now) continue;
      const int op = std::get<2>(ready[d].top());
      ready[d].pop();
      const double cost = costs.time_us(op, d);
      start[op] = now;
      end[op] = now + cost;
      r.device_busy_us[d] += cost;
      device_free[d] = cost > 0 ? end[op] + k.device_overhead_us : end[op];
      events.push({device_free[d], kDevice, a, 0});
      std::vector<int> sent;
      for (auto [child, output] : children[op]) {
        if (where[child] == d) {
          events.push({end[op], kDependency, rank[op], rank[child]});
        } else if (std::find(sent.begin(), sent.end(), output) == sent.end()) {
          sent.push_back(output);
          const auto& sizes = g.op(op).output_bytes;
          xfers.push_back({op, output, output < static_cast<int>(sizes.size()) ? sizes[output] : 0.0});
          bus[d].push({end[op], counter++, static_cast<int>(xfers.size()) - 1});
          events.push({end[op], kBus, a, 0});
        }
      }
    } else {
      const int d = dev_at[a];
      if (now < bus_free[d] || bus[d].empty() || std::get<0>(bus[d].top()) > now) continue;
      const Xfer x = xfers[std::get<2>(bus[d].top())];
      bus[d].pop();
      const double done = now + x.bytes / k.transfer_bytes_per_us;
      r.bytes_moved += x.bytes;
      ++r.transfers;
      for (auto [child, output] : children[x.op])
        if (where[child] != d && output == x.output)
          events.push({done, kDependency, rank[x.op], rank[child]});
      bus_free[d] = done + k.bus_overhead_us;
      events.push({bus_free[d], kBus, a, 0});
    }
  }
  r.step_time_us = last;

  // Outputs live from the op's start until its last child's end; frees before
  // allocations at one instant.
  std::vector<std::tuple<double, double, int>> changes;  // time, signed bytes, device
  for (int op = 0; op < n; ++op) {
    const double bytes = g.op(op).total_output_bytes();
    if (bytes <= 0) continue;
    double until = end[op];
    for (auto [child, output] : children[op]) until = std::max(until, end[child]);
    changes.push_back({start[op], bytes, where[op]});
    changes.push_back({until, -bytes, where[op]});
  }
  std::sort(changes.begin(), changes.end());
  std::vector<double> held(D, 0);
  for (auto [t, bytes, d] : changes) {
    held[d] += bytes;
    r.peak_memory_bytes[d] = std::max(r.peak_memory_bytes[d], held[d]);
  }
  for (int d = 0; d < D && r.feasible; ++d)
    if (r.peak_memory_bytes[d] > cluster.device(d).memory_bytes) r.feasible = false;
  return r;
}

Placement random_placement(int n, int devices, std::uint64_t& state) {
  std::vector<int> d(n);
  for (int& x : d) x = static_cast<int>(uniform_below(state, devices));
  return Placement(std::move(d));
}

TEST(PlacetoOracle, ZooModelsMatchBitForBit) {
  const Cluster c = make_cluster_preset("k40x4");
  AnalyticSimulator sim(AnalyticMode::kPlaceto);
  for (const std::string model : {"inception_v3", "resnet50", "nmt4"}) {
    const OpGraph g = build_zoo_model(model);
    std::uint64_t state = 7;
    for (int trial = 0; trial < 6; ++trial) {
      const Placement p = random_placement(g.num_ops(), trial == 0 ? 1 : c.num_devices(), state);
      testing::expect_same_numbers(sim.evaluate(g, c, p), oracle(g, c, p, PlacetoConstants{}),
                  model + " trial " + std::to_string(trial));
    }
  }
}

// Integer costs (0 among them) and outputs in whole multiples of the bus rate
// make ties in time common, so the tie rules and zero-length events are
// exercised; so do the constants at zero. Whole byte counts take the memory
// sweep that does not sort; fractional ones (every fourth seed) and more than 16
// devices (every third) take the sorted one. More than 16 devices also keep the
// device and bus events in a heap, where 3 keep them in a sorted vector.
TEST(PlacetoOracle, TiesAndZeroCostsOnRandomDags) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const Cluster c = testing::star_cluster(seed % 3 == 0 ? 17 : 3, 1e9, 1, 1e12);
    OpGraph g = random_layered_dag(150, seed, 6);
    std::uint64_t state = seed * 977;
    const double unit = seed % 4 == 0 ? 76000.25 : 76000;
    for (int op = 0; op < g.num_ops(); ++op) {
      Op& o = g.mutable_op(op);
      o.compute_us = static_cast<double>(uniform_below(state, 4)) * 10;
      for (double& b : o.output_bytes) b = static_cast<double>(uniform_below(state, 3)) * unit;
    }
    for (PlacetoConstants k : {PlacetoConstants{}, PlacetoConstants{0, 0, 7600, 0},
                               PlacetoConstants{10, 0, 7600, 5}}) {
      AnalyticSimulator sim(AnalyticMode::kPlaceto, k);
      for (int trial = 0; trial < 4; ++trial) {
        const Placement p = random_placement(g.num_ops(), c.num_devices(), state);
        testing::expect_same_numbers(sim.evaluate(g, c, p), oracle(g, c, p, k),
                    "seed " + std::to_string(seed) + " delta1 " + std::to_string(k.device_overhead_us) +
                        " trial " + std::to_string(trial));
      }
    }
  }
}

}  // namespace
}  // namespace aware
