// Every registered placer (baselines, fused placers, learned agents) on small
// graphs: a complete, valid placement; the same placement for the same seed; no
// more evaluator calls than its budget; its declared options accepted with their
// defaults and an undeclared one refused. A new placer is covered by being
// registered: this file registers a throw-away one ("test-first-device") in
// main() and checks that the suite picked it up.
#include <gtest/gtest.h>

#include <atomic>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/placer.h"
#include "tests/conformance/conformance.h"
#include "test_graphs.h"

namespace aware {
namespace {

// The trivial placer a newcomer would write: everything on device 0.
class FirstDevicePlacer final : public Placer {
 public:
  std::string name() const override { return "test-first-device"; }
  Placement place(const OpGraph& graph, const Cluster&, const PlaceContext&) override {
    return Placement(std::vector<int>(graph.num_ops(), 0));
  }
};

// Counts calls and forwards to the analytic simulator.
class CountingEvaluator final : public Evaluator {
 public:
  explicit CountingEvaluator(std::shared_ptr<std::atomic<long long>> calls)
      : inner_(EvaluatorRegistry::instance().create("analytic")), calls_(std::move(calls)) {}
  std::string name() const override { return "counting"; }
  std::unique_ptr<Evaluator> clone() const override {
    return std::make_unique<CountingEvaluator>(calls_);
  }
  long long calls() const { return *calls_; }

 protected:
  StepResult run_step(const OpGraph& g, const Cluster& c, const Placement& p,
                      StepObserver* observer) override {
    ++*calls_;
    return run_inner_step(*inner_, g, c, p, observer);
  }

 private:
  std::unique_ptr<Evaluator> inner_;
  std::shared_ptr<std::atomic<long long>> calls_;
};

class PlacerConformance : public ::testing::TestWithParam<std::string> {
 protected:
  Placement place(const OpGraph& g, const Cluster& c, std::uint64_t seed, long long budget,
                  Options options = {}, long long* calls = nullptr) {
    CountingEvaluator evaluator(std::make_shared<std::atomic<long long>>(0));
    PlaceContext context;
    context.evaluator = &evaluator;
    context.seed = seed;
    context.budget_evals = budget;
    context.options = std::move(options);
    Placement p = PlacerRegistry::instance().create(GetParam())->place(g, c, context);
    if (calls != nullptr) *calls = evaluator.calls();
    return p;
  }
};

constexpr long long kBudget = 12;

TEST_P(PlacerConformance, ReturnsACompleteValidPlacement) {
  const Cluster c = testing::star_cluster(3);
  for (const OpGraph& g : {testing::fork_join_graph(), testing::layered_dag(40, 5)}) {
    const Placement p = place(g, c, 1, kBudget);
    ASSERT_EQ(p.size(), g.num_ops()) << g.name();
    EXPECT_NO_THROW(check_placement(g, c, p, GetParam())) << g.name();
  }
}

TEST_P(PlacerConformance, SameSeedSamePlacement) {
  const OpGraph g = testing::layered_dag(40, 7);
  const Cluster c = testing::star_cluster(3);
  EXPECT_EQ(place(g, c, 11, kBudget), place(g, c, 11, kBudget));
}

TEST_P(PlacerConformance, RespectsItsEvaluationBudget) {
  const OpGraph g = testing::layered_dag(40, 9);
  const Cluster c = testing::star_cluster(3);
  long long calls = -1;
  place(g, c, 1, kBudget, {}, &calls);
  EXPECT_GE(calls, 0);
  EXPECT_LE(calls, kBudget);
}

TEST_P(PlacerConformance, TakesItsDeclaredOptionsAndRefusesOthers) {
  const RegistryInfo info = PlacerRegistry::instance().info(GetParam());
  const OpGraph g = testing::fork_join_graph();
  const Cluster c = testing::star_cluster(2);
  Options defaults;
  for (const OptionSpec& o : info.options) {
    if (!o.default_value.empty() && o.name.find('*') == std::string::npos)
      defaults[o.name] = o.default_value;
  }
  EXPECT_NO_THROW(PlacerRegistry::instance().check_options(GetParam(), defaults));
  EXPECT_NO_THROW(place(g, c, 1, kBudget, defaults)) << "declared options with their defaults";
  EXPECT_THROW(PlacerRegistry::instance().check_options(GetParam(), {{"no_such_option", "1"}}),
               ConfigError);
  EXPECT_THROW(place(g, c, 1, kBudget, {{"no_such_option", "1"}}), ConfigError);
}

INSTANTIATE_TEST_SUITE_P(Registered, PlacerConformance,
                         ::testing::ValuesIn(PlacerRegistry::instance().names()),
                         [](const auto& info) { return testing::param_name(info.param); });

// The throw-away placer registered in main() was instantiated like every other.
TEST(ConformanceRegistration, ANewlyRegisteredPlacerIsCovered) {
  ASSERT_TRUE(PlacerRegistry::instance().has("test-first-device"));
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  int covered = 0;
  for (int s = 0; s < unit.total_test_suite_count(); ++s) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(s);
    for (int t = 0; t < suite.total_test_count(); ++t) {
      const std::string name = suite.GetTestInfo(t)->name();
      if (name.find("test_first_device") != std::string::npos) ++covered;
    }
  }
  EXPECT_EQ(covered, 4);  // the four PlacerConformance tests
}

}  // namespace
}  // namespace aware

int main(int argc, char** argv) {
  aware::register_builtins();
  // A new placer: one class plus this registration line.
  aware::PlacerRegistry::instance().add("test-first-device", "everything on device 0 (a test)",
                                        [] { return std::make_unique<aware::FirstDevicePlacer>(); });
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
