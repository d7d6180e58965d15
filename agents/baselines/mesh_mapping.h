// Mapping groups of neurons onto the cores of a 2-D mesh (core/mesh.h): the
// simple mappings, METIS, the Hilbert curve and force-directed refinement (the
// graph-to-core family of the seed systems). Every mapping respects each
// core's capacity; each returns group -> core.
//
// Packing: groups are taken in a mapping's order and each goes to the next
// core (in that mapping's core order) with room for it, so a core holds
// several small groups. Throws ConfigError when the network does not fit (a
// group larger than a core's capacity, or more neurons than the mesh holds,
// naming both).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/mesh.h"
#include "core/placer.h"

namespace aware::baselines {

// Throws the ConfigError above when `neurons` are more than the mesh holds
// (cores x capacity). The mappings check it; a caller may check a network's
// size before building its traffic, which for millions of neurons takes long.
void check_mesh_capacity(const MeshSpec& mesh, double neurons);

// Groups in graph order onto cores in row-major order.
std::vector<int> map_sequential(const MeshSpec& mesh, const MeshTraffic& traffic);
// Groups in graph order onto cores in a seeded random order.
std::vector<int> map_random(const MeshSpec& mesh, const MeshTraffic& traffic, std::uint64_t seed);
// Groups in graph order onto cores in Hilbert-curve order: neighbours in graph
// order land on neighbouring cores.
std::vector<int> map_hilbert(const MeshSpec& mesh, const MeshTraffic& traffic);
// METIS k-way partition of the traffic graph (neuron weights, traffic edge
// weights) into one part per core, parts onto cores in row-major order (METIS
// does not know the mesh); a part over capacity sheds its smallest groups to
// the nearest cores with room.
std::vector<int> map_metis(const MeshSpec& mesh, const MeshTraffic& traffic, std::uint64_t seed);

struct ForceDirectedStats {
  int passes = 0;
  long long moves = 0, swaps = 0;
  std::vector<double> cost_after_pass;  // traffic x hops after each pass (the first is the start)
};
// Force-directed refinement of `core_of`, in place: each group is pulled toward
// the traffic-weighted centre of the groups it exchanges spikes with; it moves
// to the core nearest that centre (or one of its four neighbours) when the core
// has room, or swaps with a group there, whichever lowers the total traffic x
// hops most. Never raises it. Stops after `max_passes` or a pass that gains
// < 0.02%.
ForceDirectedStats refine_force_directed(const MeshSpec& mesh, const MeshTraffic& traffic,
                                         std::vector<int>& core_of, int max_passes = 30);

// The mesh of a cluster made by make_mesh_cluster (preset:mesh:WxH, its name
// carries the capacity). Throws ConfigError when the cluster is not a mesh.
MeshSpec mesh_of_cluster(const Cluster& cluster);

// Placers: "hilbert" (groups along the curve) and "force-directed" (hilbert,
// then refined). A group is a colocation group (one per neuron group of an
// snn: graph), its neurons the NeuronUpdate op's param_bytes / 16; flows are
// the edges' bytes per step. On a mesh cluster each core holds up to its
// capacity; on any other cluster the devices are taken as a row (hops =
// distance in device order), each with an even share. A graph that is not a
// spiking network counts one per group, spread evenly. Registered by register.cc.
std::unique_ptr<Placer> make_hilbert_placer();
std::unique_ptr<Placer> make_force_directed_placer();

}  // namespace aware::baselines
