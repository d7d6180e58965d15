// What the fuzz targets share: a small fixed graph and cluster (from the test
// fixtures), and a check that aborts (a finding) when an invariant breaks.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "tests/test_graphs.h"

namespace aware::fuzz {

inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

// The shared test fixtures: three devices on one switch (dev0..dev2), and the
// diamond a -> {b, c} -> d.
inline Cluster small_cluster() { return testing::star_cluster(3); }
inline OpGraph small_graph() { return testing::diamond_graph(); }

}  // namespace aware::fuzz
