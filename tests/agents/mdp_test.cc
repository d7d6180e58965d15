// The placement MDP the Python environment drives (agents/rl/mdp.h): hand-computed
// episodes on the diamond, colocation units, budgets, and incremental per-node
// evaluations against full ones on generated graphs.
#include <gtest/gtest.h>

#include "agents/rl/mdp.h"
#include "core/errors.h"
#include "core/rng.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::diamond_graph;
using testing::zero_latency_star;

std::unique_ptr<Evaluator> analytic() { return EvaluatorRegistry::instance().create("analytic"); }

rl::MdpOptions per_node(const std::string& start = "zero", long long budget = 0) {
  rl::MdpOptions o;
  o.mode = rl::MdpMode::kPerNode;
  o.start = start;
  o.budget_evals = budget;
  return o;
}

// Diamond a(10) -> {b(20), c(30)} -> d(5), 1000-byte edges, 1 GB/s links without
// latency: all on one device 65 µs; c alone on device 1: a 0-10, c's input 10-11,
// c 11-41, its output 41-42, d 42-47: 47 µs.
TEST(PlacementMdp, OneShotEpisodeOnTheDiamondByHand) {
  const OpGraph g = diamond_graph();
  const Cluster c = zero_latency_star(2);
  rl::PlacementMdp mdp(g, c, analytic(), {});
  EXPECT_EQ(mdp.num_units(), 4);
  mdp.reset(1);
  const rl::MdpStep s = mdp.step_placement({0, 0, 1, 0});
  EXPECT_TRUE(s.evaluated && s.terminated && !s.truncated);
  EXPECT_DOUBLE_EQ(s.step_us, 47.0);
  EXPECT_DOUBLE_EQ(s.reward, -47e-6);
  EXPECT_TRUE(mdp.done());
  EXPECT_THROW(mdp.step_placement({0, 0, 0, 0}), ConfigError);
  mdp.reset(2);
  EXPECT_DOUBLE_EQ(mdp.step_placement({0, 0, 0, 0}).step_us, 65.0);
  EXPECT_DOUBLE_EQ(mdp.env().best_step_us(), 47.0);
  EXPECT_EQ(mdp.env().evaluations(), 2);
}

TEST(PlacementMdp, PerNodeRewardsAreTheGainsAndSumToStartMinusEnd) {
  const OpGraph g = diamond_graph();
  const Cluster c = zero_latency_star(2);
  rl::PlacementMdp mdp(g, c, analytic(), per_node("zero"));
  mdp.reset(3);
  EXPECT_DOUBLE_EQ(mdp.current_penalised_us(), 65.0);
  EXPECT_EQ(mdp.unit_order(), (std::vector<int>{0, 1, 2, 3}));
  const std::vector<int> devices = {0, 0, 1, 0};
  std::vector<double> rewards;
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(mdp.current_unit(), i);
    const rl::MdpStep s = mdp.step_device(devices[i]);
    EXPECT_EQ(s.terminated, i == 3);
    rewards.push_back(s.reward);
  }
  EXPECT_EQ(rewards, (std::vector<double>{0, 0, 18e-6, 0}));
  EXPECT_EQ(mdp.placement().device_of_op, devices);
  EXPECT_EQ(mdp.env().evaluations(), 5);
  EXPECT_EQ(mdp.env().move_evaluations(), 4);
}

TEST(PlacementMdp, ColocatedOpsAreOneDecision) {
  OpGraph g = diamond_graph();
  g.mutable_op(1).colocation_group = "bc";
  g.mutable_op(2).colocation_group = "bc";
  const Cluster c = zero_latency_star(2);
  rl::PlacementMdp mdp(g, c, analytic(), per_node("zero"));
  EXPECT_EQ(mdp.num_units(), 3);
  EXPECT_EQ(mdp.unit_of_op(), (std::vector<int>{0, 1, 1, 2}));
  mdp.reset(1);
  mdp.step_device(0);
  mdp.step_device(1);  // b and c together
  EXPECT_EQ(mdp.placement().device_of_op, (std::vector<int>{0, 1, 1, 0}));
  rl::PlacementMdp one_shot(g, c, analytic(), {});
  one_shot.reset(1);
  EXPECT_THROW(one_shot.step_placement({0, 1, 1, 0}), ConfigError);  // a device per unit: 3
  const rl::MdpStep s = one_shot.step_placement({1, 0, 1});
  EXPECT_TRUE(s.evaluated);
  EXPECT_EQ(s.step_us, one_shot.env().last_step_us());
  EXPECT_EQ(one_shot.placement().device_of_op, (std::vector<int>{1, 0, 0, 1}));
}

TEST(PlacementMdp, BudgetTruncatesWithoutEvaluating) {
  const OpGraph g = diamond_graph();
  const Cluster c = zero_latency_star(2);
  rl::PlacementMdp mdp(g, c, analytic(), per_node("zero", 3));
  mdp.reset(1);                                    // 1
  EXPECT_FALSE(mdp.step_device(1).truncated);      // 2
  const rl::MdpStep spent = mdp.step_device(1);    // 3: the budget is spent mid-episode
  EXPECT_TRUE(spent.truncated && spent.evaluated && !spent.terminated);
  EXPECT_THROW(mdp.step_device(0), ConfigError);  // the episode ended
  mdp.reset(2);                                    // nothing left to evaluate the start
  const rl::MdpStep none = mdp.step_device(0);
  EXPECT_TRUE(none.truncated && !none.evaluated);
  EXPECT_EQ(none.reward, 0);
  EXPECT_EQ(mdp.env().evaluations(), 3);
}

TEST(PlacementMdp, BadSettingsAndActionsAreRefused) {
  const OpGraph g = diamond_graph();
  const Cluster c = zero_latency_star(2);
  EXPECT_THROW(rl::parse_mdp_mode("sideways"), ConfigError);
  EXPECT_THROW(rl::parse_penalty_kind("none"), ConfigError);
  EXPECT_THROW(rl::PlacementMdp(g, c, analytic(), per_node("best")), ConfigError);
  rl::PlacementMdp mdp(g, c, analytic(), per_node("random"));
  EXPECT_THROW(mdp.step_device(0), ConfigError);  // before reset
  mdp.reset(1);
  EXPECT_THROW(mdp.step_device(2), ConfigError);
  EXPECT_THROW(mdp.step_placement({0, 0, 0, 0}), ConfigError);  // the wrong mode
}

// Property: on generated graphs, every per-node step's incremental evaluation equals
// a full evaluation of the placement it reached.
TEST(PlacementMdp, PerNodeMovesEqualFullEvaluations) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const OpGraph g = testing::layered_dag(40, seed);
    const Cluster c = testing::star_cluster(3);
    rl::PlacementMdp mdp(g, c, analytic(), per_node("random"));
    auto full = analytic();
    mdp.reset(seed);
    SplitMixRng rng(seed);
    while (!mdp.done()) {
      const rl::MdpStep s = mdp.step_device(rng.below(3));
      ASSERT_TRUE(s.evaluated);
      EXPECT_EQ(s.step_us, full->evaluate(g, c, mdp.placement()).step_time_us) << "seed " << seed;
    }
  }
}

TEST(OpFeatures, ColumnsAreScaledToTheUnitInterval) {
  const OpGraph g = diamond_graph();
  const Cluster c = zero_latency_star(2);
  const std::vector<float> f = rl::op_feature_matrix(g, c);
  ASSERT_EQ(f.size(), 4u * rl::kOpFeatureColumns);
  // compute time column: 10, 20, 30, 5 over the largest (30)
  EXPECT_FLOAT_EQ(f[0 * rl::kOpFeatureColumns], 10.0f / 30);
  EXPECT_FLOAT_EQ(f[2 * rl::kOpFeatureColumns], 1.0f);
  // depth: a 0, b 1, c 1, d 2 (over 2)
  EXPECT_FLOAT_EQ(f[3 * rl::kOpFeatureColumns + 5], 1.0f);
  EXPECT_FLOAT_EQ(f[1 * rl::kOpFeatureColumns + 5], 0.5f);
  EXPECT_EQ(rl::op_feature_names().size(), static_cast<std::size_t>(rl::kOpFeatureColumns));
}

}  // namespace
}  // namespace aware
