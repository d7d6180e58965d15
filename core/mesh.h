// A 2-D mesh network-on-chip of cores (neuromorphic hardware): W x H cores,
// each linked to its four neighbours, spikes routed dimension-order (XY:
// along x first, then along y). The geometry, the Hilbert curve over it, and
// the cost of a mapping of groups (of neurons) to cores: hop-weighted traffic
// and the load of the busiest link.
//
// Core ids are row-major: core = y * W + x. A directed link channel is
// 4 * core + direction (0: +x, 1: -x, 2: +y, 3: -y), the channel leaving
// `core` that way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster.h"

namespace aware {

struct MeshSpec {
  int width = 0;
  int height = 0;
  double capacity = 256;       // neurons per core
  double link_Bps = 1e9;       // bytes/s per link direction
  double latency_us = 0.1;     // per hop
  double core_flops = 1e9;     // a core's arithmetic rate, FLOP/s
  double core_memory_bytes = 4e6;
  int cores() const { return width * height; }
  std::string name() const;    // "mesh:WxH" plus every field that is not the default
};

// "mesh:WxH[,capacity=N][,link_Bps=X][,latency_us=Y][,core_flops=F][,memory=BYTES]"
// (the "mesh:" prefix optional). Throws ConfigError naming the spec and the field.
// 1 <= W, H <= 1024.
MeshSpec parse_mesh_spec(const std::string& spec);

// Hops of the XY route from core a to core b (|dx| + |dy|).
int mesh_hops(const MeshSpec& mesh, int a, int b);
// The directed channels of the XY route from a to b, in order.
std::vector<int> mesh_route(const MeshSpec& mesh, int a, int b);
// The cores of the mesh in Hilbert-curve order: every core once, consecutive
// cores are neighbours (one hop apart) when W = H is a power of two. Other
// shapes follow the curve of the smallest power-of-two square covering the
// mesh, skipping the cells outside it (a step may then cross a few hops).
std::vector<int> hilbert_order(int width, int height);
// The Hilbert index -> (x, y) of a 2^order square (the classic iterative form).
void hilbert_point(int order, std::int64_t index, int* x, int* y);

// What is mapped: groups (each a number of neurons; a group goes to one core)
// and directed traffic between groups, bytes per second.
struct MeshTraffic {
  struct Flow {
    int src = 0, dst = 0;
    double Bps = 0;
  };
  std::vector<double> group_neurons;
  std::vector<std::string> group_names;  // optional, for messages
  std::vector<Flow> flows;
  int groups() const { return static_cast<int>(group_neurons.size()); }
};

struct MeshCost {
  double traffic_hops = 0;    // sum over flows of Bps x hops (bytes/s x hops)
  double max_link_Bps = 0;    // the busiest directed link's load
  double mean_link_Bps = 0;   // over all directed links of the mesh
  double max_link_utilisation = 0;  // max_link_Bps / link_Bps
  double total_Bps = 0;       // sum of flows between different cores
  int cores_used = 0;
  double max_core_neurons = 0;
};

// The cost of `core_of` (group -> core). Throws ConfigError for a group
// without a core, a core out of range, or a core over its capacity (naming
// the core and its load).
MeshCost mesh_cost(const MeshSpec& mesh, const MeshTraffic& traffic, const std::vector<int>& core_of);
// The per-channel loads (4 * cores entries; channels leaving the mesh stay 0).
std::vector<double> mesh_link_loads(const MeshSpec& mesh, const MeshTraffic& traffic,
                                    const std::vector<int>& core_of);

// The mesh as a Cluster (one device per core, "c<X>_<Y>", links between
// neighbours, XY routes computed as used): the contention simulator and every
// placer take it. Built up to 16,384 cores (128x128); throws ConfigError naming
// the limit for larger meshes.
Cluster make_mesh_cluster(const MeshSpec& mesh);
constexpr int kMeshClusterMaxCores = 16384;

}  // namespace aware
