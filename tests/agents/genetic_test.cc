// The genetic placer: never worse than the cheap placers it starts from, within its
// budget, deterministic, and usable inside a hybrid strategy.
#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/placer.h"
#include "strategies/strategy.h"
#include "tests/agents/placer_runs.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::analytic_step_us;
using testing::place_with;

TEST(Genetic, ImprovesOnItsSeedsWithinTheBudget) {
  const OpGraph g = testing::layered_dag(60, 3);
  const Cluster c = testing::star_cluster(4);
  const double seed_best = testing::best_list_schedule_us(g, c);
  const Placement p = place_with("genetic", g, c, 400);
  check_placement(g, c, p);
  EXPECT_LE(analytic_step_us(g, c, p), seed_best);
  EXPECT_EQ(p, place_with("genetic", g, c, 400));  // same seed, same placement
  EXPECT_THROW(place_with("genetic", g, c, 50, 1, {{"population", "1"}}), ConfigError);
  EXPECT_THROW(place_with("genetic", g, c, 50, 1, {{"mutation", "2"}}), ConfigError);
}

TEST(Genetic, SeveralThreadsFindTheOneThreadResult) {
  // Each generation's children are bred first and evaluated as one batch; with only
  // the evaluation budget ending the search, the result is the one-thread one. 137
  // evaluations: the last generation is cut short.
  const OpGraph g = testing::layered_dag(60, 3);
  const Cluster c = testing::star_cluster(4);
  const Placement one = place_with("genetic", g, c, 137);
  for (const char* threads : {"2", "3"})
    EXPECT_EQ(place_with("genetic", g, c, 137, 1, {{"threads", threads}}), one)
        << threads << " threads";
  EXPECT_EQ(
      place_with("genetic", g, c, 137, 1, {{"threads", "2"}, {"population", "7"}, {"elite", "3"}}),
      place_with("genetic", g, c, 137, 1, {{"population", "7"}, {"elite", "3"}}));
  EXPECT_THROW(place_with("genetic", g, c, 50, 1, {{"threads", "0"}}), ConfigError);
}

TEST(Genetic, PlacesTheGroupsOfAHybridStrategy) {
  const OpGraph g = testing::two_layer_mlp_graph();
  const Cluster c = testing::star_cluster(4);
  auto sim = EvaluatorRegistry::instance().create("analytic");
  StrategyContext context;
  context.evaluator = sim.get();
  context.budget_evals = 60;
  const StrategyResult r = apply_strategy(g, c, "hybrid:2xgenetic", context);
  EXPECT_EQ(r.replicas, 2);
  check_placement(r.graph, c, r.placement);
  EXPECT_GT(sim->evaluate(r.graph, c, r.placement).step_time_us, 0);
}

}  // namespace
}  // namespace aware
