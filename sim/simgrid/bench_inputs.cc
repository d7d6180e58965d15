#include "sim/simgrid/bench_inputs.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace aware {

OpGraph measured_layered_dag(int num_ops, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  OpGraph graph("random-" + std::to_string(num_ops) + "-" + std::to_string(seed));
  const int width = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(num_ops))));
  for (int i = 0; i < num_ops; ++i) {
    Op op;
    op.name = "op" + std::to_string(i);
    op.type = "Random";
    op.compute_us = 5 + 495 * unit(rng);
    op.output_bytes = {65536 + std::floor(4e6 * unit(rng))};
    op.param_bytes = std::floor(1e6 * unit(rng));
    op.temp_bytes = std::floor(1e5 * unit(rng));
    graph.add_op(std::move(op));
  }
  for (int i = width; i < num_ops; ++i) {
    const int layer = i / width;
    const int lo = std::max(0, (layer - 2) * width);
    const int hi = layer * width;  // exclusive: earlier layers only, so acyclic
    const int inputs = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < inputs; ++k) {
      const int src = lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo));
      bool dup = false;
      for (int e : graph.in_edges(i)) dup = dup || graph.edge(e).src == src;
      if (!dup) graph.add_edge(src, i);
    }
  }
  return graph;
}

Cluster bench_star_cluster(int num_devices) {
  Device gpu;
  gpu.name = "gpu";
  gpu.kind = "V100";
  gpu.peak_flops = 15e12;
  gpu.efficiency = 0.5;
  gpu.memory_bytes = 16e9;
  gpu.memory_Bps = 900e9;
  return star_cluster("star" + std::to_string(num_devices), gpu, num_devices, "sw", 12e9, 5);
}

Placement random_placement(const OpGraph& graph, int num_devices, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Placement placement(std::vector<int>(graph.num_ops()));
  for (int op = 0; op < graph.num_ops(); ++op) {
    placement[op] = static_cast<int>(rng() % static_cast<std::uint64_t>(num_devices));
  }
  return placement;
}

}  // namespace aware
