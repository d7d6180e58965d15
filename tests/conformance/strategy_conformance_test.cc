// Every registered strategy kind (strategies/strategy.h, StrategyRegistry), run
// with the example spec and the one-replica spec its entry names: the rewritten
// graph validates and its placement names a device of the cluster for every op;
// the global batch is conserved (the step processes the input graph's whole
// batch); the same spec and seed give the same result; and a strategy with one
// replica (one stage, one group) steps exactly as the plain graph on one device.
// A new kind is covered by being registered.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/evaluator.h"
#include "core/formats.h"
#include "datasets/load.h"
#include "strategies/strategy.h"

namespace aware {
namespace {

std::vector<std::string> registered_kinds() { return StrategyRegistry::instance().names(); }

// A small training step with batch metadata (a data-parallel split needs it).
const OpGraph& small_graph() {
  static const OpGraph graph = load_graph("zoo:resnet50:batch=8,image_size=32");
  return graph;
}

class StrategyConformance : public ::testing::TestWithParam<std::string> {
 protected:
  const Cluster cluster_ = load_cluster("preset:k40x4");
  std::unique_ptr<Evaluator> analytic_ = EvaluatorRegistry::instance().create("analytic");
  StrategyContext context_;
};

TEST_P(StrategyConformance, ExampleRewriteValidatesAndConservesTheBatch) {
  const StrategyKind kind = StrategyRegistry::instance().get(GetParam());
  ASSERT_FALSE(kind.example.empty()) << "every kind names an example spec";
  EXPECT_EQ(parse_strategy_spec(kind.example).kind, kind.name);
  const OpGraph graph = kind.example_graph.empty() ? small_graph() : load_graph(kind.example_graph);
  const StrategyResult r = apply_strategy(graph, cluster_, kind.example, context_);
  EXPECT_NO_THROW(r.graph.validate()) << kind.example;
  ASSERT_EQ(static_cast<int>(r.placement.device_of_op.size()), r.graph.num_ops()) << kind.example;
  for (int d : r.placement.device_of_op) {
    ASSERT_GE(d, 0);
    ASSERT_LT(d, cluster_.num_devices());
  }
  EXPECT_DOUBLE_EQ(r.global_batch, graph.batch()) << kind.example;
  EXPECT_DOUBLE_EQ(r.graph.batch(), graph.batch()) << kind.example;
  EXPECT_GE(r.devices_used, 1);
  EXPECT_LE(r.devices_used, cluster_.num_devices());
  const StepResult step = analytic_->evaluate(r.graph, cluster_, r.placement);
  EXPECT_TRUE(step.feasible) << kind.example << ": " << step.infeasible_reason;
  EXPECT_GT(step.step_time_us, 0);
  // Deterministic: the same spec and seed, the same graph and placement.
  const StrategyResult again = apply_strategy(graph, cluster_, kind.example, context_);
  EXPECT_EQ(again.graph.num_ops(), r.graph.num_ops());
  EXPECT_EQ(again.placement.device_of_op, r.placement.device_of_op);
  EXPECT_EQ(again.spec, r.spec);
}

TEST_P(StrategyConformance, OneReplicaStepsAsThePlainGraph) {
  const StrategyKind kind = StrategyRegistry::instance().get(GetParam());
  if (kind.one_replica.empty()) GTEST_SKIP() << kind.name << " has no one-replica form (its entry says why)";
  const OpGraph graph = kind.example_graph.empty() ? small_graph() : load_graph(kind.example_graph);
  const StrategyResult r = apply_strategy(graph, cluster_, kind.one_replica, context_);
  EXPECT_DOUBLE_EQ(r.global_batch, graph.batch()) << kind.one_replica;
  const double plain = analytic_->evaluate(graph, cluster_, single_device_placement(graph, 0)).step_time_us;
  const double rewritten = analytic_->evaluate(r.graph, cluster_, r.placement).step_time_us;
  EXPECT_NEAR(rewritten, plain, 1e-9 * plain) << kind.one_replica;
}

TEST_P(StrategyConformance, UnknownOptionIsRefusedNamingTheKind) {
  const std::string spec = GetParam() + ":2,no_such_option=1";
  try {
    parse_strategy_spec(spec);
    FAIL() << spec << " was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_option"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Registered, StrategyConformance, ::testing::ValuesIn(registered_kinds()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The registry holds at least the kinds the docs describe.
TEST(StrategyRegistry, HoldsTheDocumentedKinds) {
  for (const char* kind : {"single", "place", "dp", "hybrid", "pipeline", "bagging", "mapreduce", "tp", "ep", "zero", "fsdp"})
    EXPECT_TRUE(StrategyRegistry::instance().has(kind)) << kind;
}

}  // namespace
}  // namespace aware
