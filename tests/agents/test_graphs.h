// Hand-built graphs and clusters shared by the baseline placer tests.
#pragma once

#include <cstdint>
#include <string>

#include "core/cluster.h"
#include "core/op_graph.h"

namespace aware::testing {

// `n` identical devices behind one switch; links of `bandwidth_Bps`, no latency,
// measured op costs are used as-is (no launch overhead applies to them).
inline Cluster star_cluster(int n, double memory_bytes = 16e9, double bandwidth_Bps = 1e9) {
  Cluster c("star" + std::to_string(n));
  for (int i = 0; i < n; ++i) {
    Device d;
    d.name = "dev" + std::to_string(i);
    d.kind = "test";
    d.peak_flops = 1e12;
    d.memory_bytes = memory_bytes;
    d.memory_Bps = 1e11;
    c.add_device(d);
  }
  c.add_switch("hub");
  for (int i = 0; i < n; ++i) c.connect("dev" + std::to_string(i), "hub", bandwidth_Bps, 0);
  c.finalize();
  return c;
}

inline Op op_with(const std::string& name, double compute_us, double output_bytes,
                  double param_bytes = 0) {
  Op op;
  op.name = name;
  op.type = "Test";
  op.compute_us = compute_us;
  op.output_bytes = {output_bytes};
  op.param_bytes = param_bytes;
  return op;
}

// A -> {B, C, D} -> E. A and E 10 us, B, C, D 100 us, every tensor 1000 bytes
// (1 us on a 1 GB/s link).
inline OpGraph fork_join() {
  OpGraph g("fork-join");
  const int a = g.add_op(op_with("A", 10, 1000));
  const int b = g.add_op(op_with("B", 100, 1000));
  const int c = g.add_op(op_with("C", 100, 1000));
  const int d = g.add_op(op_with("D", 100, 1000));
  const int e = g.add_op(op_with("E", 10, 1000));
  for (int mid : {b, c, d}) {
    g.add_edge(a, mid);
    g.add_edge(mid, e);
  }
  g.validate();
  return g;
}

// Seeded layered DAG: `num_ops` ops in layers of `width`, each taking 1-3 inputs
// from the previous layer; 20-200 us, 64 KB - 4 MB outputs, some parameters.
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
    g.add_op(op_with("op" + std::to_string(i), compute, out, params));
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
