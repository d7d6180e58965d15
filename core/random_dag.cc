#include "core/random_dag.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace aware {

OpGraph random_layered_dag(int num_ops, std::uint64_t seed, int width) {
  OpGraph graph("random-" + std::to_string(num_ops) + "-s" + std::to_string(seed));
  graph.set_source("random:" + std::to_string(num_ops) + ":" + std::to_string(seed));
  std::uint64_t state = seed * 0x2545F4914F6CDD1Dull + 17;
  width = std::max(1, width);
  for (int i = 0; i < num_ops; ++i) {
    Op op;
    op.name = "op" + std::to_string(i);
    op.type = i % 3 == 0 ? "MatMul" : (i % 3 == 1 ? "Conv2D" : "Relu");
    op.flops = std::exp(uniform_real(state, std::log(1e8), std::log(1e10)));
    const double out = std::exp(uniform_real(state, std::log(64e3), std::log(16e6)));
    op.output_bytes = {out};
    op.bytes_accessed = 2 * out;
    if (uniform_below(state, 3) == 0) op.param_bytes = uniform_real(state, 1e5, 2e7);
    op.temp_bytes = uniform_below(state, 4) == 0 ? out : 0;
    op.phase = i < num_ops / 2 ? Phase::kForward : (i < num_ops * 9 / 10 ? Phase::kBackward : Phase::kUpdate);
    const int id = graph.add_op(std::move(op));
    const int layer = id / width;
    if (layer == 0) continue;
    const int lo = std::max(0, (layer - 3) * width);
    const int hi = layer * width;  // exclusive: only earlier layers
    const int inputs = 1 + uniform_below(state, 3);
    int added[3] = {-1, -1, -1};
    for (int k = 0; k < inputs; ++k) {
      const int src = lo + uniform_below(state, hi - lo);
      if (src == added[0] || src == added[1] || src == added[2]) continue;
      added[k] = src;
      graph.add_edge(src, id, 0);
    }
  }
  return graph;
}

}  // namespace aware
