#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/cost_model.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/random_dag.h"
#include "test_graphs.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

using namespace testing;  // the graphs and clusters of test_graphs.h

TEST(OpGraph, RejectsDuplicateNames) {
  OpGraph g("g");
  g.add_op(timed_op("a", 1));
  EXPECT_THROW(g.add_op(timed_op("a", 1)), GraphError);
}

TEST(OpGraph, RejectsCycleNamingAnOp) {
  OpGraph g = chain_graph();
  g.add_edge(2, 0);
  testing::expect_error<GraphError>([&] { g.validate(); }, {"cycle", "op '"});
}

TEST(OpGraph, RejectsNegativeAndNonFiniteNumbers) {
  for (double bad : {-1.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    OpGraph g = chain_graph();
    g.mutable_op(1).flops = bad;
    SCOPED_TRACE(bad);
    testing::expect_error<GraphError>([&] { g.validate(); }, {"'b'", "flops"});
  }
}

TEST(OpGraph, EdgeToUnknownOpThrows) {
  OpGraph g = chain_graph();
  EXPECT_THROW(g.add_edge(0, 7), GraphError);
  EXPECT_THROW(g.add_edge(0, 1, 3), GraphError);  // output index out of range
}

TEST(GraphAlgorithms, TopologicalOrderOfDiamond) {
  const OpGraph g = diamond_graph();
  EXPECT_EQ(topological_order(g), (std::vector<int>{0, 1, 2, 3}));
}

TEST(GraphAlgorithms, ReachabilityOnDiamond) {
  const OpGraph g = diamond_graph();
  const Reachability r(g);
  EXPECT_EQ(r.ancestors(3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(r.descendants(0), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(r.parallel(1), (std::vector<int>{2}));
  EXPECT_EQ(r.parallel(2), (std::vector<int>{1}));
  EXPECT_TRUE(r.parallel(0).empty());
}

TEST(GraphAlgorithms, CriticalPathOfDiamondTakesTheLongBranch) {
  const OpGraph g = diamond_graph();
  const CriticalPath p = critical_path(g, {10, 20, 30, 5});
  EXPECT_DOUBLE_EQ(p.length_us, 45);
  EXPECT_EQ(p.ops, (std::vector<int>{0, 2, 3}));
}

TEST(GraphAlgorithms, LowerBoundOfForkJoin) {
  const OpGraph g = fork_join_graph();  // 10 + 4 x 20 + 10 = 100 us of work
  const Cluster c = star_cluster(2);
  const LowerBound b = lower_bound(g, c);
  EXPECT_DOUBLE_EQ(b.critical_path_us, 40);
  EXPECT_DOUBLE_EQ(b.work_us, 50);
  EXPECT_DOUBLE_EQ(b.bound_us(), 50);
}

// Two independent 30 us ops, one on each stream of a device: they can run side by
// side, so one device bounds the step at 30 us, not 60; the compute stream's work
// alone (20 + 30 on stream 0) bounds it at 50 with a third op.
TEST(GraphAlgorithms, LowerBoundCountsEachStreamOnItsOwn) {
  OpGraph g("streams");
  g.add_op(timed_op("compute", 30));
  Op comm = timed_op("allreduce", 30);
  comm.stream = 1;
  g.add_op(comm);
  const Cluster one = star_cluster(1);
  EXPECT_DOUBLE_EQ(lower_bound(g, one).work_us, 30);
  g.add_op(timed_op("more compute", 20));
  EXPECT_DOUBLE_EQ(lower_bound(g, one).work_us, 50);
  EXPECT_DOUBLE_EQ(lower_bound(g, star_cluster(2)).work_us, 25);
}

TEST(GraphAlgorithms, LowerBoundUsesSumOfSpeedsForUniformDevices) {
  OpGraph g("two");
  Op a;
  a.name = "a";
  a.flops = 3e6;
  a.output_bytes = {0};
  g.add_op(a);
  Cluster c("mixed");
  for (double peak : {1e12, 2e12}) {
    Device d;
    d.name = "d" + std::to_string(static_cast<int>(peak / 1e12));
    d.peak_flops = peak;
    d.memory_bytes = 1e9;
    d.memory_Bps = 1e15;
    c.add_device(d);
  }
  c.connect("d1", "d2", 1e9, 1);
  c.finalize();
  // 3 us on d1, 1.5 us on d2; total speed 3e12 -> 1 us of perfectly shared work.
  const LowerBound b = lower_bound(g, c);
  EXPECT_NEAR(b.work_us, 1.0, 1e-12);
  EXPECT_NEAR(b.critical_path_us, 1.5, 1e-12);
}

TEST(CostModel, RooflineTakesTheSlowerOfComputeAndMemory) {
  Op op;
  op.flops = 1e9;
  op.bytes_accessed = 1e9;
  Device d;
  d.peak_flops = 1e12;
  d.efficiency = 0.5;
  d.memory_Bps = 1e11;
  d.launch_overhead_us = 3;
  // compute 2000 us, memory 10000 us
  EXPECT_DOUBLE_EQ(roofline_time_us(op, d), 10003);
  op.compute_us = 42;
  EXPECT_DOUBLE_EQ(op_time_us(op, d), 42);
  CostTable table;
  table.us[{op.name, "*"}] = 7;
  EXPECT_DOUBLE_EQ(op_time_us(op, d, &table), 7);
}

TEST(RandomDag, SameSeedSameGraphAndValid) {
  const OpGraph a = random_layered_dag(500, 3);
  const OpGraph b = random_layered_dag(500, 3);
  const OpGraph c = random_layered_dag(500, 4);
  a.validate();
  ASSERT_EQ(a.num_edges(), b.num_edges());
  for (int e = 0; e < a.num_edges(); ++e) {
    EXPECT_EQ(a.edge(e).src, b.edge(e).src);
    EXPECT_EQ(a.edge(e).dst, b.edge(e).dst);
  }
  for (int op = 0; op < a.num_ops(); ++op) EXPECT_EQ(a.op(op).flops, b.op(op).flops);
  bool differs = a.num_edges() != c.num_edges();
  for (int op = 0; op < a.num_ops() && !differs; ++op) differs = a.op(op).flops != c.op(op).flops;
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace aware
