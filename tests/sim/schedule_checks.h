// The schedule properties every simulated step must have, shared by the analytic
// tests on random DAGs and on the model zoo.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/cluster.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"
#include "sim/analytic/analytic_simulator.h"

namespace aware::testing {

// Every op runs exactly once on its device, after its inputs arrived; one op at
// a time per device; one transfer at a time per link channel (contention mode);
// the step is never below the lower bound; the same inputs give the same result,
// also from a clone.
inline void expect_valid_schedule(AnalyticMode mode, const OpGraph& g, const Cluster& c,
                                  const Placement& p) {
  AnalyticSimulator sim(mode);
  Trace t;
  const StepResult r = sim.evaluate(g, c, p, &t);
  ASSERT_EQ(static_cast<int>(t.ops.size()), g.num_ops());
  for (int op = 0; op < g.num_ops(); ++op) {
    EXPECT_EQ(t.ops[op].op, op);
    EXPECT_EQ(t.ops[op].device, p[op]);
    EXPECT_GE(t.ops[op].start_us, 0);
    EXPECT_GE(t.ops[op].end_us, t.ops[op].start_us);
    EXPECT_LE(t.ops[op].end_us, r.step_time_us);
  }
  for (const Edge& e : g.edges()) {
    double arrival = t.ops[e.src].end_us;
    if (p[e.src] != p[e.dst] && mode == AnalyticMode::kContention)
      arrival += c.route_latency_us(p[e.src], p[e.dst]);
    EXPECT_GE(t.ops[e.dst].start_us + 1e-9, arrival) << g.op(e.src).name << "->" << g.op(e.dst).name;
  }
  for (int d = 0; d < c.num_devices(); ++d) {
    std::vector<std::pair<double, double>> spans;
    for (const OpSpan& s : t.ops)
      if (s.device == d) spans.push_back({s.start_us, s.end_us});
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first + 1e-9, spans[i - 1].second);
  }
  if (mode == AnalyticMode::kContention) {
    std::map<int, std::vector<std::pair<double, double>>> by_channel;
    for (const TransferSpan& s : t.transfers)
      for (int ch : s.channels) by_channel[ch].push_back({s.start_us, s.end_us});
    for (auto& [ch, spans] : by_channel) {
      std::sort(spans.begin(), spans.end());
      for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first + 1e-9, spans[i - 1].second);
    }
  }
  EXPECT_GE(r.step_time_us + 1e-6, lower_bound(g, c).bound_us());
  const StepResult again = sim.evaluate(g, c, p);
  EXPECT_EQ(again.step_time_us, r.step_time_us);
  EXPECT_EQ(again.peak_memory_bytes, r.peak_memory_bytes);
  EXPECT_EQ(sim.clone()->evaluate(g, c, p).step_time_us, r.step_time_us);
}

}  // namespace aware::testing
