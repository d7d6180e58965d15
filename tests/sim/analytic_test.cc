// Hand-computed schedules for both analytic modes, then properties on generated
// graphs. Clusters: testing::star_cluster (two hops per route, 1 us latency per
// hop, 1e9 B/s = 1000 bytes per us), so a 1000-byte tensor takes 2 + 1 = 3 us.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/random_dag.h"
#include "sim/analytic/analytic_simulator.h"
#include "test_graphs.h"

namespace aware {
namespace {

using testing::chain_graph;
using testing::diamond_graph;
using testing::fork_join_graph;
using testing::star_cluster;
using testing::timed_op;

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
  OpGraph g("contended");
  const int a = g.add_op(timed_op("a", 10, 4000));
  const int b = g.add_op(timed_op("b", 10, 4000));
  const int c = g.add_op(timed_op("c", 5));
  g.add_edge(a, c);
  g.add_edge(b, c);
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
  register_analytic_evaluator();
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
  const AnalyticMode mode = GetParam();
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const OpGraph g = random_layered_dag(300, seed);
    for (const char* preset : {"k40x4", "k40x8", "multi-node:2x2"}) {
      const Cluster c = make_cluster_preset(preset);
      std::uint64_t state = seed;
      Placement p(std::vector<int>(g.num_ops()));
      for (int op = 0; op < g.num_ops(); ++op) p[op] = uniform_below(state, c.num_devices());
      AnalyticSimulator sim(mode);
      Trace t;
      const StepResult r = sim.evaluate(g, c, p, &t);
      // Every op ran exactly once, on its device, after its inputs arrived.
      ASSERT_EQ(static_cast<int>(t.ops.size()), g.num_ops());
      for (int op = 0; op < g.num_ops(); ++op) {
        EXPECT_EQ(t.ops[op].op, op);
        EXPECT_EQ(t.ops[op].device, p[op]);
        EXPECT_GE(t.ops[op].end_us, t.ops[op].start_us);
        EXPECT_LE(t.ops[op].end_us, r.step_time_us);
      }
      for (const Edge& e : g.edges()) {
        double arrival = t.ops[e.src].end_us;
        if (p[e.src] != p[e.dst] && mode == AnalyticMode::kContention)
          arrival += c.route_latency_us(p[e.src], p[e.dst]);
        EXPECT_GE(t.ops[e.dst].start_us + 1e-9, arrival) << g.op(e.src).name << "->" << g.op(e.dst).name;
      }
      // One op at a time per device.
      for (int d = 0; d < c.num_devices(); ++d) {
        std::vector<std::pair<double, double>> spans;
        for (const OpSpan& s : t.ops)
          if (s.device == d) spans.push_back({s.start_us, s.end_us});
        std::sort(spans.begin(), spans.end());
        for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first + 1e-9, spans[i - 1].second);
      }
      // One transfer at a time per directed link channel.
      if (mode == AnalyticMode::kContention) {
        std::map<int, std::vector<std::pair<double, double>>> by_channel;
        for (const TransferSpan& s : t.transfers)
          for (int ch : s.channels) by_channel[ch].push_back({s.start_us, s.end_us});
        for (auto& [ch, spans] : by_channel) {
          std::sort(spans.begin(), spans.end());
          for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first + 1e-9, spans[i - 1].second);
        }
      }
      // Never below the physical limit; the same answer twice, and from a clone.
      EXPECT_GE(r.step_time_us + 1e-6, lower_bound(g, c).bound_us());
      const StepResult again = sim.evaluate(g, c, p);
      EXPECT_EQ(again.step_time_us, r.step_time_us);
      EXPECT_EQ(again.peak_memory_bytes, r.peak_memory_bytes);
      EXPECT_EQ(sim.clone()->evaluate(g, c, p).step_time_us, r.step_time_us);
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
