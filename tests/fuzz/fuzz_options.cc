// Fuzz target: KEY=VALUE options, one per line, as --option / --method-option
// pass them: checked against every registered evaluator's and placer's
// OptionSpecs, then used to build the analytic simulator and to run the
// placers that need no evaluator budget on a small graph.
#include <cstdint>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "core/evaluator.h"
#include "core/placer.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  fuzz::register_builtins_once();
  const auto& [graph, cluster] = fuzz::small_fixture();
  Options options;
  std::istringstream lines(fuzz::input_text(data, size));
  std::string line;
  while (std::getline(lines, line)) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    options[line.substr(0, eq)] = line.substr(eq + 1);
  }
  try {
    auto evaluator = EvaluatorRegistry::instance().create("analytic", options);
    (void)evaluator->evaluate(graph, cluster, single_device_placement(graph, 0));
  } catch (const Error&) {
  }
  for (const char* method : {"metis", "heft", "m-etf", "anneal", "fused-m-etf"}) {
    if (!PlacerRegistry::instance().has(method)) continue;
    try {
      auto evaluator = EvaluatorRegistry::instance().create("analytic");
      PlaceContext context;
      context.evaluator = evaluator.get();
      context.budget_evals = 20;
      context.options = options;
      const Placement p = PlacerRegistry::instance().create(method)->place(graph, cluster, context);
      check_placement(graph, cluster, p, method);
    } catch (const Error&) {
    }
  }
  return 0;
}
