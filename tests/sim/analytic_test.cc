// Hand-computed schedules for both analytic modes, then properties on generated
// graphs. Clusters: testing::star_cluster (two hops per route, 1 us latency per
// hop, 1e9 B/s = 1000 bytes per us), so a 1000-byte tensor takes 2 + 1 = 3 us.
#include <gtest/gtest.h>

#include <algorithm>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/random_dag.h"
#include "sim/analytic/analytic_simulator.h"
#include "test_graphs.h"
#include "sim/schedule_checks.h"

namespace aware {
namespace {

using namespace testing;  // the graphs and clusters of test_graphs.h

StepResult run(AnalyticMode mode, const OpGraph& g, const Cluster& c, std::vector<int> devices,
               Trace* trace = nullptr) {
  AnalyticSimulator sim(mode);
  return sim.evaluate(g, c, Placement(std::move(devices)), trace);
}

// ------------------------------------------------------------ contention mode

TEST(AnalyticContention, ChainOnOneDeviceIsTheSumOfItsOps) {
  const StepResult r = run(AnalyticMode::kContention, chain_graph(), star_cluster(2), {0, 0, 0});
  EXPECT_DOUBLE_EQ(r.step_time_us, 60);
  EXPECT_EQ(r.transfers, 0);
  EXPECT_DOUBLE_EQ(r.device_busy_us[0], 60);
}

TEST(AnalyticContention, CommunicationStreamRunsBesideCompute) {
  // x [0,10]; a [10,50] on the compute stream, c [10,30] on the communication stream; y [50,55].
  Trace t;
  const StepResult r =
      run(AnalyticMode::kContention, testing::two_stream_graph(1), star_cluster(1), {0, 0, 0, 0}, &t);
  EXPECT_DOUBLE_EQ(r.step_time_us, 55);
  EXPECT_DOUBLE_EQ(t.ops[2].start_us, 10);
  EXPECT_DOUBLE_EQ(t.ops[2].end_us, 30);
  // The same op on the compute stream waits for a: x, a, c, y = 75.
  EXPECT_DOUBLE_EQ(
      run(AnalyticMode::kContention, testing::two_stream_graph(0), star_cluster(1), {0, 0, 0, 0}).step_time_us,
      75);
  // Placeto's simulator has one stream per device.
  EXPECT_DOUBLE_EQ(
      run(AnalyticMode::kPlaceto, testing::two_stream_graph(1), star_cluster(1), {0, 0, 0, 0}).step_time_us,
      run(AnalyticMode::kPlaceto, testing::two_stream_graph(0), star_cluster(1), {0, 0, 0, 0}).step_time_us);
}

TEST(AnalyticContention, ChainAcrossDevicesPaysTwoTransfers) {
  // a [0,10] | a->dev1 [10,13] | b [13,33] | b->dev0 [33,36] | c [36,66]
  Trace t;
  const StepResult r = run(AnalyticMode::kContention, chain_graph(), star_cluster(2), {0, 1, 0}, &t);
  EXPECT_DOUBLE_EQ(r.step_time_us, 66);
  EXPECT_EQ(r.transfers, 2);
  EXPECT_DOUBLE_EQ(r.bytes_moved, 2000);
  EXPECT_DOUBLE_EQ(t.ops[1].start_us, 13);
  EXPECT_DOUBLE_EQ(t.ops[2].start_us, 36);
}

TEST(AnalyticContention, DiamondWithBranchesOnTwoDevices) {
  // a [0,10] on dev0; b [10,30] on dev0; a->dev1 [10,13]; c [13,43] on dev1;
  // c->dev0 [43,46]; d [46,51].
  const StepResult r = run(AnalyticMode::kContention, diamond_graph(), star_cluster(2), {0, 0, 1, 0});
  EXPECT_DOUBLE_EQ(r.step_time_us, 51);
}

TEST(AnalyticContention, ForkJoinSendsTheSharedInputOnce) {
  // src [0,10]; x1 [10,30], x2 [30,50] on dev0; one src->dev1 transfer [10,13];
  // x3 [13,33], x4 [33,53] on dev1; x3->dev0 [33,36]; x4->dev0 [53,56]; sink [56,66].
  const StepResult r =
      run(AnalyticMode::kContention, fork_join_graph(), star_cluster(2), {0, 0, 0, 1, 1, 0});
  EXPECT_DOUBLE_EQ(r.step_time_us, 66);
  EXPECT_EQ(r.transfers, 3);
}

TEST(AnalyticContention, TransferWaitsForABusyLink) {
  // a on dev0 and b on dev1 both end at 10 and send 4000 bytes to c on dev2; both
  // routes end on the channel sw->dev2. Each transfer takes 2 + 4 = 6 us, so the
  // second waits: [10,16] then [16,22]; c runs [22,27].
  const OpGraph g = contended_graph();
  Trace t;
  const StepResult r = run(AnalyticMode::kContention, g, star_cluster(3), {0, 1, 2}, &t);
  EXPECT_DOUBLE_EQ(r.step_time_us, 27);
  ASSERT_EQ(t.transfers.size(), 2u);
  EXPECT_DOUBLE_EQ(t.transfers[0].start_us, 10);
  EXPECT_DOUBLE_EQ(t.transfers[1].start_us, 16);
}

TEST(AnalyticContention, MemoryOverflowIsInfeasibleWithTheReason) {
  OpGraph g("heavy");
  Op w1 = timed_op("weights1", 1);
  w1.param_bytes = 600;
  Op w2 = timed_op("weights2", 1);
  w2.param_bytes = 600;
  g.add_op(w1);
  g.add_op(w2);
  const Cluster c = star_cluster(2, 1e9, 1, /*memory_bytes=*/2000);
  const StepResult bad = run(AnalyticMode::kContention, g, c, {0, 0});
  EXPECT_FALSE(bad.feasible);
  EXPECT_NE(bad.infeasible_reason.find("weights"), std::string::npos) << bad.infeasible_reason;
  EXPECT_NE(bad.infeasible_reason.find("dev0"), std::string::npos) << bad.infeasible_reason;
  EXPECT_GT(bad.peak_memory_bytes[0], 2000);
  const StepResult good = run(AnalyticMode::kContention, g, c, {0, 1});
  EXPECT_TRUE(good.feasible) << good.infeasible_reason;
  // params 600 + output 1000 while the op runs
  EXPECT_DOUBLE_EQ(good.peak_memory_bytes[0], 1600);
}

TEST(AnalyticContention, OutputsAreFreedAfterTheirLastConsumer) {
  // chain on one device, 1000-byte outputs: a's output lives until b ends, b's
  // until c ends, so at most two outputs (2000 bytes) are alive at once.
  const StepResult r = run(AnalyticMode::kContention, chain_graph(), star_cluster(1), {0, 0, 0});
  EXPECT_DOUBLE_EQ(r.peak_memory_bytes[0], 2000);
}

// ------------------------------------------------------------ placeto mode

TEST(AnalyticPlaceto, ChainOnOneDevicePaysTheDeviceOverhead) {
  // a [0,10], free at 15.7; b [15.7,35.7], free at 41.4 = the last event.
  OpGraph g("two");
  g.add_op(timed_op("a", 10));
  g.add_op(timed_op("b", 20));
  g.add_edge(0, 1);
  const StepResult r = run(AnalyticMode::kPlaceto, g, star_cluster(2), {0, 0});
  EXPECT_NEAR(r.step_time_us, 41.4, 1e-9);
}

TEST(AnalyticPlaceto, CrossDeviceTransferUsesTheSourceBus) {
  // a [0,10] on dev0; 7600 bytes on dev0's bus [10,11], bus free at 36;
  // b [11,31] on dev1, free at 36.7 = the last event.
  OpGraph g("two");
  g.add_op(timed_op("a", 10, 7600));
  g.add_op(timed_op("b", 20));
  g.add_edge(0, 1);
  const StepResult r = run(AnalyticMode::kPlaceto, g, star_cluster(2), {0, 1});
  EXPECT_NEAR(r.step_time_us, 36.7, 1e-9);
  EXPECT_EQ(r.transfers, 1);
}

TEST(AnalyticPlaceto, SecondTransferWaitsForTheBusOverhead) {
  // a has two outputs of 7600 bytes, for b (output 0) and c (output 1) on dev1.
  // Bus: [10,11], free 36, then [36,37]. b [11,31] (free 36.7); c [37,57], free 62.7.
  OpGraph g("bus");
  Op a = timed_op("a", 10, 7600);
  a.output_bytes = {7600, 7600};
  g.add_op(a);
  g.add_op(timed_op("b", 20));
  g.add_op(timed_op("c", 20));
  g.add_edge(0, 1, 0);
  g.add_edge(0, 2, 1);
  Trace t;
  const StepResult r = run(AnalyticMode::kPlaceto, g, star_cluster(2), {0, 1, 1}, &t);
  EXPECT_NEAR(r.step_time_us, 62.7, 1e-9);
  EXPECT_NEAR(t.ops[2].start_us, 37, 1e-9);
}

TEST(AnalyticPlaceto, DiamondEndsWithTheTrailingBusOverhead) {
  // 7600-byte outputs (1 us on a bus). a [0,10] dev0; bus0 [10,11] (free 36);
  // c [11,41] dev1 (free 46.7); b [15.7,35.7] dev0; bus1 [41,42] (free 67);
  // d [42,47] dev0 (free 52.7). The last event is bus1's free event at 67.
  OpGraph g("diamond");
  for (auto [name, us] : {std::pair<const char*, double>{"a", 10}, {"b", 20}, {"c", 30}, {"d", 5}})
    g.add_op(timed_op(name, us, 7600));
  g.add_edge(0, 1);
  g.add_edge(0, 2);
  g.add_edge(1, 3);
  g.add_edge(2, 3);
  Trace t;
  const StepResult r = run(AnalyticMode::kPlaceto, g, star_cluster(2), {0, 0, 1, 0}, &t);
  EXPECT_NEAR(t.ops[3].start_us, 42, 1e-9);
  EXPECT_NEAR(r.step_time_us, 67, 1e-9);
}

TEST(AnalyticPlaceto, ForkJoinWaitsForTheSecondBusSlot) {
  // src [0,10] dev0; one transfer to dev1 on bus0 [10,11]; x3 [11,31], x4 [36.7,56.7]
  // on dev1; x1 [15.7,35.7], x2 [41.4,61.4] on dev0; bus1: x3's output [31,32]
  // (free 57), x4's output ready 56.7 waits for 57: [57,58] (free 83);
  // sink ready 61.4 but dev0 is busy until 67.1: [67.1,77.1]. Last event: 83.
  OpGraph g("fork-join");
  g.add_op(timed_op("src", 10, 7600));
  for (int i = 1; i <= 4; ++i) g.add_op(timed_op("x" + std::to_string(i), 20, 7600));
  g.add_op(timed_op("sink", 10, 7600));
  for (int m = 1; m <= 4; ++m) {
    g.add_edge(0, m);
    g.add_edge(m, 5);
  }
  Trace t;
  const StepResult r = run(AnalyticMode::kPlaceto, g, star_cluster(2), {0, 0, 0, 1, 1, 0}, &t);
  EXPECT_NEAR(t.ops[4].start_us, 36.7, 1e-9);
  EXPECT_NEAR(t.ops[2].start_us, 41.4, 1e-9);
  EXPECT_NEAR(t.ops[5].start_us, 67.1, 1e-9);
  EXPECT_NEAR(r.step_time_us, 83, 1e-9);
  EXPECT_EQ(r.transfers, 3);
}

TEST(AnalyticPlaceto, OneTransferServesSeveralDevices) {
  OpGraph g("fanout");
  g.add_op(timed_op("a", 10, 7600));
  g.add_op(timed_op("b", 20));
  g.add_op(timed_op("c", 20));
  g.add_edge(0, 1);
  g.add_edge(0, 2);
  const StepResult r = run(AnalyticMode::kPlaceto, g, star_cluster(3), {0, 1, 2});
  EXPECT_EQ(r.transfers, 1);
  EXPECT_NEAR(r.step_time_us, 36.7, 1e-9);
}

TEST(AnalyticPlaceto, SimultaneousReleasesRunInNameOrder) {
  // z [0,10] releases b_child (added first) and a_child at 10. Dependency events
  // run in (parent, child) name order, so a_child enters the queue first:
  // a_child [15.7,20.7], b_child [26.4,33.4].
  OpGraph g("ties");
  g.add_op(timed_op("z", 10));
  g.add_op(timed_op("b_child", 7));
  g.add_op(timed_op("a_child", 5));
  g.add_edge(0, 1);
  g.add_edge(0, 2);
  Trace t;
  const StepResult r = run(AnalyticMode::kPlaceto, g, star_cluster(1), {0, 0, 0}, &t);
  EXPECT_NEAR(t.ops[2].start_us, 15.7, 1e-9);
  EXPECT_NEAR(t.ops[1].start_us, 26.4, 1e-9);
  EXPECT_NEAR(r.step_time_us, 39.1, 1e-9);
}

TEST(AnalyticPlaceto, LastListedInputDecidesTheOutputIndex) {
  // a feeds b twice: output 0 (7600 B) first, then output 1 (76000 B). One
  // dependency per pair: output 1 counts, a 10 us transfer.
  OpGraph g("pair");
  Op a = timed_op("a", 10);
  a.output_bytes = {7600, 76000};
  g.add_op(a);
  g.add_op(timed_op("b", 20));
  g.add_edge(0, 1, 0);
  g.add_edge(0, 1, 1);
  Trace t;
  run(AnalyticMode::kPlaceto, g, star_cluster(2), {0, 1}, &t);
  EXPECT_NEAR(t.ops[1].start_us, 20, 1e-9);
}

TEST(AnalyticOptions, ModesAndBadOptions) {
  register_builtins();
  EXPECT_EQ(AnalyticSimulator::from_options({{"mode", "placeto"}})->mode(), AnalyticMode::kPlaceto);
  EXPECT_THROW(AnalyticSimulator::from_options({{"mode", "magic"}}), ConfigError);
  EXPECT_THROW(AnalyticSimulator::from_options({{"speed", "1"}}), ConfigError);
  EXPECT_THROW(AnalyticSimulator::from_options({{"placeto.delta1_us", "x"}}), ConfigError);
  EXPECT_NE(EvaluatorRegistry::instance().create("analytic"), nullptr);
  EXPECT_THROW(EvaluatorRegistry::instance().create("nope"), ConfigError);
}

TEST(AnalyticSimulator, PlacementNamingAMissingDeviceThrows) {
  AnalyticSimulator sim;
  EXPECT_THROW(sim.evaluate(chain_graph(), star_cluster(2), Placement({0, 5, 0})), DeviceError);
  EXPECT_THROW(sim.evaluate(chain_graph(), star_cluster(2), Placement({0, 1})), DeviceError);
}

// ------------------------------------------------------------ properties

class AnalyticProperties : public ::testing::TestWithParam<AnalyticMode> {};

TEST_P(AnalyticProperties, ScheduleIsValidOnRandomGraphs) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const OpGraph g = random_layered_dag(300, seed);
    for (const char* preset : {"k40x4", "k40x8", "multi-node:2x2"}) {
      const Cluster c = make_cluster_preset(preset);
      std::uint64_t state = seed;
      Placement p(std::vector<int>(g.num_ops()));
      for (int op = 0; op < g.num_ops(); ++op) p[op] = uniform_below(state, c.num_devices());
      testing::expect_valid_schedule(GetParam(), g, c, p);
    }
  }
}

TEST_P(AnalyticProperties, SingleDeviceStepIsTheSumOfOpTimesInContentionMode) {
  if (GetParam() != AnalyticMode::kContention) GTEST_SKIP() << "placeto adds per-op overheads";
  const OpGraph g = random_layered_dag(200, 9);
  const Cluster c = make_cluster_preset("k40x2");
  const OpCostMatrix costs(g, c);
  double total = 0;
  for (int op = 0; op < g.num_ops(); ++op) total += costs.time_us(op, 0);
  AnalyticSimulator sim(GetParam());
  EXPECT_NEAR(sim.evaluate(g, c, single_device_placement(g, 0)).step_time_us, total, 1e-6 * total);
}

INSTANTIATE_TEST_SUITE_P(Modes, AnalyticProperties,
                         ::testing::Values(AnalyticMode::kContention, AnalyticMode::kPlaceto),
                         [](const auto& info) {
                           return std::string(info.param == AnalyticMode::kContention ? "Contention" : "Placeto");
                         });

}  // namespace
}  // namespace aware

namespace aware {
namespace {

// Two independent chains a(10) -> b(10) on dev0 and c(10) -> d(10) on dev1, with
// compute-bound ops twice as slow while the other device is busy. At t = 0 dev0
// starts a alone (10 us); dev1 then starts c with dev0 busy (20 us). b starts at
// 10 beside c (20 us, ends 30); d starts at 20 beside b (20 us, ends 40).
TEST(AnalyticInterference, HandComputedTwoChains) {
  OpGraph g("two-chains");
  const int a = g.add_op(testing::timed_op("a", 10));
  const int b = g.add_op(testing::timed_op("b", 10));
  const int c = g.add_op(testing::timed_op("c", 10));
  const int d = g.add_op(testing::timed_op("d", 10));
  g.add_edge(a, b);
  g.add_edge(c, d);
  const Cluster cluster = testing::star_cluster(2);
  auto slowed = AnalyticSimulator::from_options({{"slowdown.compute", "2"}});
  Trace trace;
  EXPECT_DOUBLE_EQ(slowed->evaluate(g, cluster, Placement({0, 0, 1, 1}), &trace).step_time_us, 40);
  EXPECT_DOUBLE_EQ(trace.ops[c].end_us, 20);
  EXPECT_DOUBLE_EQ(trace.ops[b].end_us, 30);
  // Timed ops have no bytes: the memory factor does not touch them; one device
  // never slows itself; the default is independent devices.
  auto memory = AnalyticSimulator::from_options({{"slowdown.memory", "3"}});
  EXPECT_DOUBLE_EQ(memory->evaluate(g, cluster, Placement({0, 0, 1, 1})).step_time_us, 20);
  EXPECT_DOUBLE_EQ(slowed->evaluate(g, cluster, Placement({0, 0, 0, 0})).step_time_us, 40);
  auto plain = AnalyticSimulator::from_options({});
  EXPECT_DOUBLE_EQ(plain->evaluate(g, cluster, Placement({0, 0, 1, 1})).step_time_us, 20);
  // A memory-bound op (bytes dominate its roofline) takes the memory factor.
  OpGraph m("memory");
  for (const char* name : {"x", "y"}) {
    Op op;
    op.name = name;
    op.bytes_accessed = 1e6;  // 10 us at 1e11 B/s; 1 flop is nothing at 1e12 FLOP/s
    op.flops = 1;
    op.output_bytes = {0};
    m.add_op(op);
  }
  const double alone = plain->evaluate(m, cluster, Placement({0, 1})).step_time_us;
  EXPECT_DOUBLE_EQ(memory->evaluate(m, cluster, Placement({0, 1})).step_time_us, 3 * alone);
  EXPECT_THROW(AnalyticSimulator::from_options({{"slowdown.memory", "0"}}), ConfigError);
  EXPECT_THROW(AnalyticSimulator::from_options({{"mode", "placeto"}, {"slowdown.memory", "2"}}),
               ConfigError);
  EXPECT_NE(slowed->describe().find("slow each other"), std::string::npos);
}

// The same two chains with the factor from a cost table's measured pair
// slowdowns: the kind's "*" of 2 gives the hand schedule above (40 us) and
// overrides the simulator's own compute factor; a type's own factor (1) wins
// over "*"; a table for another device kind changes nothing.
TEST(AnalyticInterference, PairSlowdownsFromTheCostTable) {
  OpGraph g("two-chains");
  int ids[4];
  const char* names[4] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    Op op = testing::timed_op(names[i], 10);
    op.type = "MatMul";
    ids[i] = g.add_op(op);
  }
  g.add_edge(ids[0], ids[1]);
  g.add_edge(ids[2], ids[3]);
  const Cluster cluster = testing::star_cluster(2);
  const std::string kind = cluster.device(0).kind;
  const Placement split({0, 0, 1, 1});
  const auto with_table = [&](const CostTable& table, const Options& options = {}) {
    auto sim = AnalyticSimulator::from_options(options);
    sim->set_cost_table(std::make_shared<const CostTable>(table), "pairs");
    return sim->evaluate(g, cluster, split).step_time_us;
  };
  CostTable pooled;
  pooled.pair_slowdowns[{"*", kind}] = 2;
  EXPECT_DOUBLE_EQ(with_table(pooled), 40);
  EXPECT_DOUBLE_EQ(with_table(pooled, {{"slowdown.compute", "3"}}), 40);
  CostTable own = pooled;
  own.pair_slowdowns[{"MatMul", kind}] = 1;
  EXPECT_DOUBLE_EQ(with_table(own), 20);
  CostTable other;
  other.pair_slowdowns[{"*", kind + "-other"}] = 2;
  EXPECT_DOUBLE_EQ(with_table(other), 20);
  // One device never slows itself.
  auto sim = AnalyticSimulator::from_options({});
  sim->set_cost_table(std::make_shared<const CostTable>(pooled), "pairs");
  EXPECT_DOUBLE_EQ(sim->evaluate(g, cluster, Placement({0, 0, 0, 0})).step_time_us, 40);
  EXPECT_NE(sim->describe().find("measured factor per op type"), std::string::npos);
}

// slowdown.memory_from_bytes: a memory-bound op below the size takes the compute
// factor (1 here); at or above it, the memory factor.
TEST(AnalyticInterference, MemoryFactorOnlyFromTheGivenSize) {
  OpGraph m("memory");
  for (const char* name : {"x", "y"}) {
    Op op;
    op.name = name;
    op.bytes_accessed = 1e6;
    op.flops = 1;
    op.output_bytes = {0};
    m.add_op(op);
  }
  const Cluster cluster = testing::star_cluster(2);
  const double alone = AnalyticSimulator::from_options({})->evaluate(m, cluster, Placement({0, 1})).step_time_us;
  const auto step = [&](const std::string& from) {
    return AnalyticSimulator::from_options({{"slowdown.memory", "3"}, {"slowdown.memory_from_bytes", from}})
        ->evaluate(m, cluster, Placement({0, 1}))
        .step_time_us;
  };
  EXPECT_DOUBLE_EQ(step("2e6"), alone);
  EXPECT_DOUBLE_EQ(step("1e6"), 3 * alone);
  EXPECT_DOUBLE_EQ(step("0"), 3 * alone);
  EXPECT_THROW(AnalyticSimulator::from_options({{"slowdown.memory_from_bytes", "-1"}}), ConfigError);
}

// queue=rank: a device runs its queued task of lowest topological rank. On one
// device, every start must be of the lowest-ranked op ready then (inputs all
// ended); first come first served starts some op while a lower-ranked one,
// ready later than it but before the start, waits.
TEST(AnalyticQueue, RankQueueStartsTheLowestRankedReadyOp) {
  const OpGraph g = testing::layered_dag(24, 7);
  const Cluster cluster = testing::star_cluster(1);
  const Placement one(std::vector<int>(static_cast<size_t>(g.num_ops()), 0));
  const std::vector<int> rank = topological_rank(g);
  for (const char* queue : {"fifo", "rank"}) {
    SCOPED_TRACE(queue);
    auto sim = AnalyticSimulator::from_options({{"queue", queue}});
    Trace trace;
    ASSERT_TRUE(sim->evaluate(g, cluster, one, &trace).feasible);
    int violations = 0;
    for (int op = 0; op < g.num_ops(); ++op)
      for (int other = 0; other < g.num_ops(); ++other) {
        if (other == op || trace.ops[other].start_us <= trace.ops[op].start_us) continue;
        bool ready = true;  // every input of `other` ended by the time `op` started
        for (int e : g.in_edges(other)) ready = ready && trace.ops[g.edge(e).src].end_us <= trace.ops[op].start_us;
        if (ready && rank[other] < rank[op]) ++violations;
      }
    if (std::string(queue) == "rank") EXPECT_EQ(violations, 0);
    else EXPECT_GT(violations, 0);  // first come first served does not keep to rank on this graph
  }
  EXPECT_THROW(AnalyticSimulator::from_options({{"queue", "lifo"}}), ConfigError);
  EXPECT_THROW(AnalyticSimulator::from_options({{"mode", "placeto"}, {"queue", "rank"}}), ConfigError);
  EXPECT_NE(AnalyticSimulator::from_options({{"queue", "rank"}})->describe().find("lowest topological rank"),
            std::string::npos);
}

TEST(AnalyticContention, CopiesOnTheConsumerHoldItsComputeStream) {
  // a (gpu0, 10 us) -> b (gpu1, 10 us) with 1 MB between them; c (gpu1, source)
  // keeps gpu1 busy. On the links the copy overlaps c; on the consumer it waits
  // for c and then holds gpu1 itself.
  const Cluster cluster = testing::star_cluster(2);  // 1 GB/s, 1 us per hop
  const double copy_us = cluster.route_latency_us(0, 1) + 1e6 / cluster.route_bandwidth_Bps(0, 1) * 1e6;
  auto chain_beside = [](double c_us) {
    OpGraph g("copy-on-consumer");
    const int a = g.add_op(testing::timed_op("a", 10, 1e6));
    const int b = g.add_op(testing::timed_op("b", 10));
    g.add_op(testing::timed_op("c", c_us));
    g.add_edge(a, b, 0, 1e6);
    return g;
  };
  auto links = AnalyticSimulator::from_options({});
  auto consumer = AnalyticSimulator::from_options({{"copies", "consumer"}});
  const Placement split({0, 1, 1});

  // c runs 0..2000 us, longer than a and its copy: the copy waits for gpu1.
  const OpGraph busy = chain_beside(2000);
  EXPECT_DOUBLE_EQ(links->evaluate(busy, cluster, split).step_time_us, 2000 + 10);
  Trace trace;
  const StepResult r = consumer->evaluate(busy, cluster, split, &trace);
  EXPECT_DOUBLE_EQ(r.step_time_us, 2000 + copy_us + 10);
  ASSERT_EQ(trace.transfers.size(), 1u);
  EXPECT_DOUBLE_EQ(trace.transfers[0].start_us, 2000);
  EXPECT_DOUBLE_EQ(trace.transfers[0].end_us, 2000 + copy_us);
  EXPECT_DOUBLE_EQ(r.device_busy_us[1], 2000 + copy_us + 10);  // the copy counts as gpu1's work
  EXPECT_EQ(r.transfers, 1);
  EXPECT_DOUBLE_EQ(r.bytes_moved, 1e6);

  // c is short: gpu1 is idle when a ends, and both give a + copy + b.
  const OpGraph idle = chain_beside(5);
  EXPECT_DOUBLE_EQ(links->evaluate(idle, cluster, split).step_time_us, 10 + copy_us + 10);
  EXPECT_DOUBLE_EQ(consumer->evaluate(idle, cluster, split).step_time_us, 10 + copy_us + 10);
  // No copies, no difference; clones keep the setting; bad values are refused.
  EXPECT_DOUBLE_EQ(consumer->evaluate(busy, cluster, Placement({1, 1, 1})).step_time_us, 2020);
  EXPECT_DOUBLE_EQ(consumer->clone()->evaluate(busy, cluster, split).step_time_us,
                   2000 + copy_us + 10);
  EXPECT_NE(consumer->describe().find("consumer"), std::string::npos);
  EXPECT_THROW(AnalyticSimulator::from_options({{"copies", "sideways"}}), ConfigError);
  EXPECT_THROW(AnalyticSimulator::from_options({{"mode", "placeto"}, {"copies", "consumer"}}),
               ConfigError);
}

// host.op_us / host.copy_us: one host issues every task, in the order they
// start, each after the last. The k-th task cannot start before its issue.
TEST(AnalyticHost, OneHostIssuesEveryTaskInTurn) {
  const Cluster one = testing::star_cluster(1);
  auto host10 = AnalyticSimulator::from_options({{"host.op_us", "10"}});
  auto chain = [](double us) {
    OpGraph g("chain4");
    int prev = -1;
    for (int i = 0; i < 4; ++i) {
      const int op = g.add_op(testing::timed_op("op" + std::to_string(i), us));
      if (prev >= 0) g.add_edge(prev, op);
      prev = op;
    }
    return g;
  };
  // Short ops run at the host's pace: issued at 10, 20, 30, 40; 1 us each.
  Trace trace;
  EXPECT_DOUBLE_EQ(host10->evaluate(chain(1), one, Placement({0, 0, 0, 0}), &trace).step_time_us, 41);
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(trace.ops[i].start_us, 10.0 * (i + 1)) << i;
  // Long ops: the host runs ahead; only the first issue shows.
  EXPECT_DOUBLE_EQ(host10->evaluate(chain(100), one, Placement({0, 0, 0, 0})).step_time_us, 10 + 400);
  // Without a host, the chain's sum.
  EXPECT_DOUBLE_EQ(AnalyticSimulator::from_options({})->evaluate(chain(1), one, Placement({0, 0, 0, 0})).step_time_us, 4);

  // Two independent 5 us ops on two devices: one host issues them one after the
  // other (10, then 20), so they do not run side by side.
  OpGraph pair("pair");
  pair.add_op(testing::timed_op("a", 5));
  pair.add_op(testing::timed_op("c", 5));
  const Cluster two = testing::star_cluster(2);
  Trace both;
  EXPECT_DOUBLE_EQ(host10->evaluate(pair, two, Placement({0, 1}), &both).step_time_us, 25);
  EXPECT_DOUBLE_EQ(std::min(both.ops[0].start_us, both.ops[1].start_us), 10);
  EXPECT_DOUBLE_EQ(std::max(both.ops[0].start_us, both.ops[1].start_us), 20);

  // A copy is a task too: a (dev0, 1 us) -> b (dev1, 1 us), 1000 bytes = 3 us on
  // the star. a issued at 10 (runs 10-11); its copy at 15 (15-18); b at 25 (25-26).
  OpGraph ab("ab");
  const int a = ab.add_op(testing::timed_op("a", 1));
  const int b = ab.add_op(testing::timed_op("b", 1));
  ab.add_edge(a, b, 0, 1000);
  for (const char* copies : {"links", "consumer"}) {
    SCOPED_TRACE(copies);
    auto sim = AnalyticSimulator::from_options({{"host.op_us", "10"}, {"host.copy_us", "5"}, {"copies", copies}});
    Trace t;
    EXPECT_DOUBLE_EQ(sim->evaluate(ab, two, Placement({0, 1}), &t).step_time_us, 26);
    ASSERT_EQ(t.transfers.size(), 1u);
    EXPECT_DOUBLE_EQ(t.transfers[0].start_us, 15);
    EXPECT_DOUBLE_EQ(t.transfers[0].end_us, 18);
    EXPECT_DOUBLE_EQ(sim->clone()->evaluate(ab, two, Placement({0, 1})).step_time_us, 26);
  }
  // On one device there is no copy: 10-11 and 20-21.
  EXPECT_DOUBLE_EQ(host10->evaluate(ab, two, Placement({1, 1})).step_time_us, 21);

  EXPECT_NE(host10->describe().find("one host issues every task"), std::string::npos);
  EXPECT_EQ(AnalyticSimulator::from_options({})->describe().find("host"), std::string::npos);
  EXPECT_THROW(AnalyticSimulator::from_options({{"host.op_us", "-1"}}), ConfigError);
  EXPECT_THROW(AnalyticSimulator::from_options({{"host.copy_us", "inf"}}), ConfigError);
  EXPECT_THROW(AnalyticSimulator::from_options({{"mode", "placeto"}, {"host.op_us", "5"}}), ConfigError);
}

// host.op_us=0 is no host: every step of a generated graph's random placements is
// the default's, bit for bit.
TEST(AnalyticHost, ZeroIsNoHost) {
  const OpGraph g = testing::layered_dag(60, 3);
  const Cluster c = testing::star_cluster(3);
  auto plain = AnalyticSimulator::from_options({});
  auto zero = AnalyticSimulator::from_options({{"host.op_us", "0"}, {"host.copy_us", "0"}});
  std::uint64_t state = 9;
  for (int i = 0; i < 20; ++i) {
    Placement p(std::vector<int>(g.num_ops()));
    for (int op = 0; op < g.num_ops(); ++op) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      p[op] = static_cast<int>((state >> 33) % 3);
    }
    EXPECT_EQ(zero->evaluate(g, c, p).step_time_us, plain->evaluate(g, c, p).step_time_us) << i;
  }
}

}  // namespace
}  // namespace aware
