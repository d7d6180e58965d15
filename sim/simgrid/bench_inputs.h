// The simgrid benchmark's and tests' inputs: seeded layered DAGs with measured
// op costs, a small uniform star cluster and seeded placements (no SimGrid here;
// the client and the worker both use it). core/random_dag.h's random_layered_dag
// is the other generator: FLOP-costed ops, for the analytic tests and benches.
#pragma once

#include <cstdint>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

// `num_ops` ops in layers of ~sqrt(num_ops); each op after the first layer takes
// 1-3 inputs from the previous two layers. Costs are measured (compute_us 5-500),
// outputs 64 KB - 4 MB, small params and workspace. Same seed, same graph
// (std::mt19937_64; the sequence, and so the bench's figures, are this file's own).
OpGraph measured_layered_dag(int num_ops, std::uint64_t seed);
// `num_devices` V100-like devices ("gpu0", ...) on one switch "sw", 12 GB/s and
// 5 us per link: core's star_cluster with these numbers, named "star<N>".
Cluster bench_star_cluster(int num_devices);
// A seeded random placement.
Placement random_placement(const OpGraph& graph, int num_devices, std::uint64_t seed);

}  // namespace aware
