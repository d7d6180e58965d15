// The analytic simulator with a measured cost table (option costs=FILE): the
// table's times replace the roofline, ops it lacks keep theirs, and the device
// order follows the table. Cases and their hand-worked times: cost_table_cases.h.
#include <gtest/gtest.h>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "sim/analytic/analytic_simulator.h"
#include "sim/cost_table_cases.h"
#include "test_graphs.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

using testing::star_cluster;

std::unique_ptr<AnalyticSimulator> with_table(const CostTable& table, const std::string& file,
                                              const std::string& mode = "contention") {
  return AnalyticSimulator::from_options(
      {{"mode", mode}, {"costs", testing::write_test_table(table, file)}});
}

TEST(AnalyticCostTable, ChainOnOneDeviceIsTheSumOfTheTable) {
  const OpGraph g = testing::roofline_chain();
  const Cluster c = star_cluster(1);
  const Placement p({0, 0, 0});
  EXPECT_DOUBLE_EQ(AnalyticSimulator().evaluate(g, c, p).step_time_us, 6);  // roofline 3 x 2 us

  auto sim = with_table(testing::chain_table(), "analytic-chain.costs.json");
  const StepResult r = sim->evaluate(g, c, p);
  EXPECT_DOUBLE_EQ(r.step_time_us, 7 + 11 + 13);
  EXPECT_DOUBLE_EQ(r.device_busy_us[0], 31);
}

TEST(AnalyticCostTable, PlacetoModeRunsEachOpForItsTableTime) {
  auto sim = with_table(testing::chain_table(), "analytic-placeto.costs.json", "placeto");
  Trace t;
  sim->evaluate(testing::roofline_chain(), star_cluster(1), Placement({0, 0, 0}), &t);
  ASSERT_EQ(t.ops.size(), 3u);
  EXPECT_DOUBLE_EQ(t.ops[0].end_us - t.ops[0].start_us, 7);
  EXPECT_DOUBLE_EQ(t.ops[1].end_us - t.ops[1].start_us, 11);
  EXPECT_DOUBLE_EQ(t.ops[2].end_us - t.ops[2].start_us, 13);
}

TEST(AnalyticCostTable, OpMissingFromTheTableKeepsItsRoofline) {
  auto sim = with_table(testing::chain_table_without_c(), "analytic-partial.costs.json");
  Trace t;
  const StepResult r =
      sim->evaluate(testing::roofline_chain(), star_cluster(1), Placement({0, 0, 0}), &t);
  EXPECT_DOUBLE_EQ(r.step_time_us, 7 + 11 + 2);
  EXPECT_DOUBLE_EQ(t.ops[2].end_us - t.ops[2].start_us, 2);
}

TEST(AnalyticCostTable, DeviceOrderFollowsTheTable) {
  const OpGraph g = testing::device_order_graph();
  const Cluster c = star_cluster(2);
  const Placement p({0, 1, 0, 0});
  EXPECT_DOUBLE_EQ(AnalyticSimulator().evaluate(g, c, p).step_time_us, 223);

  auto sim = with_table(testing::device_order_table(), "analytic-order.costs.json");
  Trace t;
  const StepResult r = sim->evaluate(g, c, p, &t);
  EXPECT_DOUBLE_EQ(r.step_time_us, 170);
  EXPECT_DOUBLE_EQ(t.ops[3].start_us, 100);  // d first
  EXPECT_DOUBLE_EQ(t.ops[2].start_us, 120);  // then c
}

TEST(AnalyticCostTable, RegisteredOptionDescribedAndKeptByClones) {
  register_builtins();
  const std::string path =
      testing::write_test_table(testing::chain_table(), "analytic-registry.costs.json");
  auto evaluator = EvaluatorRegistry::instance().create("analytic", {{"costs", path}});
  EXPECT_NE(evaluator->describe().find(path), std::string::npos) << evaluator->describe();
  EXPECT_NE(evaluator->describe().find("3 entries"), std::string::npos) << evaluator->describe();
  EXPECT_EQ(AnalyticSimulator().describe().find("op costs"), std::string::npos);
  auto clone = evaluator->clone();
  const Placement p({0, 0, 0});
  EXPECT_DOUBLE_EQ(clone->evaluate(testing::roofline_chain(), star_cluster(1), p).step_time_us, 31);
}

TEST(AnalyticCostTable, BadTableNamesTheOptionAndTheFile) {
  const std::string missing = std::string(AWARE_TEST_TMPDIR) + "/no-such.costs.json";
  testing::expect_error<ParseError>(
      [&] {
        AnalyticSimulator::from_options({{"costs", missing}});
      },
      {"evaluator 'analytic'", "option 'costs'", missing});
}

}  // namespace
}  // namespace aware
