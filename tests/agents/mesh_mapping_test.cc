// Mapping spiking networks onto a mesh: every mapping respects capacity,
// force-directed never raises the cost it reports, networks that do not fit are
// refused in one line, and the placers work through the Placer interface.
#include <gtest/gtest.h>

#include "agents/baselines/mesh_mapping.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "datasets/load.h"
#include "datasets/snn.h"
#include "tests/expect_error.h"
#include "tests/test_graphs.h"

namespace aware::baselines {
namespace {

struct Case {
  const char* network;
  const char* mesh;
};
const Case kCases[] = {{"snn:layered:20000", "mesh:12x12"},
                       {"snn:lattice:30000:radius=0.02", "mesh:16x16"},
                       {"snn:random:15000:fanout=12", "mesh:8x8"},
                       {"snn:layered:5000:group=100", "mesh:5x7,capacity=300"}};

TEST(MeshMapping, EveryMappingRespectsCapacity) {
  for (const Case& c : kCases) {
    const MeshSpec mesh = parse_mesh_spec(c.mesh);
    const MeshTraffic t = build_snn_traffic(parse_snn_spec(c.network));
    std::vector<int> fd = map_hilbert(mesh, t);
    refine_force_directed(mesh, t, fd);
    for (const auto& [name, map] : std::vector<std::pair<std::string, std::vector<int>>>{
             {"sequential", map_sequential(mesh, t)},
             {"random", map_random(mesh, t, 7)},
             {"metis", map_metis(mesh, t, 7)},
             {"hilbert", map_hilbert(mesh, t)},
             {"force-directed", fd}}) {
      ASSERT_EQ(static_cast<int>(map.size()), t.groups()) << name;
      std::vector<double> load(static_cast<size_t>(mesh.cores()), 0);
      for (int g = 0; g < t.groups(); ++g) load[static_cast<size_t>(map[static_cast<size_t>(g)])] += t.group_neurons[static_cast<size_t>(g)];
      for (double l : load) EXPECT_LE(l, mesh.capacity) << c.network << " " << name;
      EXPECT_NO_THROW(mesh_cost(mesh, t, map)) << c.network << " " << name;
    }
  }
}

TEST(MeshMapping, ForceDirectedNeverRaisesItsCost) {
  for (const Case& c : kCases) {
    const MeshSpec mesh = parse_mesh_spec(c.mesh);
    const MeshTraffic t = build_snn_traffic(parse_snn_spec(c.network));
    for (std::vector<int> start : {map_hilbert(mesh, t), map_random(mesh, t, 3), map_sequential(mesh, t)}) {
      const double before = mesh_cost(mesh, t, start).traffic_hops;
      const ForceDirectedStats st = refine_force_directed(mesh, t, start);
      ASSERT_GE(st.cost_after_pass.size(), 2u);
      EXPECT_DOUBLE_EQ(st.cost_after_pass.front(), before);
      for (size_t i = 1; i < st.cost_after_pass.size(); ++i)
        EXPECT_LE(st.cost_after_pass[i], st.cost_after_pass[i - 1] * (1 + 1e-12)) << c.network << " pass " << i;
      EXPECT_DOUBLE_EQ(mesh_cost(mesh, t, start).traffic_hops, st.cost_after_pass.back());
    }
    // From a random start it finds real gains.
    std::vector<int> random = map_random(mesh, t, 3);
    const double r0 = mesh_cost(mesh, t, random).traffic_hops;
    const ForceDirectedStats st = refine_force_directed(mesh, t, random);
    EXPECT_LT(mesh_cost(mesh, t, random).traffic_hops, 0.9 * r0) << c.network;
    EXPECT_GT(st.moves + st.swaps, 0);
  }
}

TEST(MeshMapping, NetworksThatDoNotFitAreRefused) {
  const MeshTraffic big = build_snn_traffic(parse_snn_spec("snn:layered:100000"));
  testing::expect_error<ConfigError>(
      [&] { map_hilbert(parse_mesh_spec("mesh:4x4"), big); },
      {"the network has 100000 neurons, the mesh mesh:4x4 holds 4096"});
  const MeshTraffic fat = build_snn_traffic(parse_snn_spec("snn:layered:4800:group=300"));
  testing::expect_error<ConfigError>([&] { map_sequential(parse_mesh_spec("mesh:8x8"), fat); },
                                     {"'layer0/g0' has 300 neurons"});
}

TEST(MeshMapping, PlacersKeepGroupsTogetherWithinCapacity) {
  const OpGraph g = load_graph("snn:lattice:8000");
  const Cluster mesh = load_cluster("preset:mesh:6x6");
  for (const char* name : {"hilbert", "force-directed"}) {
    PlaceContext context;
    const Placement p = PlacerRegistry::instance().create(name)->place(g, mesh, context);
    ASSERT_EQ(p.size(), g.num_ops());
    std::vector<double> neurons(36, 0);
    const int groups = g.num_ops() / 2;
    for (int i = 0; i < groups; ++i) {
      EXPECT_EQ(p[i], p[groups + i]) << name << ": a group's update and synapse ops share a core";
      neurons[static_cast<size_t>(p[i])] += g.op(i).param_bytes / 16;
    }
    for (double n : neurons) EXPECT_LE(n, 256) << name;
    // The contention simulator scores it: one biological step.
    const StepResult step = EvaluatorRegistry::instance().create("analytic")->evaluate(g, mesh, p);
    EXPECT_TRUE(step.feasible) << step.infeasible_reason;
    EXPECT_GT(step.step_time_us, 0);
  }
  // On an ordinary cluster the devices are a row, each with an even share.
  PlaceContext context;
  const Placement p = PlacerRegistry::instance().create("force-directed")->place(g, testing::star_cluster(4), context);
  EXPECT_EQ(p.size(), g.num_ops());
}

}  // namespace
}  // namespace aware::baselines
