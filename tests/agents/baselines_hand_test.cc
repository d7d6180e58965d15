// Hand-computed cases for the baseline placers: fork-join schedules worked out on
// paper, METIS on two disconnected halves, m-TOPO's cap, the expert's layer rule.
#include <gtest/gtest.h>

#include <set>

#include "builtins/builtins.h"
#include "agents/common/placer_common.h"
#include "agents/baselines/placers.h"
#include "core/errors.h"
#include "core/placer.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::fork_join3_graph;
using testing::timed_op;
using testing::zero_latency_star;

Placement run(const std::string& method, const OpGraph& g, const Cluster& c,
              PlaceContext context = {}) {
  register_builtins();
  return PlacerRegistry::instance().create(method)->place(g, c, context);
}

// Fork-join A -> {B, C, D} -> E on three identical devices, 1 us per transfer.
// Optimal: A, B, E on one device, C and D on the other two:
//   A 0-10; B 10-110 locally; C, D start at 11 after a 1 us transfer, end 111,
//   their outputs reach E's device at 112; E 112-122. Keeping all three branches
//   local would take 10 + 300 + 10 = 320; any split pays at least 1 us in and 1 us
//   out for a remote branch, so 122 is optimal. HEFT visits A, then B, C, D (equal
//   rank, topological tie) and E, each time on the device finishing it first; m-ETF
//   takes the (op, device) with the earliest start. Both find the optimum.
void expect_fork_join_optimum(const std::string& method) {
  const OpGraph g = fork_join3_graph();
  const Cluster c = zero_latency_star(3);
  const Placement p = run(method, g, c);
  EXPECT_EQ(p[0], p[1]) << method;
  EXPECT_EQ(p[0], p[4]) << method;
  EXPECT_EQ((std::set<int>{p[1], p[2], p[3]}).size(), 3u) << method;
  AnalyticSimulator sim;
  const StepResult r = sim.evaluate(g, c, p);
  EXPECT_TRUE(r.feasible);
  // The simulator adds one effect the schedulers ignore: A's two outgoing copies
  // share A's uplink channel, so D starts at 12 and E at 113: 123 us.
  EXPECT_GE(r.step_time_us, 122.0 - 1e-6) << method;
  EXPECT_LE(r.step_time_us, 123.0 + 1e-6) << method;
}

TEST(BaselinesHand, HeftFindsForkJoinOptimum) { expect_fork_join_optimum("heft"); }
TEST(BaselinesHand, MEtfFindsForkJoinOptimum) { expect_fork_join_optimum("m-etf"); }

// With transfers far dearer than compute, favourite children keep the chain local.
TEST(BaselinesHand, MSctKeepsExpensiveChainTogether) {
  OpGraph g("chain");
  int prev = -1;
  for (int i = 0; i < 6; ++i) {
    const int op = g.add_op(timed_op("op" + std::to_string(i), 10, 1e6));  // 1 ms transfers
    if (prev >= 0) g.add_edge(prev, op);
    prev = op;
  }
  const Placement p = run("m-sct", g, zero_latency_star(2));
  for (int i = 1; i < 6; ++i) EXPECT_EQ(p[i], p[0]);
}

// Two disconnected chains of equal work: one per device, nothing cut.
TEST(BaselinesHand, MetisSplitsDisconnectedHalves) {
  OpGraph g("halves");
  for (int half = 0; half < 2; ++half) {
    int prev = -1;
    for (int i = 0; i < 10; ++i) {
      const int op =
          g.add_op(timed_op("h" + std::to_string(half) + "_" + std::to_string(i), 50, 1e6));
      if (prev >= 0) g.add_edge(prev, op);
      prev = op;
    }
  }
  const Placement p = run("metis", g, zero_latency_star(2));
  for (int i = 1; i < 10; ++i) {
    EXPECT_EQ(p[i], p[0]);
    EXPECT_EQ(p[10 + i], p[10]);
  }
  EXPECT_NE(p[0], p[10]);
}

// 20 ops of 1 GB parameters (+1 KB output) on four 16 GB devices: the cap is
// 20.00002 GB / 4 + 1.000001 GB ~ 6 GB, so m-TOPO fills devices 0..3 in order with
// at most 6 ops each instead of piling everything on device 0.
TEST(BaselinesHand, MTopoRespectsItsMemoryCap) {
  OpGraph g("params");
  int prev = -1;
  for (int i = 0; i < 20; ++i) {
    const int op = g.add_op(timed_op("op" + std::to_string(i), 10, 1000, 1e9));
    if (prev >= 0) g.add_edge(prev, op);
    prev = op;
  }
  const Cluster c = zero_latency_star(4);
  const std::vector<double> caps = baselines::m_topo_memory_caps(g, c);
  ASSERT_EQ(caps.size(), 4u);
  EXPECT_NEAR(caps[0], 20 * (1e9 + 1000) / 4 + 1e9 + 1000, 1);
  const Placement p = run("m-topo", g, c);
  std::vector<double> used(4, 0.0);
  for (int op = 0; op < g.num_ops(); ++op) used[p[op]] += placing::op_memory_bytes(g.op(op));
  for (int d = 0; d < 4; ++d) EXPECT_LE(used[d], caps[d]) << "device " << d;
  // Topological fill: device ids never decrease along the chain.
  for (int i = 1; i < 20; ++i) EXPECT_GE(p[i], p[i - 1]);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[19], 3);
}

// An NMT-like graph: embedding, `layers` encoder and decoder layers of two ops
// each, attention, softmax, a loss, then a backward op per forward op (half of
// them carry the block/layer, half only forward_of).
OpGraph nmt_like(int layers) {
  OpGraph g("nmt-like");
  auto add = [&](const std::string& name, const std::string& block, int layer, int input) {
    Op op = timed_op(name, 20, 1e5, 1e6);
    op.block = block;
    op.layer = layer;
    const int id = g.add_op(op);
    if (input >= 0) g.add_edge(input, id);
    return id;
  };
  const int embed = add("embed", "embedding", -1, -1);
  int x = embed;
  for (int l = 0; l < layers; ++l) {
    x = add("enc" + std::to_string(l) + "/cell", "encoder", l, x);
    x = add("enc" + std::to_string(l) + "/dropout", "encoder", l, x);
  }
  int y = add("dec_embed", "embedding", -1, embed);
  for (int l = 0; l < layers; ++l) {
    y = add("dec" + std::to_string(l) + "/cell", "decoder", l, y);
    if (l == 0) {
      const int att = add("attention", "attention", -1, y);
      g.add_edge(x, att);
      y = att;
    }
    y = add("dec" + std::to_string(l) + "/dropout", "decoder", l, y);
  }
  const int softmax = add("softmax", "softmax", -1, y);
  const int loss = add("loss", "", -1, softmax);
  const int forward_ops = g.num_ops();
  int grad = loss;
  for (int f = forward_ops - 2; f >= 0; --f) {
    Op op = timed_op(g.op(f).name + "/grad", 20, 1e5);
    op.phase = Phase::kBackward;
    op.forward_of = f;
    if (f % 2 == 0) {
      op.block = g.op(f).block;
      op.layer = g.op(f).layer;
    }
    const int id = g.add_op(op);
    g.add_edge(grad, id);
    grad = id;
  }
  g.validate();
  return g;
}

TEST(BaselinesHand, ExpertPutsLayerIOnDeviceIModN) {
  const OpGraph g = nmt_like(4);
  for (int n : {2, 3}) {
    const Cluster c = zero_latency_star(n);
    const Placement p = run("expert", g, c);
    for (int op = 0; op < g.num_ops(); ++op) {
      const Op& o = g.op(op);
      const Op& meta = o.block.empty() && o.forward_of >= 0 ? g.op(o.forward_of) : o;
      if ((meta.block == "encoder" || meta.block == "decoder") && meta.layer >= 0)
        EXPECT_EQ(p[op], meta.layer % n) << o.name << " on " << n << " devices";
      if (meta.block == "embedding") EXPECT_EQ(p[op], 0) << o.name;
      if (meta.block == "softmax") EXPECT_EQ(p[op], n - 1) << o.name;
    }
  }
}

// A graph without layered stacks (a CNN) goes whole onto one device.
TEST(BaselinesHand, ExpertPutsUnlayeredModelOnOneDevice) {
  const Placement p = run("expert", testing::layered_dag(60, 3), zero_latency_star(4));
  for (int op = 0; op < p.size(); ++op) EXPECT_EQ(p[op], p[0]);
}

TEST(BaselinesHand, SinglePicksFastestDeviceThatFits) {
  Cluster c("mixed");
  for (int i = 0; i < 3; ++i) {
    Device d;
    d.name = "dev" + std::to_string(i);
    d.kind = i == 2 ? "fast" : "slow";
    d.peak_flops = i == 2 ? 4e12 : 1e12;
    d.memory_bytes = 16e9;
    d.memory_Bps = 1e11;
    c.add_device(d);
  }
  c.add_switch("hub");
  for (int i = 0; i < 3; ++i) c.connect("dev" + std::to_string(i), "hub", 1e9, 0);
  c.finalize();
  OpGraph g("flops");
  Op op;
  op.name = "mm";
  op.type = "MatMul";
  op.flops = 1e9;
  op.output_bytes = {1000};
  g.add_op(op);
  EXPECT_EQ(run("single", g, c)[0], 2);
  g.mutable_op(0).param_bytes = 20e9;  // fits nowhere alone
  EXPECT_THROW(run("single", g, c), ConfigError);
}

}  // namespace
}  // namespace aware
