// The 2-D mesh: the Hilbert curve over it, XY routes and hops by hand, the
// cost of a mapping by hand, and the mesh as a cluster (routes through routers).
#include <algorithm>
#include <cstdlib>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/mesh.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

void expect_curve(int side) {
  const std::vector<int> order = hilbert_order(side, side);
  ASSERT_EQ(static_cast<int>(order.size()), side * side);
  EXPECT_EQ(std::set<int>(order.begin(), order.end()).size(), order.size()) << "every core once";
  EXPECT_EQ(order.front(), 0) << "starts in a corner";
  MeshSpec mesh;
  mesh.width = mesh.height = side;
  for (size_t i = 1; i < order.size(); ++i) EXPECT_EQ(mesh_hops(mesh, order[i - 1], order[i]), 1) << side << ": step " << i;
}

TEST(Mesh, HilbertOrderIsTheCurve) {
  // The 4x4 curve, written out (x, y): it visits each 2x2 quadrant whole, in
  // turn, from (0,0) to (3,0).
  const int expected[16][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}, {0, 2}, {0, 3}, {1, 3}, {1, 2},
                               {2, 2}, {2, 3}, {3, 3}, {3, 2}, {3, 1}, {2, 1}, {2, 0}, {3, 0}};
  const std::vector<int> order = hilbert_order(4, 4);
  for (int d = 0; d < 16; ++d) EXPECT_EQ(order[d], expected[d][1] * 4 + expected[d][0]) << d;
  for (int side : {2, 4, 8, 16, 64}) expect_curve(side);
  // Other shapes: every core once, on the covering square's curve.
  const std::vector<int> odd = hilbert_order(3, 5);
  ASSERT_EQ(odd.size(), 15u);
  EXPECT_EQ(std::set<int>(odd.begin(), odd.end()).size(), 15u);
  for (int c : odd) EXPECT_TRUE(c >= 0 && c < 15);
}

TEST(Mesh, XyRoutesAndHopsByHand) {
  MeshSpec mesh;
  mesh.width = 4;
  mesh.height = 3;
  // (0,0) -> (2,1): +x at core 0, +x at core 1, then +y at core 2.
  EXPECT_EQ(mesh_route(mesh, 0, 6), (std::vector<int>{0, 4, 10}));
  EXPECT_EQ(mesh_hops(mesh, 0, 6), 3);
  // (3,2) -> (1,0): -x at core 11, -x at core 10, then -y at core 9, -y at core 5.
  EXPECT_EQ(mesh_route(mesh, 11, 1), (std::vector<int>{4 * 11 + 1, 4 * 10 + 1, 4 * 9 + 3, 4 * 5 + 3}));
  EXPECT_EQ(mesh_hops(mesh, 11, 1), 4);
  EXPECT_TRUE(mesh_route(mesh, 5, 5).empty());
}

TEST(Mesh, CostOfAMappingByHand) {
  MeshSpec mesh;
  mesh.width = mesh.height = 2;
  mesh.capacity = 10;
  mesh.link_Bps = 100;
  MeshTraffic t;
  t.group_neurons = {5, 5, 5};
  t.flows = {{0, 1, 10}, {1, 2, 20}, {0, 2, 1}};
  // Groups on cores 0 (0,0), 1 (1,0), 3 (1,1).
  const MeshCost c = mesh_cost(mesh, t, {0, 1, 3});
  EXPECT_DOUBLE_EQ(c.traffic_hops, 10 * 1 + 20 * 1 + 1 * 2);
  // 0 -> 1 and 0 -> 3 share core 0's +x link; 1 -> 3 and 0 -> 3 share core 1's +y.
  const std::vector<double> load = mesh_link_loads(mesh, t, {0, 1, 3});
  EXPECT_DOUBLE_EQ(load[0], 11);
  EXPECT_DOUBLE_EQ(load[4 * 1 + 2], 21);
  EXPECT_DOUBLE_EQ(c.max_link_Bps, 21);
  EXPECT_DOUBLE_EQ(c.max_link_utilisation, 0.21);
  EXPECT_DOUBLE_EQ(c.mean_link_Bps, 32.0 / 8);  // 8 directed links in a 2x2 mesh
  EXPECT_EQ(c.cores_used, 3);
  EXPECT_DOUBLE_EQ(c.total_Bps, 31);
  // Two groups on one core: 10 neurons fit exactly; three do not.
  EXPECT_DOUBLE_EQ(mesh_cost(mesh, t, {0, 0, 1}).traffic_hops, 20 + 1);
  try {
    mesh_cost(mesh, t, {2, 2, 2});
    ADD_FAILURE() << "over capacity accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("core (0,1) holds 15 neurons, over its capacity of 10"), std::string::npos) << e.what();
  }
  EXPECT_THROW(mesh_cost(mesh, t, {0, 1, 4}), ConfigError);
  EXPECT_THROW(mesh_cost(mesh, t, {0, 1}), ConfigError);
}

TEST(Mesh, SpecsParseAndBadOnesNameTheField) {
  const MeshSpec m = parse_mesh_spec("mesh:64x32,capacity=1024,link_Bps=2e9");
  EXPECT_EQ(m.width, 64);
  EXPECT_EQ(m.height, 32);
  EXPECT_DOUBLE_EQ(m.capacity, 1024);
  EXPECT_DOUBLE_EQ(m.link_Bps, 2e9);
  EXPECT_EQ(m.name(), "mesh:64x32,capacity=1024,link_Bps=2e+09");
  EXPECT_EQ(parse_mesh_spec(m.name()).capacity, 1024);
  const std::pair<const char*, const char*> bad[] = {{"mesh:0x4", "size '0x4'"},
                                                     {"mesh:4x", "size '4x'"},
                                                     {"mesh:4x4,capacity=-1", "field 'capacity' must be a positive number"},
                                                     {"mesh:4x4,speed=2", "unknown field 'speed'"},
                                                     {"mesh:4x4,capacity", "is not KEY=VALUE"},
                                                     {"mesh:2000x2", "1 <= W, H <= 1024"}};
  for (const auto& [spec, message] : bad) {
    SCOPED_TRACE(spec);
    testing::expect_error<ConfigError>([&] { parse_mesh_spec(spec); }, {spec, message});
  }
}

TEST(Mesh, AsAClusterRoutesXyThroughRouters) {
  const Cluster c = load_cluster("preset:mesh:3x3");
  ASSERT_TRUE(c.is_mesh());
  EXPECT_EQ(c.num_devices(), 9);
  EXPECT_EQ(c.mesh_width(), 3);
  // c0_0 -> c2_1: its router, two steps along x, one along y, the core.
  std::vector<std::string> names;
  for (const Hop& h : c.route(0, 5)) names.push_back(c.link(h.link).name);
  EXPECT_EQ(names, (std::vector<std::string>{"local0", "x0_0", "x1_0", "y2_0", "local5"}));
  // Back the other way: along x first again (from c2_1 to c0_0: x then y).
  names.clear();
  for (const Hop& h : c.route(5, 0)) names.push_back(c.link(h.link).name);
  EXPECT_EQ(names, (std::vector<std::string>{"local5", "x1_1", "x0_1", "y0_0", "local0"}));
  const MeshSpec spec = parse_mesh_spec("mesh:3x3");
  EXPECT_DOUBLE_EQ(c.route_latency_us(0, 5), 3 * spec.latency_us);
  EXPECT_DOUBLE_EQ(c.route_bandwidth_Bps(0, 5), spec.link_Bps);
  // The file format keeps the routing: the same routes after a round trip.
  const Cluster back = cluster_from_json(cluster_to_json(c), "round trip");
  ASSERT_TRUE(back.is_mesh());
  for (int s = 0; s < 9; ++s)
    for (int d = 0; d < 9; ++d) {
      ASSERT_EQ(back.route(s, d).size(), c.route(s, d).size());
      for (size_t k = 0; k < c.route(s, d).size(); ++k) EXPECT_EQ(back.route(s, d)[k].channel(), c.route(s, d)[k].channel());
    }
  nlohmann::json bad = cluster_to_json(c);
  bad["routing"]["kind"] = "west-first";
  EXPECT_THROW(cluster_from_json(bad, "bad"), ParseError);
  bad["routing"] = {{"kind", "xy"}, {"width", 4}, {"height", 3}};
  try {
    cluster_from_json(bad, "bad.json");
    ADD_FAILURE();
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("needs 12 devices"), std::string::npos) << e.what();
  }
  // Meshes above the cluster form's limit are refused, naming it.
  try {
    load_cluster("preset:mesh:200x100");
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 16384 cores"), std::string::npos) << e.what();
  }
}

// A 64x64 mesh (16.7 million core pairs) as a cluster: its routes are made as
// asked for, each the XY path by hand (|dx| + |dy| router hops and the two
// core links), the same whichever thread asks first.
TEST(Mesh, ALargeMeshRoutesOnDemand) {
  const MeshSpec spec = parse_mesh_spec("mesh:64x64");
  const Cluster c = make_mesh_cluster(spec);
  ASSERT_EQ(c.num_devices(), 4096);
  const auto expected_hops = [](int s, int d) { return std::abs(s % 64 - d % 64) + std::abs(s / 64 - d / 64) + 2; };
  EXPECT_EQ(static_cast<int>(c.route(0, 4095).size()), 63 + 63 + 2);
  EXPECT_EQ(c.link(c.route(0, 4095)[1].link).name, "x0_0") << "along x first";
  EXPECT_EQ(c.link(c.route(0, 4095)[64].link).name, "y63_0") << "then along y";
  EXPECT_NEAR(c.route_latency_us(0, 4095), 126 * spec.latency_us, 1e-9);  // summed hop by hop
  EXPECT_DOUBLE_EQ(c.route_bandwidth_Bps(0, 4095), spec.link_Bps);
  EXPECT_DOUBLE_EQ(c.slowest_route_bandwidth_Bps(), spec.link_Bps);
  EXPECT_TRUE(c.route(77, 77).empty());
  // Pairs asked for from four threads at once, then again from this one.
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < 2000; ++i) pairs.push_back({(i * 7919) % 4096, (i * 104729 + 13) % 4096});
  std::vector<std::vector<std::vector<int>>> seen(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (const auto& [s, d] : pairs) {
        std::vector<int> channels;
        for (const Hop& h : c.route(s, d)) channels.push_back(h.channel());
        seen[static_cast<size_t>(t)].push_back(std::move(channels));
      }
    });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [s, d] = pairs[i];
    const int hops = s == d ? 0 : expected_hops(s, d);
    ASSERT_EQ(static_cast<int>(c.route(s, d).size()), hops) << s << " -> " << d;
    for (int t = 0; t < 4; ++t) EXPECT_EQ(seen[static_cast<size_t>(t)][i], seen[0][i]) << s << " -> " << d;
  }
  // A copy routes the same.
  Cluster copy = c;
  EXPECT_EQ(copy.route(5, 4000).size(), c.route(5, 4000).size());
}

}  // namespace
}  // namespace aware
