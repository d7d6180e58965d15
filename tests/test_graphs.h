// Small hand-built graphs and clusters shared by the test suites: the one
// fixture header (namespace aware::testing) every tests/ folder includes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/op_graph.h"

namespace aware::testing {

// An op with a measured cost (so every device runs it in exactly `us`), one
// output of `out_bytes`, and `param_bytes` / `temp_bytes` of parameters / workspace.
inline Op timed_op(const std::string& name, double us, double out_bytes = 1000,
                   double param_bytes = 0, double temp_bytes = 0) {
  Op op;
  op.name = name;
  op.type = "Test";
  op.compute_us = us;
  op.output_bytes = {out_bytes};
  op.param_bytes = param_bytes;
  op.temp_bytes = temp_bytes;
  return op;
}

// `n` identical devices (1 GB memory each) on one switch; every device link
// carries `link_Bps` per direction with `latency_us`. Device-to-device routes
// therefore take two hops: 2 * latency + bytes / link_Bps.
inline Cluster star_cluster(int n, double link_Bps = 1e9, double latency_us = 1,
                            double memory_bytes = 1e9) {
  Device d;
  d.name = "dev";  // dev0, dev1, ...
  d.kind = "test";
  d.peak_flops = 1e12;
  d.efficiency = 1;
  d.memory_bytes = memory_bytes;
  d.memory_Bps = 1e11;
  return aware::star_cluster("test-star", d, n, "sw", link_Bps, latency_us);
}

// The placer tests' star: links without latency, and 16 GB per device unless a
// test makes memory bind.
inline Cluster zero_latency_star(int n, double memory_bytes = 16e9, double link_Bps = 1e9) {
  return star_cluster(n, link_Bps, /*latency_us=*/0, memory_bytes);
}

// `base`'s devices, switches and links with every device's memory set to `bytes`.
inline Cluster with_memory(const Cluster& base, double bytes) {
  Cluster c(base.name() + "-tight");
  for (Device d : base.devices()) {
    d.memory_bytes = bytes;
    c.add_device(d);
  }
  for (const std::string& s : base.switches()) c.add_switch(s);
  for (const Link& l : base.links()) c.add_link(l);
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

// Two producers on their own devices both send 4000 bytes to c at t = 10 (10 us each,
// c 5 us): on testing's star cluster of three both transfers meet on the channel
// sw->dev2, which a link-sharing model must resolve (placement {0, 1, 2}).
inline OpGraph contended_graph() {
  OpGraph g("contended");
  const int a = g.add_op(timed_op("a", 10, 4000));
  const int b = g.add_op(timed_op("b", 10, 4000));
  const int c = g.add_op(timed_op("c", 5));
  g.add_edge(a, c);
  g.add_edge(b, c);
  return g;
}

// x(10) -> {a(40), c(20)} -> y(5), c on the communication stream (Op::stream 1)
// unless `c_stream` says otherwise. On one device: a and c overlap when c is on
// stream 1 (step 55), and run one after the other on one stream (step 75).
inline OpGraph two_stream_graph(int c_stream = 1) {
  OpGraph g("two-stream");
  const int x = g.add_op(timed_op("x", 10));
  const int a = g.add_op(timed_op("a", 40));
  Op comm = timed_op("c", 20);
  comm.stream = c_stream;
  const int c = g.add_op(comm);
  const int y = g.add_op(timed_op("y", 5));
  g.add_edge(x, a);
  g.add_edge(x, c);
  g.add_edge(a, y);
  g.add_edge(c, y);
  g.validate();
  return g;
}

// A two-layer MLP training step with batch 8. Costs are measured times (they scale
// with the batch share); weights 4000 and 2000 bytes.
//   x, w1 -> fc1(40) ; fc1, w2 -> fc2(20) -> loss(4)
//   loss, w2 -> fc2/grad_in(20) ; loss, fc1 -> fc2/grad_w(20, out 2000)
//   fc2/grad_in, x -> fc1/grad_w(40, out 4000)
//   w1, fc1/grad_w -> w1/update(10) ; w2, fc2/grad_w -> w2/update(5)
inline OpGraph two_layer_mlp_graph() {
  OpGraph g("mlp2");
  g.set_batch(8);
  auto op = [&](const std::string& name, const std::string& type, Phase phase, double us,
                double out, double params = 0) {
    Op o = timed_op(name, us, out, params);
    o.type = type;
    o.phase = phase;
    if (us == 0) o.compute_us = -1;
    return g.add_op(o);
  };
  const int x = op("x", "Placeholder", Phase::kForward, 0, 800);
  const int w1 = op("w1", "VariableV2", Phase::kForward, 0, 4000, 4000);
  const int w2 = op("w2", "VariableV2", Phase::kForward, 0, 2000, 2000);
  const int fc1 = op("fc1", "MatMul", Phase::kForward, 40, 400);
  const int fc2 = op("fc2", "MatMul", Phase::kForward, 20, 80);
  const int loss = op("loss", "Xent", Phase::kForward, 4, 8);
  const int g2i = op("fc2/grad_in", "MatMulGradInput", Phase::kBackward, 20, 400);
  const int g2w = op("fc2/grad_w", "MatMulGradWeight", Phase::kBackward, 20, 2000);
  const int g1w = op("fc1/grad_w", "MatMulGradWeight", Phase::kBackward, 40, 4000);
  const int u1 = op("w1/update", "ApplyGradientDescent", Phase::kUpdate, 10, 0);
  const int u2 = op("w2/update", "ApplyGradientDescent", Phase::kUpdate, 5, 0);
  for (int b : {g2i, g2w}) g.mutable_op(b).forward_of = fc2;
  g.mutable_op(g1w).forward_of = fc1;
  g.mutable_op(u1).forward_of = w1;
  g.mutable_op(u2).forward_of = w2;
  g.add_edge(x, fc1);
  g.add_edge(w1, fc1);
  g.add_edge(fc1, fc2);
  g.add_edge(w2, fc2);
  g.add_edge(fc2, loss);
  g.add_edge(loss, g2i);
  g.add_edge(w2, g2i);
  g.add_edge(loss, g2w);
  g.add_edge(fc1, g2w);
  g.add_edge(g2i, g1w);
  g.add_edge(x, g1w);
  g.add_edge(w1, u1);
  g.add_edge(g1w, u1);
  g.add_edge(w2, u2);
  g.add_edge(g2w, u2);
  g.validate();
  return g;
}

// A -> {B, C, D} -> E. A and E 10 us, B, C, D 100 us, every tensor 1000 bytes
// (1 us on a 1 GB/s link).
inline OpGraph fork_join3_graph() {
  OpGraph g("fork-join");
  const int a = g.add_op(timed_op("A", 10, 1000));
  const int b = g.add_op(timed_op("B", 100, 1000));
  const int c = g.add_op(timed_op("C", 100, 1000));
  const int d = g.add_op(timed_op("D", 100, 1000));
  const int e = g.add_op(timed_op("E", 10, 1000));
  for (int mid : {b, c, d}) {
    g.add_edge(a, mid);
    g.add_edge(mid, e);
  }
  g.validate();
  return g;
}

// Seeded layered DAG: `num_ops` ops in layers of `width`, each taking 1-3 inputs
// from the previous layer; 20-200 us, 64 KB - 4 MB outputs, some parameters.
// (xorshift64, this header's own: core/random_dag.h's graphs are FLOP-costed.)
inline OpGraph layered_dag(int num_ops, std::uint64_t seed, int width = 6) {
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  OpGraph g("dag-" + std::to_string(num_ops) + "-" + std::to_string(seed));
  for (int i = 0; i < num_ops; ++i) {
    const double compute = 20 + static_cast<double>(next() % 181);
    const double out = 65536.0 * static_cast<double>(1 + next() % 64);
    const double params = next() % 3 == 0 ? 1e6 * static_cast<double>(1 + next() % 50) : 0;
    g.add_op(timed_op("op" + std::to_string(i), compute, out, params));
    const int layer = i / width;
    if (layer == 0) continue;
    const int prev_begin = (layer - 1) * width;
    const int inputs = 1 + static_cast<int>(next() % 3);
    for (int k = 0; k < inputs; ++k) {
      const int src = prev_begin + static_cast<int>(next() % width);
      bool dup = false;
      for (int e : g.in_edges(i)) dup = dup || g.edge(e).src == src;
      if (!dup) g.add_edge(src, i);
    }
  }
  g.validate();
  return g;
}

}  // namespace aware::testing
