// Fusion: hand-computed merges first, then properties on the zoo and random DAGs.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#ifdef AWARE_HAVE_BASELINES
#include "agents/fusion/register.h"
#include "builtins/builtins.h"
#include "agents/common/placer_common.h"
#endif
#include "agents/fusion/fused_placer.h"
#include "agents/fusion/fusion.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/placer.h"
#include "core/random_dag.h"
#include "datasets/zoo.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

// Two identical devices behind one switch, every link 10 GB/s with no latency:
// a transfer of B bytes takes B / 1e10 s, so 1 MB = 100 us and 1 KB = 0.1 us.
Cluster ten_gbps_cluster(double memory_bytes = 1e9, int devices = 2) {
  return testing::star_cluster(devices, 10e9, 0, memory_bytes);
}

// An op with a measured cost and the given output tensor sizes.
Op timed(const std::string& name, double us, std::vector<double> outputs, double params = 0) {
  Op op;
  op.name = name;
  op.type = "Test";
  op.compute_us = us;
  op.output_bytes = std::move(outputs);
  op.param_bytes = params;
  return op;
}

FusionOptions rules(bool chain, bool comm) {
  FusionOptions o;
  o.chain_rule = chain;
  o.comm_rule = comm;
  return o;
}

// Every op in exactly one group, and group_of_op / ops_of_group agree.
void expect_partition(const OpGraph& fine, const FusionResult& f) {
  ASSERT_EQ(static_cast<int>(f.group_of_op.size()), fine.num_ops());
  ASSERT_EQ(static_cast<int>(f.ops_of_group.size()), f.coarse.num_ops());
  std::vector<int> seen(fine.num_ops(), 0);
  for (size_t g = 0; g < f.ops_of_group.size(); ++g) {
    ASSERT_FALSE(f.ops_of_group[g].empty());
    for (int op : f.ops_of_group[g]) {
      ++seen[op];
      EXPECT_EQ(f.group_of_op[op], static_cast<int>(g));
    }
  }
  for (int op = 0; op < fine.num_ops(); ++op) EXPECT_EQ(seen[op], 1) << fine.op(op).name;
}

// The invariants every fusion result keeps.
void expect_valid_fusion(const OpGraph& fine, const Cluster& cluster, const FusionResult& f,
                         double memory_fraction = 1.0) {
  EXPECT_NO_THROW(f.coarse.validate());  // a DAG: no merge made a cycle
  expect_partition(fine, f);
  double smallest = 1e300;
  for (const Device& d : cluster.devices()) smallest = std::min(smallest, d.memory_bytes);
  for (size_t g = 0; g < f.ops_of_group.size(); ++g) {
    if (f.ops_of_group[g].size() < 2) continue;  // a lone op is never merged away
    double memory = 0;
    for (int op : f.ops_of_group[g]) {
      const Op& m = fine.op(op);
      memory += m.param_bytes + m.total_output_bytes() + m.temp_bytes;
    }
    EXPECT_LE(memory, memory_fraction * smallest) << f.coarse.op(static_cast<int>(g)).name;
  }
  // Every fine edge between groups has a coarse edge; no coarse edge inside a
  // group; no duplicate (pair, slot) edge, and one edge per pair in pair mode.
  std::set<std::pair<int, int>> coarse_edges;
  std::set<std::tuple<int, int, int>> coarse_slots;
  for (const Edge& e : f.coarse.edges()) {
    EXPECT_NE(e.src, e.dst);
    EXPECT_TRUE(coarse_slots.insert({e.src, e.dst, e.src_output}).second) << "duplicate edge";
    coarse_edges.insert({e.src, e.dst});
  }
  for (const Edge& e : fine.edges()) {
    const int gs = f.group_of_op[e.src], gd = f.group_of_op[e.dst];
    if (gs != gd) {
      EXPECT_TRUE(coarse_edges.count({gs, gd}) > 0);
    }
  }
  // Expanding any coarse placement gives a complete fine one.
  const Placement fine_placement = expand_placement(f, round_robin_placement(f.coarse, cluster));
  EXPECT_NO_THROW(check_placement(fine, cluster, fine_placement));
}

// Hand calculation, on ten_gbps_cluster (1 MB = 100 us, 1 KB = 0.1 us), every op
// 10 us, the diamond a -> {b, c} -> d (no pure chain link in it):
//   a -> b  1 MB: 100 us > 10 us          -> merge (ratio 10)
//   a -> c  1 KB: 0.1 us < 10 us          -> keep
//   b -> d  1 KB: 0.1 us < 10 us          -> keep
//   c -> d  2 MB: 200 us > 10 us          -> merge first (ratio 20)
// Result: {a, b} and {c, d}, joined by one edge carrying a's 1 KB and b's 1 KB.
TEST(FusionHand, MergesExactlyTheCostlyEdges) {
  OpGraph g("hand-diamond");
  const int a = g.add_op(timed("a", 10, {1e6, 1e3}));
  const int b = g.add_op(timed("b", 10, {1e3}));
  const int c = g.add_op(timed("c", 10, {2e6}));
  const int d = g.add_op(timed("d", 10, {1e3}));
  g.add_edge(a, b, 0);
  g.add_edge(a, c, 1);
  g.add_edge(b, d, 0);
  g.add_edge(c, d, 0);
  const Cluster cluster = ten_gbps_cluster();
  const FusionResult f = fuse_by_comm_ratio(g, cluster, rules(false, true));
  expect_valid_fusion(g, cluster, f);
  ASSERT_EQ(f.coarse.num_ops(), 2);
  EXPECT_EQ(f.group_of_op[a], f.group_of_op[b]);
  EXPECT_EQ(f.group_of_op[c], f.group_of_op[d]);
  EXPECT_NE(f.group_of_op[a], f.group_of_op[c]);
  EXPECT_EQ(f.stats.comm_merges, 2);
  EXPECT_EQ(f.stats.chain_merges, 0);
  ASSERT_EQ(f.coarse.num_edges(), 1);
  EXPECT_DOUBLE_EQ(f.coarse.edge(0).bytes, 2e3);
  EXPECT_DOUBLE_EQ(f.stats.slowest_route_Bps, 10e9);
  // The fused nodes cost their members' sum (identical devices: exact mode).
  EXPECT_DOUBLE_EQ(f.coarse.op(0).compute_us, 20);
  EXPECT_EQ(f.coarse.op(0).name, "a+1");
  EXPECT_EQ(f.coarse.op(0).type, "Fused");
  // With the chain rule on, {a,b} -> {c,d} is then a pure chain link: one node.
  const FusionResult chained = fuse_by_comm_ratio(g, cluster);
  EXPECT_EQ(chained.coarse.num_ops(), 1);
  EXPECT_EQ(chained.stats.comm_merges, 2);
  EXPECT_EQ(chained.stats.chain_merges, 1);
}

// a -> {b, c}, a's one 1 MB tensor read by both (100 us on the slowest route).
// Threshold 200: 100 us < 200 x 10 us, nothing merges. Threshold 5: 100 us > 50 us.
TEST(FusionHand, ThresholdScalesTheRule) {
  OpGraph g("pair-plus");
  const int a = g.add_op(timed("a", 10, {1e6}));
  const int b = g.add_op(timed("b", 10, {1e3}));
  const int c = g.add_op(timed("c", 10, {1e3}));
  g.add_edge(a, b);
  g.add_edge(a, c);  // a has two consumers: a -> b is not a chain link
  const Cluster cluster = ten_gbps_cluster();
  FusionOptions o;
  o.threshold = 200;
  EXPECT_EQ(fuse_by_comm_ratio(g, cluster, o).coarse.num_ops(), 3);
  o.threshold = 5;  // 100 us > 50 us: a -> b and a -> c (same 1 MB tensor) merge
  const FusionResult f = fuse_by_comm_ratio(g, cluster, o);
  EXPECT_EQ(f.coarse.num_ops(), 1);
}

// a -> b carries 2 MB, but a -> c -> b also exists: merging a and b alone would
// make {a,b} -> c -> {a,b} a cycle, so it is refused; c -> b (1 MB) merges, after
// which a -> {c,b} is a single edge and merges too.
TEST(FusionHand, RefusesAMergeThatWouldMakeACycle) {
  OpGraph g("triangle");
  const int a = g.add_op(timed("a", 10, {2e6, 1e3}));
  const int b = g.add_op(timed("b", 10, {1e3}));
  const int c = g.add_op(timed("c", 10, {1e6}));
  g.add_edge(a, b, 0);
  g.add_edge(a, c, 1);
  g.add_edge(c, b, 0);
  const Cluster cluster = ten_gbps_cluster();
  const FusionResult f = fuse_by_comm_ratio(g, cluster);
  expect_valid_fusion(g, cluster, f);
  EXPECT_EQ(f.stats.rejected_cycle, 1);
  EXPECT_EQ(f.coarse.num_ops(), 1);

  // With the comm rule off nothing merges (no chain link either).
  const FusionResult none = fuse_by_comm_ratio(g, cluster, rules(true, false));
  EXPECT_EQ(none.coarse.num_ops(), 3);
}

// A pure chain merges whatever its costs: a -> b -> c with 1 KB edges (0.1 us).
TEST(FusionHand, ChainLinksMerge) {
  OpGraph g("chain");
  const int a = g.add_op(timed("a", 10, {1e3}));
  const int b = g.add_op(timed("b", 20, {1e3}));
  const int c = g.add_op(timed("c", 30, {1e3}));
  g.add_edge(a, b);
  g.add_edge(b, c);
  const Cluster cluster = ten_gbps_cluster();
  const FusionResult f = fuse_by_comm_ratio(g, cluster);
  EXPECT_EQ(f.coarse.num_ops(), 1);
  EXPECT_EQ(f.stats.chain_merges, 2);
  EXPECT_DOUBLE_EQ(f.coarse.op(0).compute_us, 60);
  EXPECT_EQ(fuse_by_comm_ratio(g, cluster, rules(false, true)).coarse.num_ops(), 3);
}

// Two ops of 0.6 GB parameters each on 1 GB devices: the 1 MB edge would merge
// them, but 1.2 GB does not fit one device.
TEST(FusionHand, NeverFormsANodeLargerThanADevice) {
  OpGraph g("heavy");
  const int a = g.add_op(timed("a", 10, {1e6, 1e3}, 0.6e9));
  const int b = g.add_op(timed("b", 10, {1e3}, 0.6e9));
  const int c = g.add_op(timed("c", 10, {1e3}));
  g.add_edge(a, b, 0);
  g.add_edge(a, c, 1);
  const Cluster cluster = ten_gbps_cluster(1e9);
  const FusionResult f = fuse_by_comm_ratio(g, cluster);
  expect_valid_fusion(g, cluster, f);
  EXPECT_NE(f.group_of_op[a], f.group_of_op[b]);
  EXPECT_EQ(f.stats.rejected_memory, 1);
  // With 2 GB devices it fits.
  const FusionResult roomy = fuse_by_comm_ratio(g, ten_gbps_cluster(2e9));
  EXPECT_EQ(roomy.group_of_op[a], roomy.group_of_op[b]);
}

// Colocation group {x, z} with y on the path x -> y -> z: the contraction must
// take y too, or {x,z} -> y -> {x,z} would be a cycle. w stays apart (rules off).
TEST(FusionHand, ColocationGroupsEndInOneNode) {
  OpGraph g("coloc");
  Op x = timed("x", 10, {1e3});
  x.colocation_group = "g";
  Op z = timed("z", 10, {1e3});
  z.colocation_group = "g";
  const int ix = g.add_op(x);
  const int iy = g.add_op(timed("y", 10, {1e3}));
  const int iz = g.add_op(z);
  const int iw = g.add_op(timed("w", 10, {1e3}));
  g.add_edge(ix, iy);
  g.add_edge(iy, iz);
  g.add_edge(iw, iz);
  const Cluster cluster = ten_gbps_cluster();
  const FusionResult f = fuse_by_comm_ratio(g, cluster, rules(false, false));
  expect_valid_fusion(g, cluster, f);
  EXPECT_EQ(f.stats.colocation_merges, 1);
  EXPECT_EQ(f.group_of_op[ix], f.group_of_op[iz]);
  EXPECT_EQ(f.group_of_op[iy], f.group_of_op[ix]);
  EXPECT_NE(f.group_of_op[iw], f.group_of_op[ix]);
  EXPECT_EQ(f.coarse.num_ops(), 2);
}

// When the group's hull does not fit a device, the group stays as several nodes
// that carry its name, so a placer keeps them together and the expansion is
// colocated.
TEST(FusionHand, UnfittableColocationGroupIsCarriedToTheCoarseGraph) {
  OpGraph g("coloc-heavy");
  Op x = timed("x", 10, {1e6}, 0.6e9);
  x.colocation_group = "g";
  Op z = timed("z", 10, {1e3}, 0.6e9);
  z.colocation_group = "g";
  const int ix = g.add_op(x);
  const int iy = g.add_op(timed("y", 10, {1e6}));
  const int iz = g.add_op(z);
  g.add_edge(ix, iy);
  g.add_edge(iy, iz);
  const Cluster cluster = ten_gbps_cluster(1e9);
  const FusionResult f = fuse_by_comm_ratio(g, cluster);
  expect_valid_fusion(g, cluster, f);
  EXPECT_EQ(f.stats.colocation_unresolved, 1);
  EXPECT_NE(f.group_of_op[ix], f.group_of_op[iz]);
  EXPECT_EQ(f.coarse.op(f.group_of_op[ix]).colocation_group, "g");
  EXPECT_EQ(f.coarse.op(f.group_of_op[iz]).colocation_group, "g");
  Placement split(std::vector<int>(f.coarse.num_ops(), 0));
  split[f.group_of_op[iz]] = 1;
  EXPECT_THROW(check_placement(f.coarse, cluster, split), DeviceError);
}

// Rules off, target 3: merges the best-ratio edges until 3 nodes remain.
TEST(FusionHand, TargetSizeMergesBelowThreshold) {
  const OpGraph g = random_layered_dag(40, 7, 4);
  const Cluster cluster = ten_gbps_cluster(1e12);
  FusionOptions o = rules(false, false);
  EXPECT_EQ(fuse_by_comm_ratio(g, cluster, o).coarse.num_ops(), 40);
  o.target_size = 3;
  const FusionResult f = fuse_by_comm_ratio(g, cluster, o);
  expect_valid_fusion(g, cluster, f);
  EXPECT_TRUE(f.stats.target_met);
  EXPECT_EQ(f.coarse.num_ops(), 3);
  EXPECT_EQ(f.stats.target_merges, 37);
}

TEST(FusionHand, BadOptionsThrow) {
  const OpGraph g = random_layered_dag(10, 1);
  const Cluster cluster = ten_gbps_cluster();
  FusionOptions o;
  o.threshold = 0;
  EXPECT_THROW(fuse_by_comm_ratio(g, cluster, o), ConfigError);
  o = FusionOptions{};
  o.memory_fraction = 1.5;
  EXPECT_THROW(fuse_by_comm_ratio(g, cluster, o), ConfigError);
  EXPECT_THROW(fusion_options_from({{"fusion.cost", "magic"}}, "test"), ConfigError);
  const FusionResult f = fuse_by_comm_ratio(g, cluster);
  EXPECT_THROW(expand_placement(f, Placement(std::vector<int>(f.coarse.num_ops() + 1, 0))),
               ConfigError);
}

// A weight w (1 MB) read by three consumers p, q, r that stay apart (rules off):
// the fused node of w exports the same one tensor to three nodes, so it gets one
// output slot, not three.
TEST(FusionHand, ATensorReadByManyNodesIsOneSlot) {
  OpGraph g("broadcast");
  const int w = g.add_op(timed("w", 10, {1e6}, 1e6));
  for (const char* name : {"p", "q", "r"}) {
    const int c = g.add_op(timed(name, 10, {1e3}));
    g.add_edge(w, c);
  }
  const Cluster cluster = ten_gbps_cluster();
  const FusionResult f = fuse_by_comm_ratio(g, cluster, rules(false, false));
  ASSERT_EQ(f.coarse.num_ops(), 4);
  const Op& node = f.coarse.op(f.group_of_op[w]);
  ASSERT_EQ(node.output_bytes.size(), 1u);
  EXPECT_DOUBLE_EQ(node.output_bytes[0], 1e6);
  for (const Edge& e : f.coarse.edges()) EXPECT_EQ(e.src_output, 0);
  FusionOptions by_class = rules(false, false);
  by_class.edges = FusedEdgeMode::kPerTensorClass;
  EXPECT_EQ(
      fuse_by_comm_ratio(g, cluster, by_class).coarse.op(f.group_of_op[w]).output_bytes.size(), 1u);
}

// The coarse nodes claim the memory their members do (no more), so a graph that
// fits still fits after fusion, even with large thresholds on NMT (many weights
// read by per-step ops).
TEST(FusionProperties, CoarseMemoryNeverExceedsMembers) {
  const Cluster cluster = make_cluster_preset("k40x4");
  const OpGraph g = build_zoo_model("nmt4");
  for (FusedEdgeMode mode : {FusedEdgeMode::kOnePerPair, FusedEdgeMode::kPerTensorClass}) {
    FusionOptions o;
    o.threshold = 4;
    o.edges = mode;
    const FusionResult f = fuse_by_comm_ratio(g, cluster, o);
    for (int node = 0; node < f.coarse.num_ops(); ++node) {
      const Op& c = f.coarse.op(node);
      double members = 0;
      for (int op : f.ops_of_group[node]) {
        const Op& m = g.op(op);
        members += m.param_bytes + m.total_output_bytes() + m.temp_bytes;
      }
      const double coarse = c.param_bytes + c.total_output_bytes() + c.temp_bytes;
      EXPECT_LE(coarse, members * (1 + 1e-12) + 1) << c.name;
      EXPECT_LE(coarse, f.stats.memory_limit_bytes * (1 + 1e-12)) << c.name;
    }
#ifdef AWARE_HAVE_BASELINES
    EXPECT_NO_THROW(placing::check_graph_can_fit(f.coarse, cluster));
#endif
  }
}

TEST(FusionProperties, ZooModelsStayValid) {
  const Cluster cluster = make_cluster_preset("k40x4");
  for (const std::string name : {"inception_v3", "resnet50", "nasnet", "nmt4", "gnmt"}) {
    SCOPED_TRACE(name);
    const OpGraph g = build_zoo_model(name);
    const FusionResult f = fuse_by_comm_ratio(g, cluster);
    expect_valid_fusion(g, cluster, f);
    EXPECT_LT(f.coarse.num_ops(), g.num_ops());
    // Deterministic.
    const FusionResult again = fuse_by_comm_ratio(g, cluster);
    EXPECT_EQ(again.group_of_op, f.group_of_op);
  }
}

TEST(FusionProperties, RandomDagsStayValidUnderEveryOptionMix) {
  const Cluster cluster = ten_gbps_cluster(2e9, 4);
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const OpGraph g = random_layered_dag(150, seed, 3 + static_cast<int>(seed % 6));
    for (int variant = 0; variant < 5; ++variant) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " variant " + std::to_string(variant));
      FusionOptions o;
      o.threshold = variant == 1 ? 0.01 : 1.0;
      o.target_size = variant == 2 ? 10 : 0;
      o.memory_fraction = variant == 3 ? 0.02 : 1.0;
      o.edges = variant == 4 ? FusedEdgeMode::kPerTensorClass : FusedEdgeMode::kOnePerPair;
      const FusionResult f = fuse_by_comm_ratio(g, cluster, o);
      expect_valid_fusion(g, cluster, f, o.memory_fraction);
      if (variant == 2 && f.stats.target_met) EXPECT_LE(f.coarse.num_ops(), 10);
    }
  }
}

TEST(FusionProperties, TightMemoryCapHolds) {
  const Cluster cluster = make_cluster_preset("k40x4");
  const OpGraph g = build_zoo_model("resnet50");
  FusionOptions o;
  o.memory_fraction = 0.02;  // 240 MB per fused node
  const FusionResult f = fuse_by_comm_ratio(g, cluster, o);
  expect_valid_fusion(g, cluster, f, o.memory_fraction);
  EXPECT_GT(f.stats.rejected_memory, 0);
}

// One device runs every op back to back with no transfer, so the single-device
// step is the sum of op times: the same on the fused graph (exact cost mode on
// identical devices) and for the expanded placement on the full graph.
TEST(FusionCost, SingleDeviceStepIsPreserved) {
  AnalyticSimulator sim;
  const Cluster cluster = make_cluster_preset("k40x4");
  for (const std::string name : {"resnet50", "nmt2"}) {
    SCOPED_TRACE(name);
    const OpGraph g = build_zoo_model(name);
    const FusionResult f = fuse_by_comm_ratio(g, cluster);
    const StepResult fine = sim.evaluate(g, cluster, single_device_placement(g, 0));
    const StepResult coarse = sim.evaluate(f.coarse, cluster, single_device_placement(f.coarse, 0));
    const StepResult expanded =
        sim.evaluate(g, cluster, expand_placement(f, single_device_placement(f.coarse, 0)));
    EXPECT_DOUBLE_EQ(expanded.step_time_us, fine.step_time_us);
    EXPECT_NEAR(coarse.step_time_us, fine.step_time_us, 1e-9 * fine.step_time_us);
  }
}

// Roofline-of-sums mode never costs a fused node more than its members' sum.
TEST(FusionCost, RooflineOfSumIsAtMostTheSum) {
  const Cluster cluster = make_cluster_preset("k40x4");
  const OpGraph g = build_zoo_model("resnet50");
  FusionOptions o;
  o.cost_mode = FusedCostMode::kRooflineOfSum;
  const FusionResult f = fuse_by_comm_ratio(g, cluster, o);
  const OpCostMatrix fine_costs(g, cluster);
  const OpCostMatrix coarse_costs(f.coarse, cluster);
  for (int node = 0; node < f.coarse.num_ops(); ++node) {
    double sum = 0;
    for (int op : f.ops_of_group[node]) sum += fine_costs.time_us(op, 0);
    EXPECT_LE(coarse_costs.time_us(node, 0), sum * (1 + 1e-12));
  }
}

TEST(FusionPlacement, CoarsenThenExpandRoundTrips) {
  const Cluster cluster = make_cluster_preset("k40x4");
  const OpGraph g = build_zoo_model("resnet50");
  const FusionResult f = fuse_by_comm_ratio(g, cluster);
  const Placement coarse = round_robin_placement(f.coarse, cluster);
  const Placement fine = expand_placement(f, coarse);
  EXPECT_EQ(coarsen_placement(f, fine), coarse);
}

TEST(FusionPlacement, FusedPlacersReturnCompletePlacements) {
  register_builtins();
  AnalyticSimulator sim;
  const Cluster cluster = make_cluster_preset("k40x4");
  const OpGraph g = build_zoo_model("resnet50");
  const double bound = lower_bound(g, cluster).bound_us();
  for (const std::string& name : fusion_placer_names()) {
    SCOPED_TRACE(name);
    PlaceContext context;
    context.evaluator = &sim;
    context.seed = 5;
    context.budget_evals = 40;
    context.options = {{"fusion.threshold", "1"}};
    const Placement p = PlacerRegistry::instance().create(name)->place(g, cluster, context);
    ASSERT_NO_THROW(check_placement(g, cluster, p));
    const StepResult r = sim.evaluate(g, cluster, p);
    EXPECT_TRUE(r.feasible) << r.infeasible_reason;
    EXPECT_GE(r.step_time_us, bound * (1 - 1e-9));
  }
}

// fusion.score=fine: the inner search scores every candidate on the full graph;
// the result is a complete, feasible placement no worse than the coarse-scored
// one's starting points would give, and bad values are refused.
TEST(FusionPlacement, FineScoringOption) {
  register_builtins();
  AnalyticSimulator sim;
  const Cluster cluster = make_cluster_preset("k40x4");
  const OpGraph g = build_zoo_model("resnet50");
  PlaceContext context;
  context.evaluator = &sim;
  context.seed = 2;
  context.budget_evals = 30;
  context.options = {{"fusion.score", "fine"}};
  const Placement p = PlacerRegistry::instance().create("fused-anneal")->place(g, cluster, context);
  ASSERT_NO_THROW(check_placement(g, cluster, p));
  EXPECT_TRUE(sim.evaluate(g, cluster, p).feasible);
  context.options = {{"fusion.score", "both"}};
  EXPECT_THROW(PlacerRegistry::instance().create("fused-anneal")->place(g, cluster, context),
               ConfigError);
}

}  // namespace
}  // namespace aware
