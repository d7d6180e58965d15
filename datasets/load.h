// One entry point for "a graph" wherever the CLI, experiments or GUI take one:
// "zoo:NAME", "zoo:NAME:key=value,..." (a zoo model with ModelOptions, e.g.
// "zoo:inception_v3:batch=1,image_size=96"; keys batch, seq_len, hidden, layers,
// vocab, image_size, each a positive integer, each one the model reads),
// "family:FAMILY:SEED", "random:N:SEED" (a seeded random layered DAG for
// benchmarks), or a JSON graph file.
#pragma once

#include <string>

#include "core/op_graph.h"

namespace aware {

// A zoo graph's source() is the spec as given. Throws ParseError / ConfigError /
// GraphError with the spec in the message (for a zoo spec: the key at fault and
// the valid keys).
OpGraph load_graph(const std::string& spec);

}  // namespace aware
