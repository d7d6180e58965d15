// The trivial and human placers: single, round-robin, random, expert.
#include <string>
#include <vector>

#include "agents/common/placer_common.h"
#include "agents/baselines/placers.h"
#include "core/graph_algorithms.h"

namespace aware::baselines {

using namespace aware::placing;  // the shared placer helpers (agents/common)
namespace {

// Everything on the fastest device whose memory holds it.
Placement place_single(const OpGraph& graph, const Cluster& cluster, Evaluator* evaluator) {
  const OpCostMatrix costs(graph, cluster);
  for (int d : devices_fastest_first(costs)) {
    Placement p = single_device_placement(graph, d);
    if (placement_acceptable(graph, cluster, p, evaluator)) return p;
  }
  // No device holds the whole model: spread it as little as memory allows.
  return with_memory_fallback(graph, cluster,
                              single_device_placement(graph, devices_fastest_first(costs).front()),
                              evaluator);
}

class SinglePlacer final : public Placer {
 public:
  std::string name() const override { return "single"; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_context(context, name());
    check_graph_can_fit(graph, cluster);
    return place_single(graph, cluster, context.evaluator);
  }
};

// Units dealt to devices in topological order, skipping devices a unit does not
// fit on. With ample memory this is core's round_robin_placement.
class RoundRobinPlacer final : public Placer {
 public:
  std::string name() const override { return "round-robin"; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_context(context, name());
    check_graph_can_fit(graph, cluster);
    const Units units = colocation_units(graph);
    const int devices = cluster.num_devices();
    MemoryLedger ledger(graph, cluster);
    Placement p(std::vector<int>(graph.num_ops(), -1));
    int next = 0;
    for (int op : topological_order(graph)) {
      if (p[op] >= 0) continue;
      const std::vector<int>& members = units.ops_of_unit[units.unit_of_op[op]];
      int chosen = next % devices;
      for (int k = 0; k < devices; ++k) {
        const int d = (next + k) % devices;
        if (ledger.fits(op, d)) {
          chosen = d;
          next += k;
          break;
        }
      }
      ++next;
      for (int m : members) {
        p[m] = chosen;
        ledger.place(m, chosen);
      }
    }
    return with_memory_fallback(graph, cluster, p, context.evaluator);
  }
};

// Each unit on a uniformly drawn device among those it fits on.
class RandomPlacer final : public Placer {
 public:
  std::string name() const override { return "random"; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_context(context, name());
    check_graph_can_fit(graph, cluster);
    const Units units = colocation_units(graph);
    MersenneRng rng(context.seed);
    Placement p = random_placement(graph, cluster, units, topological_order(graph), rng);
    return with_memory_fallback(graph, cluster, p, context.evaluator);
  }
};

// The papers' human placements, derived from Op::block / Op::layer.
class ExpertPlacer final : public Placer {
 public:
  std::string name() const override { return "expert"; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_context(context, name());
    check_graph_can_fit(graph, cluster);
    bool layered = false;
    for (const Op& op : graph.ops())
      if ((op.block == "encoder" || op.block == "decoder") && op.layer >= 0) layered = true;
    // Convolutional models: the experts found no split better than one device.
    if (!layered) return place_single(graph, cluster, context.evaluator);

    const int n = cluster.num_devices();
    Placement p(std::vector<int>(graph.num_ops(), -1));
    for (int op : topological_order(graph)) {
      int meta = op;
      const int fwd = graph.op(op).forward_of;
      if (graph.op(op).block.empty() && fwd >= 0 && fwd < graph.num_ops()) meta = fwd;
      int d = stack_device(graph.op(meta).block, graph.op(meta).layer, n);
      if (d < 0) {
        // Unlabelled glue ops follow their forward op, else their first input.
        if (meta != op && p[meta] >= 0) {
          d = p[meta];
        } else if (!graph.in_edges(op).empty()) {
          d = p[graph.edge(graph.in_edges(op).front()).src];
        } else {
          d = 0;
        }
      }
      p[op] = d;
    }
    enforce_colocation(graph, colocation_units(graph), p);
    return with_memory_fallback(graph, cluster, p, context.evaluator);
  }

 private:
  // NMT / GNMT / RNNLM expert: layer i of each stack on device i mod n, the
  // embedding on the first device, the softmax on the last, attention beside the
  // bottom decoder layer that feeds it. -1 for ops outside these blocks.
  static int stack_device(const std::string& block, int layer, int n) {
    if ((block == "encoder" || block == "decoder") && layer >= 0) return layer % n;
    if (block == "embedding") return 0;
    if (block == "softmax") return n - 1;
    if (block == "attention") return layer >= 0 ? layer % n : 0;
    return -1;
  }
};

}  // namespace

std::unique_ptr<Placer> make_single_placer() { return std::make_unique<SinglePlacer>(); }
std::unique_ptr<Placer> make_round_robin_placer() { return std::make_unique<RoundRobinPlacer>(); }
std::unique_ptr<Placer> make_random_placer() { return std::make_unique<RandomPlacer>(); }
std::unique_ptr<Placer> make_expert_placer() { return std::make_unique<ExpertPlacer>(); }

}  // namespace aware::baselines
