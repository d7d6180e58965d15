// The schedule properties on every zoo model and on members of each generated
// family, in both modes, with round-robin and seeded random placements.
#include <gtest/gtest.h>

#include "core/random_dag.h"
#include "datasets/families.h"
#include "datasets/zoo.h"
#include "sim/schedule_checks.h"

namespace aware {
namespace {

void check_graph(const OpGraph& g) {
  const Cluster c = make_cluster_preset("k40x4");
  std::uint64_t state = 11;
  Placement random(std::vector<int>(g.num_ops()));
  for (int op = 0; op < g.num_ops(); ++op) random[op] = uniform_below(state, c.num_devices());
  for (AnalyticMode mode : {AnalyticMode::kContention, AnalyticMode::kPlaceto}) {
    testing::expect_valid_schedule(mode, g, c, round_robin_placement(g, c));
    testing::expect_valid_schedule(mode, g, c, random);
  }
}

class ZooSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooSchedules, AreValid) { check_graph(build_zoo_model(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Zoo, ZooSchedules, ::testing::ValuesIn(zoo_model_names()));

TEST(FamilySchedules, AreValid) {
  for (const std::string& family : family_names())
    for (std::uint64_t seed : {1u, 4u}) check_graph(build_family_graph(family, seed));
}

}  // namespace
}  // namespace aware
