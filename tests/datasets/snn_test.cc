// Spiking networks: groups that fit, the per-core multicast traffic by hand,
// the topologies' connectivity, the one-step graph, and bad specs in one line.
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "core/errors.h"
#include "datasets/load.h"
#include "datasets/snn.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

TEST(Snn, LayersSplitIntoGroupsThatFit) {
  const SnnSpec s = parse_snn_spec("snn:layered:8000");
  EXPECT_EQ(s.layers, 8);
  EXPECT_EQ(s.group, 64);
  const MeshTraffic t = build_snn_traffic(s);
  // 1,000 neurons per layer in 16 groups of 62 or 63.
  ASSERT_EQ(t.groups(), 8 * 16);
  double total = 0;
  for (double n : t.group_neurons) {
    EXPECT_TRUE(n == 62 || n == 63) << n;
    total += n;
  }
  EXPECT_DOUBLE_EQ(total, 8000);
  EXPECT_EQ(t.group_names[16], "layer1/g0");
}

TEST(Snn, TrafficIsOneEventPerTargetCoreByHand) {
  // Two layers of one 64-neuron group, p = 0.5, 10 Hz, 4 bytes per spike: a
  // neuron reaches the other group unless all 64 draws miss.
  const MeshTraffic t = build_snn_traffic(parse_snn_spec("snn:layered:128:layers=2,p=0.5,radius=1"));
  ASSERT_EQ(t.groups(), 2);
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.flows[0].src, 0);
  EXPECT_EQ(t.flows[0].dst, 1);
  EXPECT_DOUBLE_EQ(t.flows[0].Bps, 64 * (1 - std::pow(0.5, 64)) * 10 * 4);
  // Sparse connections: 64 * (1 - 0.98^64) = 46.4 neurons of 64 reach the group.
  const MeshTraffic sparse = build_snn_traffic(parse_snn_spec("snn:layered:128:layers=2,radius=1"));
  EXPECT_NEAR(sparse.flows[0].Bps / 40, 46.43, 0.01);
}

TEST(Snn, TopologiesConnectAsDescribed) {
  // Layered: feed-forward to the next layer and lateral within the window, never back.
  const MeshTraffic layered = build_snn_traffic(parse_snn_spec("snn:layered:64000:layers=4,radius=0.1"));
  const int per_layer = layered.groups() / 4;
  for (const auto& f : layered.flows) {
    const int ls = f.src / per_layer, ld = f.dst / per_layer;
    EXPECT_TRUE(ld == ls || ld == ls + 1) << f.src << " -> " << f.dst;
    if (ld == ls) EXPECT_LE(std::abs(f.src - f.dst), static_cast<int>(0.1 * per_layer)) << "lateral within the window";
  }
  // Random: exactly `fanout` distinct targets per group, the same for the same seed.
  const SnnSpec rs = parse_snn_spec("snn:random:20000:fanout=8,seed=3");
  const MeshTraffic random = build_snn_traffic(rs);
  std::map<int, std::set<int>> targets;
  for (const auto& f : random.flows) {
    EXPECT_NE(f.src, f.dst);
    targets[f.src].insert(f.dst);
  }
  ASSERT_EQ(static_cast<int>(targets.size()), random.groups());
  for (const auto& [g, set] : targets) EXPECT_EQ(set.size(), 8u) << g;
  const MeshTraffic again = build_snn_traffic(rs);
  ASSERT_EQ(again.flows.size(), random.flows.size());
  for (size_t i = 0; i < again.flows.size(); ++i) EXPECT_EQ(again.flows[i].dst, random.flows[i].dst);
  // Lattice: a ring, so the first group reaches the last ones.
  const MeshTraffic ring = build_snn_traffic(parse_snn_spec("snn:lattice:64000:radius=0.05"));
  bool wraps = false;
  for (const auto& f : ring.flows) wraps = wraps || (f.src == 0 && f.dst > ring.groups() * 3 / 4 && f.dst < ring.groups());
  EXPECT_TRUE(wraps);
}

TEST(Snn, OneStepIsAGraphEveryLayerTakes) {
  const OpGraph g = load_graph("snn:layered:4000:layers=4");
  const MeshTraffic t = build_snn_traffic(parse_snn_spec("snn:layered:4000:layers=4"));
  ASSERT_EQ(g.num_ops(), 2 * t.groups());
  EXPECT_EQ(g.num_edges(), static_cast<int>(t.flows.size()));
  EXPECT_NO_THROW(g.validate());
  for (int i = 0; i < t.groups(); ++i) {
    EXPECT_EQ(g.op(i).colocation_group, g.op(t.groups() + i).colocation_group);
    EXPECT_EQ(g.op(i).type, "NeuronUpdate");
    EXPECT_DOUBLE_EQ(g.op(i).param_bytes, 16 * t.group_neurons[static_cast<size_t>(i)]);
  }
  // An edge carries one millisecond of its flow.
  EXPECT_DOUBLE_EQ(g.edge(0).bytes, t.flows[0].Bps * 1e-3);
}

TEST(Snn, BadSpecsNameTheField) {
  const std::pair<const char*, const char*> bad[] = {
      {"snn:mesh:1000", "topology 'mesh' unknown"},
      {"snn:layered", "expected snn:TOPOLOGY:NEURONS"},
      {"snn:layered:0", "field 'neurons'"},
      {"snn:layered:1e9", "field 'neurons'"},
      {"snn:layered:1000:p=2", "field 'p' must be in (0, 1]"},
      {"snn:layered:1000:group=0", "field 'group'"},
      {"snn:layered:1000:colour=3", "unknown field 'colour'"},
      {"snn:layered:1000:rate", "is not key=value"},
      {"snn:layered:4:layers=8", "cannot make 8 layers"}};
  for (const auto& [spec, message] : bad) {
    SCOPED_TRACE(spec);
    testing::expect_error<ConfigError>([&] { parse_snn_spec(spec); }, {spec, message});
  }
}

}  // namespace
}  // namespace aware
