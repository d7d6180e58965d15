#include "datasets/load.h"

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/errors.h"
#include "core/formats.h"
#include "core/random_dag.h"
#include "datasets/families.h"
#include "datasets/zoo.h"

namespace aware {

OpGraph load_graph(const std::string& spec) {
  const std::string zoo_prefix = "zoo:";
  const std::string family_prefix = "family:";
  if (spec.rfind(zoo_prefix, 0) == 0) {
    return build_zoo_model(spec.substr(zoo_prefix.size()));
  }
  if (spec.rfind(family_prefix, 0) == 0) {
    const std::string rest = spec.substr(family_prefix.size());
    const std::size_t colon = rest.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
      throw ConfigError("graph spec '" + spec + "': expected family:FAMILY:SEED");
    }
    const std::string family = rest.substr(0, colon);
    const std::string seed_text = rest.substr(colon + 1);
    std::uint64_t seed = 0;
    for (char c : seed_text) {
      if (c < '0' || c > '9' || seed > (UINT64_MAX - 9) / 10) {
        throw ConfigError("graph spec '" + spec + "': seed '" + seed_text +
                          "' is not a non-negative integer");
      }
      seed = seed * 10 + static_cast<std::uint64_t>(c - '0');
    }
    OpGraph graph = build_family_graph(family, seed);
    graph.set_source(spec);
    return graph;
  }
  const std::string random_prefix = "random:";
  if (spec.rfind(random_prefix, 0) == 0) {
    // random:N:SEED, a seeded layered DAG for benchmarks (core/random_dag.h).
    int ops = 0;
    unsigned long long seed = 0;
    char tail = 0;
    if (std::sscanf(spec.c_str() + random_prefix.size(), "%d:%llu%c", &ops, &seed, &tail) != 2 ||
        ops < 1 || ops > 1000000) {
      throw ConfigError("graph spec '" + spec + "': expected random:N:SEED with 1 <= N <= 1000000");
    }
    return random_layered_dag(ops, seed);
  }
  return read_graph_file(spec);
}

}  // namespace aware
