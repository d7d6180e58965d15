// The simgrid evaluator with a measured cost table (option costs=FILE): the
// client reads the table and sends its entries to every worker, whose SimGrid
// execs and analytic device order both use it. Same cases as the analytic ones
// (cost_table_cases.h). Label: simgrid.
#include <gtest/gtest.h>

#include <fstream>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "sim/cost_table_cases.h"
#include "sim/simgrid/simgrid_evaluator.h"
#include "test_graphs.h"
#include "tests/expect_error.h"

namespace aware {
namespace {

using testing::star_cluster;

bool worker_built() {
  try {
    find_simgrid_worker();
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

#define REQUIRE_SIMGRID_WORKER()                                              \
  do {                                                                        \
    if (!worker_built()) GTEST_SKIP() << "aware-simgrid-worker is not built"; \
  } while (0)

std::unique_ptr<SimGridEvaluator> simgrid_with_table(const CostTable& table,
                                                     const std::string& file) {
  return SimGridEvaluator::from_options(
      {{"workers", "1"}, {"timeout_s", "30"}, {"costs", testing::write_test_table(table, file)}});
}

// SimGrid times are clock differences rounded to 1e-3 us.
constexpr double kTolUs = 1e-6;

TEST(SimGridCostTable, ChainOnOneDeviceIsTheSumOfTheTable) {
  REQUIRE_SIMGRID_WORKER();
  auto sim = simgrid_with_table(testing::chain_table(), "simgrid-chain.costs.json");
  const StepResult r =
      sim->evaluate(testing::roofline_chain(), star_cluster(1), Placement({0, 0, 0}));
  EXPECT_NEAR(r.step_time_us, 7 + 11 + 13, kTolUs);
  EXPECT_NEAR(r.device_busy_us[0], 31, kTolUs);
}

TEST(SimGridCostTable, OpMissingFromTheTableKeepsItsRoofline) {
  REQUIRE_SIMGRID_WORKER();
  auto sim = simgrid_with_table(testing::chain_table_without_c(), "simgrid-partial.costs.json");
  Trace t;
  const StepResult r =
      sim->evaluate(testing::roofline_chain(), star_cluster(1), Placement({0, 0, 0}), &t);
  EXPECT_NEAR(r.step_time_us, 7 + 11 + 2, kTolUs);
  ASSERT_EQ(t.ops.size(), 3u);
  EXPECT_NEAR(t.ops[2].end_us - t.ops[2].start_us, 2, kTolUs);
}

TEST(SimGridCostTable, DeviceOrderFollowsTheTable) {
  REQUIRE_SIMGRID_WORKER();
  auto sim = simgrid_with_table(testing::device_order_table(), "simgrid-order.costs.json");
  Trace t;
  const StepResult r =
      sim->evaluate(testing::device_order_graph(), star_cluster(2), Placement({0, 1, 0, 0}), &t);
  EXPECT_NEAR(r.step_time_us, 170, kTolUs);
  ASSERT_EQ(t.ops.size(), 4u);
  EXPECT_NEAR(t.ops[3].start_us, 100, kTolUs);  // d first: the worker's order used the table
  EXPECT_NEAR(t.ops[2].start_us, 120, kTolUs);
}

TEST(SimGridCostTable, ReplacedWorkerGetsTheTableToo) {
  REQUIRE_SIMGRID_WORKER();
  SimGridOptions o;
  o.workers = 1;
  o.timeout_s = 30;
  o.debug_fail_first = "crash";  // the first worker dies; its replacement must be priced alike
  o.cost_table = std::make_shared<const CostTable>(testing::chain_table());
  SimGridEvaluator sim(o);
  const StepResult r =
      sim.evaluate(testing::roofline_chain(), star_cluster(1), Placement({0, 0, 0}));
  EXPECT_NEAR(r.step_time_us, 31, kTolUs);
  EXPECT_NE(sim.describe().find("a given table (3 entries"), std::string::npos) << sim.describe();
}

TEST(SimGridCostTable, RegisteredOptionAndBadTable) {
  REQUIRE_SIMGRID_WORKER();
  register_builtins();
  const std::string path =
      testing::write_test_table(testing::chain_table(), "simgrid-registry.costs.json");
  auto evaluator =
      EvaluatorRegistry::instance().create("simgrid", {{"workers", "1"}, {"costs", path}});
  EXPECT_NE(evaluator->describe().find(path), std::string::npos) << evaluator->describe();

  // A bad table fails when the evaluator is made, before any worker starts.
  const std::string bad = std::string(AWARE_TEST_TMPDIR) + "/simgrid-bad.costs.json";
  std::ofstream(bad) << R"({"format":"aware-cost-table","version":1,"costs":{"test":{"a":-1}}})";
  testing::expect_error<ParseError>(
      [&] {
        SimGridEvaluator::from_options({{"workers", "1"}, {"costs", bad}});
      },
      {"option 'costs'", bad, "op 'a'"});
}

}  // namespace
}  // namespace aware
