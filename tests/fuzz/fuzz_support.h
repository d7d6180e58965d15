// What the fuzz targets share: a small fixed graph and cluster, and a check that
// aborts (a finding) when an invariant breaks.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "core/cluster.h"
#include "core/op_graph.h"

namespace aware::fuzz {

inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

// Three devices on one switch.
inline Cluster small_cluster() {
  Device d;
  d.name = "dev";
  d.kind = "fuzz";
  d.peak_flops = 1e12;
  d.efficiency = 0.5;
  d.memory_bytes = 1e9;
  d.memory_Bps = 1e11;
  return star_cluster("fuzz-star", d, 3, "sw", 1e9, 1);
}

// a -> {b, c} -> d, with real costs.
inline OpGraph small_graph() {
  OpGraph g("fuzz-diamond");
  for (const char* name : {"a", "b", "c", "d"}) {
    Op op;
    op.name = name;
    op.flops = 1e9;
    op.output_bytes = {1e6};
    g.add_op(op);
  }
  g.add_edge(0, 1);
  g.add_edge(0, 2);
  g.add_edge(1, 3);
  g.add_edge(2, 3);
  return g;
}

}  // namespace aware::fuzz
