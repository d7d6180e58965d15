// One entry point for "a graph" wherever the CLI, experiments or GUI take one:
// "zoo:NAME", "family:FAMILY:SEED", "random:N:SEED" (a seeded random layered DAG
// for benchmarks), or a JSON graph file.
#pragma once

#include <string>

#include "core/op_graph.h"

namespace aware {

// Throws ParseError / ConfigError / GraphError with the spec in the message.
OpGraph load_graph(const std::string& spec);

}  // namespace aware
