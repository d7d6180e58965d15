// Seeded random layered DAGs and a small uniform cluster, for the simgrid
// benchmark and tests (no SimGrid here; the client and the worker both use it).
#pragma once

#include <cstdint>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

// `num_ops` ops in layers of ~sqrt(num_ops); each op after the first layer takes
// 1-3 inputs from the previous two layers. Costs are measured (compute_us 5-500),
// outputs 64 KB - 4 MB, small params and workspace. Same seed, same graph.
OpGraph random_layered_dag(int num_ops, std::uint64_t seed);
// `num_devices` devices ("gpu0", ...) on one switch, 12 GB/s, 5 us per link.
Cluster star_cluster(int num_devices);
// A seeded random placement.
Placement random_placement(const OpGraph& graph, int num_devices, std::uint64_t seed);

}  // namespace aware
