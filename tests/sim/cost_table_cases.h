// Hand-computed cases for measured cost tables, shared by the analytic and the
// simgrid tests: the same graphs, tables and expected times for both simulators.
// Devices are testing::star_cluster's: kind "test", 1e12 flop/s at efficiency 1,
// 1e11 B/s memory, no launch overhead; a route is two hops of 1 us plus 1000 B/us.
#pragma once

#include <string>

#include "core/cost_model.h"
#include "core/cost_table.h"
#include "core/op_graph.h"
#include "test_graphs.h"

namespace aware::testing {

// An op priced by the roofline only: `flops` at 1e12 flop/s, no measured cost.
inline Op roofline_op(const std::string& name, double flops, double out_bytes = 1000) {
  Op op;
  op.name = name;
  op.type = "Test";
  op.flops = flops;
  op.output_bytes = {out_bytes};
  return op;
}

// a -> b -> c, 2e6 flops each: 2 us apiece by the roofline, 6 us in all.
inline OpGraph roofline_chain() {
  OpGraph g("roofline-chain");
  const int a = g.add_op(roofline_op("a", 2e6));
  const int b = g.add_op(roofline_op("b", 2e6));
  const int c = g.add_op(roofline_op("c", 2e6));
  g.add_edge(a, b);
  g.add_edge(b, c);
  return g;
}

// Prices every op of roofline_chain on a "test" device: 7 + 11 + 13 = 31 us.
inline CostTable chain_table() {
  CostTable t;
  t.us[{"a", "test"}] = 7;
  t.us[{"b", "*"}] = 11;
  t.us[{"c", "test"}] = 13;
  return t;
}

// Prices a and b only (c's entry is for another kind; "zz" is not in the graph):
// 7 + 11 + c's roofline 2 = 20 us.
inline CostTable chain_table_without_c() {
  CostTable t;
  t.us[{"a", "test"}] = 7;
  t.us[{"b", "*"}] = 11;
  t.us[{"c", "gpu"}] = 1000;
  t.us[{"zz", "*"}] = 5;
  return t;
}

// a -> c on dev0, b -> d with b on dev1 and c, d on dev0; b's output is 1000 B.
// The graph's own costs: a 100, b 200, c 50, d 20. Placement {0, 1, 0, 0}.
// Without a table: a [0,100], b [0,200], c [100,150], b->dev0 [200,203], d [203,223].
inline OpGraph device_order_graph() {
  OpGraph g("device-order");
  const int a = g.add_op(timed_op("a", 100));
  const int b = g.add_op(timed_op("b", 200));
  const int c = g.add_op(timed_op("c", 50));
  const int d = g.add_op(timed_op("d", 20));
  g.add_edge(a, c);
  g.add_edge(b, d);
  return g;
}

// Makes b short, so that d is ready (at 13) before c (at 100) and runs first on
// dev0: a [0,100], b [0,10], b->dev0 [10,13], d [100,120], c [120,170]; step 170.
// A simulator that ordered dev0 by the graph's own costs would run c first.
inline CostTable device_order_table() {
  CostTable t;
  t.us[{"b", "test"}] = 10;
  return t;
}

// Writes `table` into the test's temporary folder; returns the path.
inline std::string write_test_table(const CostTable& table, const std::string& name) {
  const std::string path = std::string(AWARE_TEST_TMPDIR) + "/" + name;
  write_cost_table_file(table, path, CostTableInfo{"test", "hand-written"});
  return path;
}

}  // namespace aware::testing
