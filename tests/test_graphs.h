// Small hand-built graphs and clusters shared by the test suites.
#pragma once

#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/op_graph.h"

namespace aware::testing {

// An op with a measured cost (so every device runs it in exactly `us`).
inline Op timed_op(const std::string& name, double us, double out_bytes = 1000) {
  Op op;
  op.name = name;
  op.type = "Test";
  op.compute_us = us;
  op.output_bytes = {out_bytes};
  return op;
}

// `n` identical devices (1 GB memory each) on one switch; every device link
// carries `link_Bps` per direction with `latency_us`. Device-to-device routes
// therefore take two hops: 2 * latency + bytes / link_Bps.
inline Cluster star_cluster(int n, double link_Bps = 1e9, double latency_us = 1,
                            double memory_bytes = 1e9) {
  Cluster c("test-star");
  for (int i = 0; i < n; ++i) {
    Device d;
    d.name = "dev" + std::to_string(i);
    d.kind = "test";
    d.peak_flops = 1e12;
    d.efficiency = 1;
    d.memory_bytes = memory_bytes;
    d.memory_Bps = 1e11;
    c.add_device(d);
  }
  c.add_switch("sw");
  for (int i = 0; i < n; ++i) c.connect("dev" + std::to_string(i), "sw", link_Bps, latency_us);
  c.finalize();
  return c;
}

// a(10) -> b(20) -> c(30)
inline OpGraph chain_graph() {
  OpGraph g("chain");
  const int a = g.add_op(timed_op("a", 10));
  const int b = g.add_op(timed_op("b", 20));
  const int c = g.add_op(timed_op("c", 30));
  g.add_edge(a, b);
  g.add_edge(b, c);
  return g;
}

// a(10) -> {b(20), c(30)} -> d(5)
inline OpGraph diamond_graph() {
  OpGraph g("diamond");
  const int a = g.add_op(timed_op("a", 10));
  const int b = g.add_op(timed_op("b", 20));
  const int c = g.add_op(timed_op("c", 30));
  const int d = g.add_op(timed_op("d", 5));
  g.add_edge(a, b);
  g.add_edge(a, c);
  g.add_edge(b, d);
  g.add_edge(c, d);
  return g;
}

// src(10) -> x1..x4 (20 each) -> sink(10)
inline OpGraph fork_join_graph() {
  OpGraph g("fork-join");
  const int src = g.add_op(timed_op("src", 10));
  std::vector<int> mids;
  for (int i = 1; i <= 4; ++i) mids.push_back(g.add_op(timed_op("x" + std::to_string(i), 20)));
  const int sink = g.add_op(timed_op("sink", 10));
  for (int m : mids) {
    g.add_edge(src, m);
    g.add_edge(m, sink);
  }
  return g;
}

}  // namespace aware::testing
