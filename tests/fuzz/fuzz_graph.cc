// Fuzz target: the graph reader, then what every command does with a graph that
// parsed (validation, lower bound, the analytic simulator in both modes). Bad
// input must end in an aware::Error; anything else (a crash, a sanitizer report,
// another exception type, a non-finite result) is a finding.
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/graph_algorithms.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const OpGraph graph = graph_from_json(parse_json_text(text, "fuzz"), "fuzz");
    static const Cluster cluster = fuzz::small_cluster();
    (void)lower_bound(graph, cluster).bound_us();
    for (AnalyticMode mode : {AnalyticMode::kContention, AnalyticMode::kPlaceto}) {
      AnalyticSimulator sim(mode);
      for (const Placement& p : {single_device_placement(graph, 0), round_robin_placement(graph, cluster)}) {
        const StepResult r = sim.evaluate(graph, cluster, p);
        fuzz::require(std::isfinite(r.step_time_us) && r.step_time_us >= 0, "finite step time");
      }
    }
  } catch (const Error&) {
    // Bad input, reported: the expected outcome for most inputs.
  }
  return 0;
}
