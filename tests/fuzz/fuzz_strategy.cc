// Fuzz target: a strategy spec (the first line of the input), as --strategy and
// --strategies pass it, applied to the fixtures' two-layer MLP training step on
// four devices. Bad specs must end in an aware::Error; a spec that applies must
// give a graph that validates, survives the graph format, carries the global batch,
// has a valid placement and simulates to a finite, positive step.
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/formats.h"
#include "strategies/strategy.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  fuzz::register_builtins_once();
  static const OpGraph graph = testing::two_layer_mlp_graph();
  static const Cluster cluster = testing::star_cluster(4);
  std::string spec = fuzz::input_text(data, size);
  if (const auto newline = spec.find('\n'); newline != std::string::npos) spec.resize(newline);
  auto evaluator = EvaluatorRegistry::instance().create("analytic");
  StrategyResult result;
  try {
    StrategyContext context;
    context.evaluator = evaluator.get();
    context.budget_evals = 20;  // a hybrid's search placer stays quick
    result = apply_strategy(graph, cluster, spec, context);
  } catch (const Error&) {
    return 0;
  }
  result.graph.validate();  // throws (a finding: not caught here) when broken
  fuzz::require(result.graph.batch() == graph.batch(), "the rewrite keeps the global batch");
  const OpGraph back = graph_from_json(graph_to_json(result.graph), "fuzz");
  fuzz::require(back.num_ops() == result.graph.num_ops(), "the rewrite survives the graph format");
  check_placement(result.graph, cluster, result.placement, "fuzz");
  const StepResult step = evaluator->evaluate(result.graph, cluster, result.placement);
  fuzz::require(std::isfinite(step.step_time_us) && step.step_time_us > 0,
                "a rewritten step is finite and positive");
  return 0;
}
