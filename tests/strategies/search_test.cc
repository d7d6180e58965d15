// Search over strategies and the place:METHOD spec.
#include <gtest/gtest.h>

#include "strategies/search.h"

#include "tests/strategies/strategy_test_support.h"

namespace aware {
namespace {

using namespace strategy_tests;
using testing::timed_op;

// Every search case: mlp2 on fast_star(4), scored by the analytic simulator,
// with the options each test sets.
class StrategySearch : public ::testing::Test {
 protected:
  const OpGraph g = mlp2();
  const Cluster c = fast_star(4);
  std::unique_ptr<Evaluator> sim = EvaluatorRegistry::instance().create("analytic");
  StrategySearchOptions options;
};

TEST_F(StrategySearch, TriesEveryCandidateAndKeepsTheFastest) {
  options.methods = {"round-robin", "m-etf"};
  options.collectives = {"ring", "ps"};
  const StrategySearchResult r = search_strategies(g, c, *sim, options);
  // place x2, dp:{2,4} x {ring, ps}, hybrid:2x{round-robin, m-etf}, pipeline:{2,4}.
  ASSERT_EQ(r.candidates.size(), 10u);
  EXPECT_EQ(r.evaluations, 10);
  ASSERT_GE(r.best, 0);
  for (const StrategyCandidate& cand : r.candidates) {
    if (cand.status == "ok") EXPECT_LE(r.best_step_us, cand.step_time_us) << cand.spec;
  }
  // dp:4 with the ring (72 us by hand) is a candidate, so the best is at most that;
  // the winner's rewrite is what the result holds.
  EXPECT_LE(r.best_step_us, 72 + 1e-6);
  EXPECT_NEAR(step_us(r.best_strategy, c), r.best_step_us, 1e-9);
}

TEST_F(StrategySearch, StopsAtTheBudgetAndRefinesTheWinner) {
  options.methods = {"round-robin"};
  options.collectives = {"ring"};
  options.budget_evals = 3;
  const StrategySearchResult cut = search_strategies(g, c, *sim, options);
  EXPECT_EQ(cut.candidates.size(), 3u);
  EXPECT_EQ(cut.evaluations, 3);

  options.budget_evals = 0;
  options.refine = "anneal";
  const StrategySearchResult refined = search_strategies(g, c, *sim, options);
  ASSERT_GE(refined.refined_from_us, 0);
  EXPECT_LE(refined.best_step_us, refined.refined_from_us);
  EXPECT_NEAR(step_us(refined.best_strategy, c), refined.best_step_us, 1e-9);
  EXPECT_GT(refined.evaluations, static_cast<long long>(refined.candidates.size()));

  options.refine = "no-such-placer";
  EXPECT_THROW(search_strategies(g, c, *sim, options), ConfigError);
  options.refine.clear();
  options.collectives = {"mesh"};
  EXPECT_THROW(search_strategies(g, c, *sim, options), ConfigError);
}

TEST_F(StrategySearch, ABudgetIsKeptAndTheUntriedAreListed) {
  options.methods = {"round-robin"};
  options.collectives = {"ring", "ps"};
  options.budget_evals = 3;
  const StrategySearchResult cut = search_strategies(g, c, *sim, options);
  // place, dp:{4,2} x {ring, ps}, hybrid:2xround-robin, pipeline:{4,2}: 8 in all.
  EXPECT_EQ(cut.candidates.size() + cut.not_tried.size(), 8u);
  EXPECT_EQ(cut.evaluations, 3);
  // The most parallel of each kind first.
  ASSERT_GE(cut.candidates.size(), 2u);
  EXPECT_EQ(cut.candidates[0].spec, "dp:4,collective=ring");
  EXPECT_EQ(cut.candidates[1].spec, "pipeline:4");

  // A searching method inside the candidates, then the refiner: still the budget.
  options.methods = {"anneal"};
  options.refine = "anneal";
  options.budget_evals = 30;
  const StrategySearchResult searched = search_strategies(g, c, *sim, options);
  EXPECT_LE(searched.evaluations, 30);
  EXPECT_TRUE(searched.not_tried.empty());

  options.refine = "m-etf";  // does not search: nothing to refine with
  EXPECT_THROW(search_strategies(g, c, *sim, options), ConfigError);
  options.refine.clear();
  options.collectives.clear();
  EXPECT_THROW(search_strategies(g, c, *sim, options), ConfigError);
}

TEST(StrategySpec, CheckRefusesWhatNoGraphCouldTake) {
  for (const std::string& name : StrategyRegistry::instance().names()) {
    const StrategyKind kind = StrategyRegistry::instance().get(name);
    EXPECT_NO_THROW(check_strategy_spec(kind.example)) << kind.example;
    if (!kind.one_replica.empty()) EXPECT_NO_THROW(check_strategy_spec(kind.one_replica)) << kind.one_replica;
  }
  for (const char* bad : {"dp:0", "dp:-2", "dp:2,collective=mesh", "dp:2,bucket_mb=0", "dp:2,overlap=maybe",
                          "hybrid:0xm-etf", "hybrid:2xno-such", "hybrid:2", "bagging:0", "bagging:2,average=2",
                          "pipeline:0", "pipeline:2,micro=0", "mapreduce:0", "mapreduce:2,disk_MBps=0",
                          "single:x", "place:no-such", "dp:99999999999"}) {
    EXPECT_THROW(check_strategy_spec(bad), ConfigError) << bad;
  }
  try {
    check_strategy_spec("dp:99999999999");
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("too large (at most 2147483647"), std::string::npos) << e.what();
  }
}

TEST(StrategySpec, PlaceRunsAPlacerOnTheUnsplitStep) {
  const OpGraph g = mlp2();
  const Cluster c = fast_star(2);
  const StrategyResult r = apply_strategy(g, c, "place:round-robin");
  EXPECT_EQ(r.graph.num_ops(), g.num_ops());
  EXPECT_EQ(r.placement, round_robin_placement(g, c));
  EXPECT_THROW(apply_strategy(g, c, "place"), ConfigError);
  EXPECT_THROW(apply_strategy(g, c, "place:nope"), ConfigError);
}

}  // namespace
}  // namespace aware
