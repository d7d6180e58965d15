#include <set>
#include <gtest/gtest.h>

#include <algorithm>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/op_graph.h"
#include "core/errors.h"
#include "test_graphs.h"

namespace aware {
namespace {

TEST(Cluster, EveryPresetBuildsWithRoutesBetweenAllDevices) {
  for (std::string name : cluster_preset_names()) {
    if (name == "multi-node:NxG") name = "multi-node:2x4";
    if (name == "hadoop:N") name = "hadoop:3";
    if (name == "mesh:WxH") name = "mesh:3x2";
    if (name == "dgx-a100-pod:N") name = "dgx-a100-pod:2";
    if (name == "dgx-h100-pod:N") name = "dgx-h100-pod:3";
    const Cluster c = make_cluster_preset(name);
    ASSERT_GT(c.num_devices(), 0) << name;
    for (int s = 0; s < c.num_devices(); ++s) {
      for (int d = 0; d < c.num_devices(); ++d) {
        if (s == d) continue;
        EXPECT_FALSE(c.route(s, d).empty()) << name;
        EXPECT_GT(c.route_bandwidth_Bps(s, d), 0) << name;
      }
    }
  }
}

// hadoop:N: N commodity nodes behind one 1 GbE switch (125e6 B/s, 50 us per hop).
TEST(Cluster, HadoopPresetIsNNodesOnOneGigabitSwitch) {
  const Cluster c = make_cluster_preset("hadoop:8");
  ASSERT_EQ(c.num_devices(), 8);
  EXPECT_EQ(c.device(7).kind, "commodity-cpu");
  EXPECT_DOUBLE_EQ(c.device(0).peak_flops, 160e9);
  EXPECT_EQ(c.route(0, 7).size(), 2u);
  EXPECT_DOUBLE_EQ(c.route_bandwidth_Bps(0, 7), 125e6);
  EXPECT_DOUBLE_EQ(c.route_latency_us(0, 7), 100);
  EXPECT_EQ(load_cluster("hadoop:2").num_devices(), 2);
  EXPECT_THROW(make_cluster_preset("hadoop:0"), ConfigError);
  EXPECT_THROW(make_cluster_preset("hadoop:4x"), ConfigError);
  EXPECT_THROW(register_cluster_preset("hadoop:9", [] { return Cluster(); }), ConfigError);
}

TEST(Cluster, K40x8CrossesTheRootComplexBetweenSwitches) {
  const Cluster c = make_cluster_preset("k40x8");
  EXPECT_EQ(c.route(0, 1).size(), 2u);  // gpu0 -> pcie0 -> gpu1
  EXPECT_EQ(c.route(0, 5).size(), 4u);  // gpu0 -> pcie0 -> root -> pcie1 -> gpu5
  EXPECT_DOUBLE_EQ(c.route_latency_us(0, 5), 20);
}

TEST(Cluster, MultiNodeRoutesLeaveTheNodeThroughTheUplink) {
  const Cluster c = make_cluster_preset("multi-node:2x4");
  EXPECT_EQ(c.num_devices(), 8);
  EXPECT_DOUBLE_EQ(c.route_bandwidth_Bps(0, 1), 300e9);  // inside a node: NVSwitch
  EXPECT_DOUBLE_EQ(c.route_bandwidth_Bps(0, 4), 50e9);   // across nodes: the 400 Gb/s uplink
}

// dgx-*-pod:N: 8 GPUs per node on an NVSwitch, one InfiniBand port per GPU, each
// port on its rail and on the spine (a non-blocking fabric: transfers meet at ports).
TEST(Cluster, DgxPodsAreRailOptimisedFatTrees) {
  const Cluster a = make_cluster_preset("dgx-a100-pod:4");
  ASSERT_EQ(a.num_devices(), 32);
  EXPECT_EQ(a.device(0).kind, "A100-BF16");
  EXPECT_DOUBLE_EQ(a.device(0).peak_flops, 312e12);
  EXPECT_DOUBLE_EQ(a.device(0).memory_bytes, 80e9);
  EXPECT_DOUBLE_EQ(a.route_bandwidth_Bps(0, 7), 300e9);  // inside a node: NVSwitch
  EXPECT_DOUBLE_EQ(a.route_bandwidth_Bps(0, 8), 25e9);   // GPU 0 of nodes 0 and 1: rail 0, 200 Gb/s
  EXPECT_EQ(a.route(0, 8).size(), 4u);                    // gpu -> port -> rail0 -> port -> gpu
  EXPECT_DOUBLE_EQ(a.route_latency_us(0, 8), 4);
  EXPECT_DOUBLE_EQ(a.route_latency_us(1, 8), 6);          // another rail: through the spine
  // Two transfers between rails from different GPUs share no link direction.
  std::set<int> channels;
  for (const Hop& h : a.route(1, 8)) channels.insert(h.channel());
  for (const Hop& h : a.route(9, 16)) EXPECT_EQ(channels.count(h.channel()), 0u);
  EXPECT_DOUBLE_EQ(a.route_bandwidth_Bps(1, 8), 25e9);   // another rail: still one port's rate at best
  const Cluster h = make_cluster_preset("dgx-h100-pod:2");
  EXPECT_EQ(h.num_devices(), 16);
  EXPECT_DOUBLE_EQ(h.device(15).peak_flops, 989e12);
  EXPECT_DOUBLE_EQ(h.route_bandwidth_Bps(0, 8), 50e9);   // 400 Gb/s NDR
  EXPECT_EQ(make_cluster_preset("dgx-a100-pod:1").num_devices(), 8);
  EXPECT_THROW(make_cluster_preset("dgx-a100-pod:513"), ConfigError);
  EXPECT_THROW(make_cluster_preset("dgx-h100-pod:0"), ConfigError);
  EXPECT_THROW(make_cluster_preset("dgx-h100-pod:4x"), ConfigError);
}

// Above 256 devices routes are found when first asked for, by the same search:
// the same routes as the all-pairs search finds on the first 200 devices of the
// same fabric.
TEST(Cluster, LargeClustersFindTheSameRoutesWhenAsked) {
  const Cluster pod = make_cluster_preset("dgx-a100-pod:40");  // 320 GPUs
  ASSERT_EQ(pod.num_devices(), 320);
  EXPECT_DOUBLE_EQ(pod.route_latency_us(0, 8), 8);   // beyond 32 nodes: leaf, spine, leaf
  EXPECT_DOUBLE_EQ(pod.route_latency_us(1, 8), 10);
  EXPECT_DOUBLE_EQ(pod.route_bandwidth_Bps(0, 319), 25e9);
  const Cluster eager = restrict_devices(pod, 200);
  for (int a = 0; a < 200; a += 7)
    for (int b = 0; b < 200; b += 11) {
      ASSERT_EQ(pod.route(a, b).size(), eager.route(a, b).size()) << a << " " << b;
      for (std::size_t h = 0; h < pod.route(a, b).size(); ++h)
        EXPECT_EQ(pod.link(pod.route(a, b)[h].link).name, eager.link(eager.route(a, b)[h].link).name);
      EXPECT_DOUBLE_EQ(pod.route_latency_us(a, b), eager.route_latency_us(a, b));
      EXPECT_DOUBLE_EQ(pod.route_bandwidth_Bps(a, b), eager.route_bandwidth_Bps(a, b));
    }
  // Two halves on switches not joined: still one error naming a pair.
  Cluster split("split");
  Device d = pod.device(0);
  for (int i = 0; i < 300; ++i) {
    d.name = "g" + std::to_string(i);
    split.add_device(d);
  }
  split.add_switch("left");
  split.add_switch("right");
  for (int i = 0; i < 300; ++i) split.connect("g" + std::to_string(i), i < 150 ? "left" : "right", 1e9, 1);
  EXPECT_THROW(split.finalize(), DeviceError);
}

TEST(Cluster, TransferTimeIsLatencyPlusBytesOverBottleneck) {
  const Cluster c = testing::star_cluster(2, 1e9, 1);
  EXPECT_DOUBLE_EQ(c.transfer_time_us(0, 1, 3000), 2 + 3);
  EXPECT_DOUBLE_EQ(c.transfer_time_us(0, 0, 3000), 0);
}

TEST(Cluster, UnknownPresetListsTheKnownOnes) {
  try {
    make_cluster_preset("k41x4");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("k40x4"), std::string::npos);
  }
}

// A device whose rates are all 1: valid, and cheap to build in the bad-input cases.
Device unit_device(const std::string& name) {
  Device d;
  d.name = name;
  d.peak_flops = 1;
  d.memory_bytes = 1;
  d.memory_Bps = 1;
  return d;
}

TEST(Cluster, ZeroBandwidthLinkIsRejected) {
  Cluster c("bad");
  c.add_device(unit_device("a"));
  c.add_device(unit_device("b"));
  c.connect("a", "b", 0, 1, "ab");
  try {
    c.finalize();
    FAIL();
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("link 'ab'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bandwidth_Bps"), std::string::npos) << e.what();
  }
}

TEST(Cluster, EfficiencyAboveOneNamesTheValueRead) {
  Cluster c("bad");
  Device d = unit_device("a");
  d.efficiency = 5.0;
  c.add_device(d);
  try {
    c.finalize();
    FAIL();
  } catch (const DeviceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("device 'a'"), std::string::npos) << what;
    EXPECT_NE(what.find("'efficiency'"), std::string::npos) << what;
    EXPECT_NE(what.find("got 5"), std::string::npos) << what;  // not the -1 it once printed
    EXPECT_NE(what.find("at most 1"), std::string::npos) << what;
  }
}

TEST(Cluster, UnreachableDevicePairIsRejected) {
  Cluster c("split");
  Device d;
  d.peak_flops = 1;
  d.memory_bytes = 1;
  d.memory_Bps = 1;
  for (const char* n : {"a", "b", "c"}) {
    d.name = n;
    c.add_device(d);
  }
  c.connect("a", "b", 1e9, 1);
  try {
    c.finalize();
    FAIL();
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("'c'"), std::string::npos) << e.what();
  }
}

TEST(Cluster, RestrictDevicesKeepsTheFirstN) {
  const Cluster c = restrict_devices(make_cluster_preset("dgx-a100"), 4);
  EXPECT_EQ(c.num_devices(), 4);
  EXPECT_EQ(c.device(3).name, "gpu3");
  EXPECT_FALSE(c.route(0, 3).empty());
  EXPECT_THROW(restrict_devices(c, 9), ConfigError);
}

// The hook optional modules use (the CUDA backend's "cuda-host"): listed, built
// on each request (what the builder throws passes through), finalized with its
// source; a built-in name stays built in.
TEST(Cluster, RegisteredPresetIsListedBuiltAndFinalized) {
  register_cluster_preset("test-registered", []() -> Cluster {
    throw DeviceError("test-registered: no such hardware here");
  });
  const auto names = cluster_preset_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "test-registered"), names.end());
  EXPECT_THROW(make_cluster_preset("test-registered"), DeviceError);

  // A second registration replaces the first (and leaves a preset that builds, for
  // the test that builds every listed one).
  register_cluster_preset("test-registered", [] {
    Cluster c("test-registered");
    c.add_device(unit_device("a"));
    c.add_device(unit_device("b"));
    c.connect("a", "b", 1, 1, "ab");
    return c;
  });
  const Cluster c = load_cluster("preset:test-registered");
  EXPECT_TRUE(c.finalized());
  EXPECT_EQ(c.source(), "preset:test-registered");
  EXPECT_EQ(c.route(0, 1).size(), 1u);
  EXPECT_EQ(load_cluster("test-registered").num_devices(), 2);  // bare names too

  EXPECT_THROW(register_cluster_preset("k40x4", [] { return Cluster(); }), ConfigError);
  EXPECT_THROW(register_cluster_preset("multi-node:1x1", [] { return Cluster(); }), ConfigError);
  EXPECT_EQ(make_cluster_preset("k40x4").num_devices(), 4);
}

// The cost matrix keeps one column per class of devices op_time_us cannot tell
// apart, and prices every op on every device as op_time_us does.
TEST(OpCostMatrix, DevicesThatCostAlikeShareAColumn) {
  Cluster c("mixed");
  Device fast{"f0", "A", 10e12, 0.5, 16e9, 900e9, 5};
  Device slow{"s0", "B", 4e12, 0.5, 16e9, 300e9, 5};
  for (int i = 0; i < 3; ++i) {
    fast.name = "f" + std::to_string(i);
    c.add_device(fast);
  }
  c.add_device(slow);
  Device same_but_kind = fast;  // cost tables are keyed by kind: another class
  same_but_kind.name = "k0";
  same_but_kind.kind = "A2";
  c.add_device(same_but_kind);
  c.add_switch("hub");
  for (const Device& d : c.devices()) c.connect(d.name, "hub", 10e9, 1);
  c.finalize();
  OpGraph g("g");
  Op heavy;
  heavy.name = "heavy";
  heavy.type = "MatMul";
  heavy.flops = 4e9;
  heavy.bytes_accessed = 1e6;
  heavy.output_bytes = {1000};
  Op streaming = heavy;
  streaming.name = "streaming";
  streaming.flops = 1e3;
  streaming.bytes_accessed = 3e9;
  g.add_op(heavy);
  g.add_op(streaming);
  g.add_op(testing::timed_op("timed", 7));
  const OpCostMatrix m(g, c);
  EXPECT_EQ(m.num_classes(), 3);
  EXPECT_EQ(m.device_class(0), m.device_class(2));
  EXPECT_NE(m.device_class(0), m.device_class(3));
  EXPECT_NE(m.device_class(0), m.device_class(4));
  for (int op = 0; op < g.num_ops(); ++op) {
    double min = 1e300, mean = 0;
    for (int d = 0; d < c.num_devices(); ++d) {
      const double t = op_time_us(g.op(op), c.device(d));
      EXPECT_EQ(m.time_us(op, d), t) << op << " on " << d;
      min = std::min(min, t);
      mean += t / c.num_devices();
    }
    EXPECT_EQ(m.min_time_us(op), min);
    EXPECT_EQ(m.mean_time_us(op), mean);
  }
  EXPECT_DOUBLE_EQ(m.time_us(0, 0), 4e9 / 5e12 * 1e6 + 5);   // compute-bound on A
  EXPECT_DOUBLE_EQ(m.time_us(1, 3), 3e9 / 300e9 * 1e6 + 5);  // memory-bound on B
}

}  // namespace
}  // namespace aware
