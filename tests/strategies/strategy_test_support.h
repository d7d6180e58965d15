// What the strategy test files share: the two-layer MLP, clusters whose inserted
// collective ops cost ~0, the analytic step of a rewrite, counting and FLOP
// helpers, the graphs the properties run on, and the one-line error of a spec.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "datasets/families.h"
#include "datasets/zoo.h"
#include "strategies/rewrite.h"
#include "strategies/strategy.h"
#include "tests/test_graphs.h"

namespace aware::strategy_tests {

// The two-layer MLP training step of the fixtures (batch 8, weights 4000 + 2000 bytes;
// see tests/test_graphs.h for its ops and costs).
inline OpGraph mlp2() { return testing::two_layer_mlp_graph(); }

// Devices on one switch, 1000 B/us links with 1 us latency (2 hops between devices:
// 2 us + bytes / 1000), memory so fast that the inserted collective ops cost ~0.
// Other link rates on request (free_star: links that cost nothing).
inline Cluster fast_star(int n, double link_Bps = 1e9, double latency_us = 1,
                         const std::string& name = "star") {
  Device d;
  d.name = "dev";
  d.kind = "test";
  d.peak_flops = 1e18;
  d.memory_bytes = 1e9;
  d.memory_Bps = 1e18;
  return star_cluster(name, d, n, "sw", link_Bps, latency_us);
}

// Devices on one switch with free links: 1e18 B/s, no latency.
inline Cluster free_star(int n) { return fast_star(n, 1e18, 0, "free"); }

inline double step_us(const StrategyResult& r, const Cluster& c, Trace* trace = nullptr) {
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const StepResult s = sim->evaluate(r.graph, c, r.placement, trace);
  EXPECT_TRUE(s.feasible) << s.infeasible_reason;
  return s.step_time_us;
}

inline int count_type(const OpGraph& g, const std::string& type) {
  int n = 0;
  for (const Op& op : g.ops()) n += op.type == type;
  return n;
}

// Bytes each device sends in the trace.
inline std::map<int, double> bytes_sent(const Trace& trace) {
  std::map<int, double> sent;
  for (const TransferSpan& t : trace.transfers) sent[t.src_device] += t.bytes;
  return sent;
}

// Zoo and family graphs (ResNet-50 at batch 12, a cifar10 and a ptb member) for the
// properties every rewrite must keep.
inline std::vector<OpGraph> property_graphs() {
  std::vector<OpGraph> out;
  ModelOptions small;
  small.batch = 12;
  out.push_back(build_zoo_model("resnet50", small));
  out.push_back(build_family_graph("cifar10", 3));
  out.push_back(build_family_graph("ptb", 5));
  return out;
}

// FLOPs per role: batch-proportional model ops, gradient sums of shared weights,
// updates (strategy ops left out).
inline std::map<strategies_detail::Role, double> flops_by_role(const OpGraph& g) {
  const auto roles = strategies_detail::classify_batch_roles(g);
  std::map<strategies_detail::Role, double> f;
  for (int id = 0; id < g.num_ops(); ++id) {
    if (g.op(id).block != kStrategyBlock) f[roles.role[id]] += g.op(id).flops;
  }
  return f;
}

// The error message apply_strategy gives for `spec`, or "no error".
inline std::string strategy_error(const OpGraph& graph, const Cluster& cluster,
                                  const std::string& spec) {
  try {
    apply_strategy(graph, cluster, spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace aware::strategy_tests
