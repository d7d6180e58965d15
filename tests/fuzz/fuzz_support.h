// What the fuzz targets share: a small fixed graph and cluster (from the test
// fixtures), the input as text, the registries filled once, and a check that
// aborts (a finding) when an invariant breaks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "builtins/builtins.h"
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

// small_graph() and small_cluster(), made once per process for every input.
struct SmallFixture {
  OpGraph graph = small_graph();
  Cluster cluster = small_cluster();
};
inline const SmallFixture& small_fixture() {
  static const SmallFixture fixture;
  return fixture;
}

// The fuzzer's input bytes as a string (any bytes, NULs included).
inline std::string input_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// register_builtins() on the first call only: targets that look names up in the
// registries call it on every input. Needs aware_builtins_notorch linked.
inline void register_builtins_once() {
  static const bool registered = [] {
    register_builtins();
    return true;
  }();
  (void)registered;
}

}  // namespace aware::fuzz
