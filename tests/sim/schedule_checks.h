// The schedule properties every simulated or measured step must have, shared by
// the analytic tests on random DAGs and on the model zoo, and by the evaluator
// conformance suite (tests/conformance) for every registered evaluator.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/graph_algorithms.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "sim/analytic/analytic_simulator.h"

namespace aware::testing {

// What a schedule check may assume of an evaluator.
struct ScheduleClaims {
  bool route_latency = true;       // an input crosses devices no faster than its route's latency
  bool exclusive_channels = true;  // one transfer at a time per link channel (fcfs links)
  bool deterministic = true;       // the same inputs give the same result, also from a clone
};

// Every op runs exactly once on its device, after its inputs arrived; one op at
// a time per device; the claims above; the step is never below the lower bound.
// Works for any Evaluator (the conformance suites run it over every registered one).
inline void expect_valid_schedule(Evaluator& evaluator, const ScheduleClaims& claims,
                                  const OpGraph& g, const Cluster& c, const Placement& p,
                                  double rel_tol = 1e-9) {
  Trace t;
  const StepResult r = evaluator.evaluate(g, c, p, &t);
  ASSERT_EQ(static_cast<int>(t.ops.size()), g.num_ops());
  const double slack = 1e-9 + rel_tol * r.step_time_us;
  for (int op = 0; op < g.num_ops(); ++op) {
    EXPECT_EQ(t.ops[op].op, op);
    EXPECT_EQ(t.ops[op].device, p[op]);
    EXPECT_GE(t.ops[op].start_us, 0);
    EXPECT_GE(t.ops[op].end_us, t.ops[op].start_us);
    EXPECT_LE(t.ops[op].end_us, r.step_time_us + slack);
  }
  for (const Edge& e : g.edges()) {
    double arrival = t.ops[e.src].end_us;
    if (p[e.src] != p[e.dst] && claims.route_latency) arrival += c.route_latency_us(p[e.src], p[e.dst]);
    EXPECT_GE(t.ops[e.dst].start_us + slack, arrival) << g.op(e.src).name << "->" << g.op(e.dst).name;
  }
  for (int d = 0; d < c.num_devices(); ++d) {
    std::vector<std::pair<double, double>> spans;
    for (const OpSpan& s : t.ops)
      if (s.device == d) spans.push_back({s.start_us, s.end_us});
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first + slack, spans[i - 1].second);
  }
  if (claims.exclusive_channels) {
    std::map<int, std::vector<std::pair<double, double>>> by_channel;
    for (const TransferSpan& s : t.transfers)
      for (int ch : s.channels) by_channel[ch].push_back({s.start_us, s.end_us});
    for (auto& [ch, spans] : by_channel) {
      std::sort(spans.begin(), spans.end());
      for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first + slack, spans[i - 1].second);
    }
  }
  EXPECT_GE(r.step_time_us * (1 + rel_tol) + 1e-6, lower_bound(g, c).bound_us());
  if (claims.deterministic) {
    const StepResult again = evaluator.evaluate(g, c, p);
    EXPECT_EQ(again.step_time_us, r.step_time_us);
    EXPECT_EQ(again.peak_memory_bytes, r.peak_memory_bytes);
    EXPECT_EQ(evaluator.clone()->evaluate(g, c, p).step_time_us, r.step_time_us);
  }
}

// The analytic simulator in `mode`: Placeto's bus model claims neither route
// latencies nor exclusive link channels.
inline void expect_valid_schedule(AnalyticMode mode, const OpGraph& g, const Cluster& c,
                                  const Placement& p) {
  AnalyticSimulator sim(mode);
  const bool links = mode == AnalyticMode::kContention;
  expect_valid_schedule(sim, ScheduleClaims{links, links, true}, g, c, p);
}

// Every number of two results, doubles compared with == (bit-identical for
// finite values); `where` names the case in a failure.
inline void expect_same_numbers(const StepResult& got, const StepResult& want, const std::string& where) {
  EXPECT_EQ(got.step_time_us, want.step_time_us) << where;
  EXPECT_EQ(got.device_busy_us, want.device_busy_us) << where;
  EXPECT_EQ(got.peak_memory_bytes, want.peak_memory_bytes) << where;
  EXPECT_EQ(got.bytes_moved, want.bytes_moved) << where;
  EXPECT_EQ(got.transfers, want.transfers) << where;
  EXPECT_EQ(got.feasible, want.feasible) << where;
}

}  // namespace aware::testing
