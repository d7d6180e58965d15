// Fuzz target: the cluster reader and the routes it computes.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/formats.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace aware;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Cluster c = cluster_from_json(parse_json_text(text, "fuzz"), "fuzz");
    for (int s = 0; s < c.num_devices(); ++s) {
      for (int d = 0; d < c.num_devices(); ++d) {
        if (s == d) continue;
        fuzz::require(c.route_bandwidth_Bps(s, d) > 0, "positive route bandwidth");
        fuzz::require(c.route_latency_us(s, d) >= 0, "non-negative route latency");
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
