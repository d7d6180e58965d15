// Seeded random layered DAGs with training-step-like costs, for property tests
// and benchmarks (not a model of any real network).
#pragma once

#include <cstdint>

#include "core/op_graph.h"
#include "core/rng.h"  // splitmix64, uniform_below, uniform_real: callers of this header use them

namespace aware {

// A DAG of `num_ops` ops in layers of ~`width` ops; each op takes 1–3 inputs from
// the previous few layers; FLOPs in [1e8, 1e10], outputs in [64 KB, 16 MB],
// a third of the ops carry parameters. Same (num_ops, seed, width): same graph.
OpGraph random_layered_dag(int num_ops, std::uint64_t seed, int width = 8);

}  // namespace aware
