// Fuzz target: the placement reader against a fixed graph and cluster, then the
// simulator on whatever it accepted.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/formats.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  const std::string text = fuzz::input_text(data, size);
  const auto& [graph, cluster] = fuzz::small_fixture();
  try {
    const Placement p = placement_from_json(parse_json_text(text, "fuzz"), graph, cluster, "fuzz");
    AnalyticSimulator sim;
    (void)sim.evaluate(graph, cluster, p);
  } catch (const Error&) {
  }
  return 0;
}
