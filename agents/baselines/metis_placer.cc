// "metis": k-way graph partitioning, one part per device. Node weight = mean
// compute time, edge weight = bytes, target part sizes proportional to device
// speed; memory is checked afterwards (memory-aware greedy when it fails).
#include <metis.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "agents/common/placer_common.h"
#include "agents/baselines/placers.h"
#include "core/errors.h"

namespace aware::baselines {

using namespace aware::placing;  // the shared placer helpers (agents/common)
namespace {

// Scales non-negative weights to integers in [1, ceiling] so that their sum stays
// far from METIS's 32-bit limits.
std::vector<idx_t> to_metis_weights(const std::vector<double>& values, double ceiling) {
  double total = 0, largest = 0;
  for (double v : values) {
    total += v;
    largest = std::max(largest, v);
  }
  const double scale = total > 0 ? std::min(ceiling / largest, 1e9 / total) : 0;
  std::vector<idx_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = static_cast<idx_t>(std::max(1.0, std::round(values[i] * scale)));
  return out;
}

class MetisPlacer final : public Placer {
 public:
  std::string name() const override { return "metis"; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_context(context, name());
    const double imbalance = option_double(context.options, "imbalance", 1.05, name());
    if (!(imbalance >= 1.0 && imbalance <= 10.0))
      throw ConfigError(name() + ": option 'imbalance' must be in [1, 10], got " +
                        context.options.at("imbalance"));
    check_graph_can_fit(graph, cluster);

    const int D = cluster.num_devices();
    const Units units = colocation_units(graph);
    const int U = units.num_units();
    std::vector<int> part(U, 0);
    if (D > 1 && U <= D) {
      for (int u = 0; u < U; ++u) part[u] = u;
    } else if (D > 1) {
      part = partition(graph, cluster, units, imbalance, context.seed);
    }
    Placement p(std::vector<int>(graph.num_ops(), 0));
    for (int op = 0; op < graph.num_ops(); ++op) p[op] = part[units.unit_of_op[op]];
    return with_memory_fallback(graph, cluster, std::move(p), context.evaluator);
  }

 private:
  static std::vector<int> partition(const OpGraph& graph, const Cluster& cluster,
                                    const Units& units, double imbalance, std::uint64_t seed) {
    const int D = cluster.num_devices();
    const int U = units.num_units();
    const OpCostMatrix costs(graph, cluster);

    std::vector<double> unit_time(U, 0.0);
    for (int op = 0; op < graph.num_ops(); ++op)
      unit_time[units.unit_of_op[op]] += costs.mean_time_us(op);
    // Undirected unit adjacency with summed bytes; self-loops dropped.
    std::vector<std::map<int, double>> adjacency(U);
    for (const Edge& e : graph.edges()) {
      const int a = units.unit_of_op[e.src], b = units.unit_of_op[e.dst];
      if (a == b) continue;
      adjacency[a][b] += e.bytes;
      adjacency[b][a] += e.bytes;
    }
    std::vector<idx_t> xadj(1, 0), adjncy;
    std::vector<double> edge_bytes;
    for (int u = 0; u < U; ++u) {
      for (const auto& [v, bytes] : adjacency[u]) {
        adjncy.push_back(v);
        edge_bytes.push_back(bytes);
      }
      xadj.push_back(static_cast<idx_t>(adjncy.size()));
    }
    std::vector<idx_t> vwgt = to_metis_weights(unit_time, 1e6);
    std::vector<idx_t> adjwgt = to_metis_weights(edge_bytes, 1e6);

    // Faster devices get proportionally larger parts.
    std::vector<real_t> tpwgts(D);
    double speed_sum = 0;
    std::vector<double> speed(D, 0.0);
    for (int d = 0; d < D; ++d) {
      double total = 0;
      for (int op = 0; op < graph.num_ops(); ++op) total += costs.time_us(op, d);
      speed[d] = total > 0 ? 1.0 / total : 1.0;
      speed_sum += speed[d];
    }
    for (int d = 0; d < D; ++d) tpwgts[d] = static_cast<real_t>(speed[d] / speed_sum);

    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 2147483647ULL);
    options[METIS_OPTION_UFACTOR] = static_cast<idx_t>(std::lround((imbalance - 1.0) * 1000.0));
    options[METIS_OPTION_NUMBERING] = 0;

    idx_t nvtxs = U, ncon = 1, nparts = D, objval = 0;
    std::vector<idx_t> result(U, 0);
    const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(),
                                           nullptr, adjwgt.empty() ? nullptr : adjwgt.data(),
                                           &nparts, tpwgts.data(), nullptr, options, &objval,
                                           result.data());
    if (status != METIS_OK)
      throw InternalError("METIS_PartGraphKway failed with status " + std::to_string(status) +
                          " on graph '" + graph.name() + "'");
    return std::vector<int>(result.begin(), result.end());
  }
};

}  // namespace

std::unique_ptr<Placer> make_metis_placer() { return std::make_unique<MetisPlacer>(); }

}  // namespace aware::baselines
