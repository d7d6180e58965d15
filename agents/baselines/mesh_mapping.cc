#include "agents/baselines/mesh_mapping.h"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "agents/common/placer_common.h"
#include "core/errors.h"
#include "core/rng.h"
#include "core/units.h"

namespace aware::baselines {

using namespace aware::placing;  // the shared placer helpers (agents/common)
namespace {

std::string fmt(double v) { return format_fixed(v, 0); }

}  // namespace

void check_mesh_capacity(const MeshSpec& mesh, double neurons) {
  if (neurons > mesh.capacity * mesh.cores())
    throw ConfigError("mesh mapping: the network has " + fmt(neurons) + " neurons, the mesh " +
                      mesh.name() + " holds " + fmt(mesh.capacity * mesh.cores()) + " (" +
                      std::to_string(mesh.cores()) + " cores x " + fmt(mesh.capacity) +
                      "): use a larger mesh or more capacity");
}

namespace {

void check_fits(const MeshSpec& mesh, const MeshTraffic& traffic) {
  double total = 0;
  for (int g = 0; g < traffic.groups(); ++g) {
    const double n = traffic.group_neurons[static_cast<size_t>(g)];
    if (n > mesh.capacity)
      throw ConfigError("mesh mapping: group " +
                        (traffic.group_names.empty() ? std::to_string(g) : "'" + traffic.group_names[static_cast<size_t>(g)] + "'") +
                        " has " + fmt(n) + " neurons, more than a core's capacity of " + fmt(mesh.capacity) + " on " + mesh.name());
    total += n;
  }
  check_mesh_capacity(mesh, total);
}

// Groups in `order` onto cores in `cores` order, each to the first core (from
// the current one on) with room.
std::vector<int> pack(const MeshSpec& mesh, const MeshTraffic& traffic, const std::vector<int>& order,
                      const std::vector<int>& cores) {
  check_fits(mesh, traffic);
  std::vector<int> core_of(static_cast<size_t>(traffic.groups()), -1);
  std::vector<double> used(static_cast<size_t>(mesh.cores()), 0);
  size_t at = 0;
  for (int g : order) {
    const double n = traffic.group_neurons[static_cast<size_t>(g)];
    size_t tries = 0;
    while (used[static_cast<size_t>(cores[at])] + n > mesh.capacity) {
      at = (at + 1) % cores.size();
      if (++tries > cores.size())
        throw ConfigError("mesh mapping: no core of " + mesh.name() + " has room for group " + std::to_string(g) +
                          " (groups do not pack: use a larger mesh or smaller groups)");
    }
    core_of[static_cast<size_t>(g)] = cores[at];
    used[static_cast<size_t>(cores[at])] += n;
  }
  return core_of;
}

std::vector<int> graph_order(const MeshTraffic& traffic) {
  std::vector<int> order(static_cast<size_t>(traffic.groups()));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::vector<int> row_major(const MeshSpec& mesh) {
  std::vector<int> cores(static_cast<size_t>(mesh.cores()));
  std::iota(cores.begin(), cores.end(), 0);
  return cores;
}

}  // namespace

std::vector<int> map_sequential(const MeshSpec& mesh, const MeshTraffic& traffic) {
  return pack(mesh, traffic, graph_order(traffic), row_major(mesh));
}

std::vector<int> map_random(const MeshSpec& mesh, const MeshTraffic& traffic, std::uint64_t seed) {
  std::vector<int> cores = row_major(mesh);
  SplitMixRng rng(seed * 0x9E3779B97F4A7C15ULL + 0x6d657368);
  for (int i = static_cast<int>(cores.size()) - 1; i > 0; --i) std::swap(cores[static_cast<size_t>(i)], cores[static_cast<size_t>(rng.below(i + 1))]);
  return pack(mesh, traffic, graph_order(traffic), cores);
}

std::vector<int> map_hilbert(const MeshSpec& mesh, const MeshTraffic& traffic) {
  return pack(mesh, traffic, graph_order(traffic), hilbert_order(mesh.width, mesh.height));
}

std::vector<int> map_metis(const MeshSpec& mesh, const MeshTraffic& traffic, std::uint64_t seed) {
  check_fits(mesh, traffic);
  const int n = traffic.groups();
  // Undirected traffic graph, self flows dropped, both directions summed.
  std::vector<std::map<int, double>> adjacency(static_cast<size_t>(n));
  double max_w = 0;
  for (const MeshTraffic::Flow& f : traffic.flows) {
    if (f.src == f.dst) continue;
    adjacency[static_cast<size_t>(f.src)][f.dst] += f.Bps;
    adjacency[static_cast<size_t>(f.dst)][f.src] += f.Bps;
  }
  for (const auto& row : adjacency)
    for (const auto& [v, w] : row) max_w = std::max(max_w, w);
  // Edge weights scaled so that their sum stays far inside METIS's 32-bit sums.
  size_t entries = 0;
  for (const auto& row : adjacency) entries += row.size();
  const double top = std::max(1.0, std::min(1e6, 1e9 / std::max<size_t>(entries, 1)));
  std::vector<idx_t> xadj(1, 0), adjncy, adjwgt, vwgt;
  for (int u = 0; u < n; ++u) {
    for (const auto& [v, w] : adjacency[static_cast<size_t>(u)]) {
      adjncy.push_back(v);
      adjwgt.push_back(std::max<idx_t>(1, static_cast<idx_t>(std::llround(w / std::max(max_w, 1e-300) * top))));
    }
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
    vwgt.push_back(std::max<idx_t>(1, static_cast<idx_t>(std::llround(traffic.group_neurons[static_cast<size_t>(u)]))));
  }
  std::vector<int> core_of(static_cast<size_t>(n), 0);
  if (mesh.cores() > 1 && n > 1) {
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = static_cast<idx_t>(seed % 2147483647ULL);
    options[METIS_OPTION_UFACTOR] = 30;  // 3% imbalance
    options[METIS_OPTION_NUMBERING] = 0;
    idx_t nvtxs = n, ncon = 1, nparts = std::min(mesh.cores(), n), objval = 0;
    std::vector<idx_t> part(static_cast<size_t>(n), 0);
    const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr,
                                           adjwgt.empty() ? nullptr : adjwgt.data(), &nparts, nullptr, nullptr,
                                           options, &objval, part.data());
    if (status != METIS_OK) throw InternalError("METIS_PartGraphKway failed with status " + std::to_string(status));
    for (int g = 0; g < n; ++g) core_of[static_cast<size_t>(g)] = static_cast<int>(part[static_cast<size_t>(g)]);
  }
  // Repair: a core over capacity sheds its smallest groups to the nearest core with room.
  std::vector<double> used(static_cast<size_t>(mesh.cores()), 0);
  for (int g = 0; g < n; ++g) used[static_cast<size_t>(core_of[static_cast<size_t>(g)])] += traffic.group_neurons[static_cast<size_t>(g)];
  std::vector<int> by_size(static_cast<size_t>(n));
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) {
    return traffic.group_neurons[static_cast<size_t>(a)] < traffic.group_neurons[static_cast<size_t>(b)];
  });
  for (int g : by_size) {
    const int c = core_of[static_cast<size_t>(g)];
    if (used[static_cast<size_t>(c)] <= mesh.capacity) continue;
    const double w = traffic.group_neurons[static_cast<size_t>(g)];
    int best = -1;
    for (int d = 0; d < mesh.cores(); ++d)
      if (used[static_cast<size_t>(d)] + w <= mesh.capacity &&
          (best < 0 || mesh_hops(mesh, c, d) < mesh_hops(mesh, c, best)))
        best = d;
    if (best < 0) throw ConfigError("mesh mapping (metis): no core of " + mesh.name() + " has room left");
    used[static_cast<size_t>(c)] -= w;
    used[static_cast<size_t>(best)] += w;
    core_of[static_cast<size_t>(g)] = best;
  }
  return core_of;
}

ForceDirectedStats refine_force_directed(const MeshSpec& mesh, const MeshTraffic& traffic, std::vector<int>& core_of,
                                         int max_passes) {
  const int n = traffic.groups();
  // Each group's flows (either direction) as (other group, Bps).
  std::vector<std::vector<std::pair<int, double>>> nbr(static_cast<size_t>(n));
  for (const MeshTraffic::Flow& f : traffic.flows) {
    if (f.src == f.dst || f.Bps <= 0) continue;
    nbr[static_cast<size_t>(f.src)].push_back({f.dst, f.Bps});
    nbr[static_cast<size_t>(f.dst)].push_back({f.src, f.Bps});
  }
  std::vector<double> used(static_cast<size_t>(mesh.cores()), 0);
  std::vector<std::vector<int>> on_core(static_cast<size_t>(mesh.cores()));
  std::vector<int> gx(static_cast<size_t>(n)), gy(static_cast<size_t>(n));
  for (int g = 0; g < n; ++g) {
    const int c = core_of[static_cast<size_t>(g)];
    used[static_cast<size_t>(c)] += traffic.group_neurons[static_cast<size_t>(g)];
    on_core[static_cast<size_t>(c)].push_back(g);
    gx[static_cast<size_t>(g)] = c % mesh.width;
    gy[static_cast<size_t>(g)] = c / mesh.width;
  }
  // Traffic x hops of g's flows were g at (x, y), its partners where they are;
  // the flows with `skip` are left out (a swap partner: their length does not change).
  const auto local = [&](int g, int x, int y, int skip) {
    double sum = 0;
    for (const auto& [h, w] : nbr[static_cast<size_t>(g)])
      if (h != skip) sum += w * (std::abs(x - gx[static_cast<size_t>(h)]) + std::abs(y - gy[static_cast<size_t>(h)]));
    return sum;
  };
  const auto relocate = [&](int g, int to) {
    const int from = core_of[static_cast<size_t>(g)];
    auto& list = on_core[static_cast<size_t>(from)];
    list.erase(std::find(list.begin(), list.end(), g));
    on_core[static_cast<size_t>(to)].push_back(g);
    used[static_cast<size_t>(from)] -= traffic.group_neurons[static_cast<size_t>(g)];
    used[static_cast<size_t>(to)] += traffic.group_neurons[static_cast<size_t>(g)];
    core_of[static_cast<size_t>(g)] = to;
    gx[static_cast<size_t>(g)] = to % mesh.width;
    gy[static_cast<size_t>(g)] = to / mesh.width;
  };
  ForceDirectedStats stats;
  double cost = mesh_cost(mesh, traffic, core_of).traffic_hops;
  stats.cost_after_pass.push_back(cost);
  for (int pass = 0; pass < max_passes; ++pass) {
    const double before = cost;
    for (int g = 0; g < n; ++g) {
      const auto& mine = nbr[static_cast<size_t>(g)];
      if (mine.empty()) continue;
      // The traffic-weighted centre of g's partners: where the forces pull it.
      double wx = 0, wy = 0, wsum = 0;
      for (const auto& [h, w] : mine) {
        wx += w * gx[static_cast<size_t>(h)];
        wy += w * gy[static_cast<size_t>(h)];
        wsum += w;
      }
      const int cx = std::clamp(static_cast<int>(std::lround(wx / wsum)), 0, mesh.width - 1);
      const int cy = std::clamp(static_cast<int>(std::lround(wy / wsum)), 0, mesh.height - 1);
      const int from = core_of[static_cast<size_t>(g)];
      const int fx = gx[static_cast<size_t>(g)], fy = gy[static_cast<size_t>(g)];
      const double gn = traffic.group_neurons[static_cast<size_t>(g)];
      const double here = local(g, fx, fy, -1);
      double best_gain = 0;
      int best_core = -1, best_partner = -1;
      // The centre's core and its four neighbours: a move where there is room,
      // a swap with a group there that fits where g is.
      const int steps[5][2] = {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}};
      for (const auto& step : steps) {
        const int x = cx + step[0], y = cy + step[1];
        if (x < 0 || y < 0 || x >= mesh.width || y >= mesh.height) continue;
        const int to = y * mesh.width + x;
        if (to == from) continue;
        if (used[static_cast<size_t>(to)] + gn <= mesh.capacity) {
          const double gain = here - local(g, x, y, -1);
          if (gain > best_gain) best_gain = gain, best_core = to, best_partner = -1;
        }
        for (int h : on_core[static_cast<size_t>(to)]) {
          const double hn = traffic.group_neurons[static_cast<size_t>(h)];
          if (used[static_cast<size_t>(to)] - hn + gn > mesh.capacity ||
              used[static_cast<size_t>(from)] - gn + hn > mesh.capacity)
            continue;
          // The g-h flows keep their length (the two trade places): left out.
          const double gain = local(g, fx, fy, h) + local(h, x, y, g) - local(g, x, y, h) - local(h, fx, fy, g);
          if (gain > best_gain) best_gain = gain, best_core = to, best_partner = h;
        }
      }
      // Only a gain that survives rounding: the cost never rises.
      if (best_core < 0 || best_gain <= 1e-12 * std::max(cost, 1.0)) continue;
      relocate(g, best_core);
      if (best_partner >= 0) {
        relocate(best_partner, from);
        ++stats.swaps;
      } else {
        ++stats.moves;
      }
      cost -= best_gain;
    }
    ++stats.passes;
    cost = mesh_cost(mesh, traffic, core_of).traffic_hops;  // exact again, no drift
    stats.cost_after_pass.push_back(cost);
    if (before - cost < 2e-4 * before) break;
  }
  return stats;
}

MeshSpec mesh_of_cluster(const Cluster& cluster) {
  if (!cluster.is_mesh())
    throw ConfigError("cluster '" + cluster.name() + "' is not a mesh: hilbert and force-directed place on preset:mesh:WxH");
  MeshSpec mesh = parse_mesh_spec(cluster.name());
  if (mesh.width != cluster.mesh_width() || mesh.height != cluster.mesh_height())
    throw ConfigError("cluster '" + cluster.name() + "': its name does not match its " + std::to_string(cluster.mesh_width()) +
                      "x" + std::to_string(cluster.mesh_height()) + " mesh");
  return mesh;
}

namespace {

// The traffic of `graph` on a mesh: one group per colocation unit.
struct GraphTraffic {
  Units units;
  MeshTraffic traffic;
};

// On a mesh cluster its spec; on any other cluster the devices in a row (1 x D,
// hops = distance in device order), each with room for an even share.
GraphTraffic graph_traffic(const OpGraph& graph, const Cluster& cluster, MeshSpec& mesh) {
  GraphTraffic out{colocation_units(graph), {}};
  const int U = out.units.num_units();
  out.traffic.group_neurons.assign(static_cast<size_t>(U), 0);
  bool neurons = false;
  for (int op = 0; op < graph.num_ops(); ++op)
    if (graph.op(op).type == "NeuronUpdate") {
      out.traffic.group_neurons[static_cast<size_t>(out.units.unit_of_op[static_cast<size_t>(op)])] += graph.op(op).param_bytes / 16;
      neurons = true;
    }
  if (!neurons) std::fill(out.traffic.group_neurons.begin(), out.traffic.group_neurons.end(), 1.0);
  if (cluster.is_mesh()) {
    mesh = mesh_of_cluster(cluster);
  } else {
    mesh = MeshSpec{};
    mesh.width = cluster.num_devices();
    mesh.height = 1;
  }
  if (!neurons || !cluster.is_mesh()) {
    // Not a spiking network, or no capacity known: an even share per core, with
    // 5% slack so that first-fit packing never strands a group.
    double total = 0, largest = 0;
    for (double n : out.traffic.group_neurons) total += n, largest = std::max(largest, n);
    mesh.capacity = std::max(largest, std::ceil(total / mesh.cores() * (neurons ? 1.05 : 1.0)));
  }
  std::map<std::pair<int, int>, double> flows;
  for (const Edge& e : graph.edges()) {
    const int a = out.units.unit_of_op[static_cast<size_t>(e.src)], b = out.units.unit_of_op[static_cast<size_t>(e.dst)];
    if (a != b) flows[{a, b}] += e.bytes;
  }
  for (const auto& [ab, bytes] : flows) out.traffic.flows.push_back({ab.first, ab.second, bytes});
  return out;
}

class MeshPlacer final : public Placer {
 public:
  explicit MeshPlacer(bool refine) : refine_(refine) {}
  std::string name() const override { return refine_ ? "force-directed" : "hilbert"; }
  Placement place(const OpGraph& graph, const Cluster& cluster, const PlaceContext& context) override {
    check_context(context, name());
    MeshSpec mesh;
    const GraphTraffic gt = graph_traffic(graph, cluster, mesh);
    std::vector<int> core_of = map_hilbert(mesh, gt.traffic);
    if (refine_) refine_force_directed(mesh, gt.traffic, core_of);
    std::vector<int> device(static_cast<size_t>(graph.num_ops()), 0);
    for (int op = 0; op < graph.num_ops(); ++op)
      device[static_cast<size_t>(op)] = core_of[static_cast<size_t>(gt.units.unit_of_op[static_cast<size_t>(op)])];
    return Placement(device);
  }

 private:
  bool refine_;
};

}  // namespace

std::unique_ptr<Placer> make_hilbert_placer() { return std::make_unique<MeshPlacer>(false); }
std::unique_ptr<Placer> make_force_directed_placer() { return std::make_unique<MeshPlacer>(true); }

}  // namespace aware::baselines
