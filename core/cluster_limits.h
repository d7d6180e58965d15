// How large a cluster the workbench builds: checked by Cluster::finalize() and
// by the JSON reader before it adds a device, so that an oversized cluster is
// refused at once, with the count and the limit, instead of filling memory.
//
// Why these numbers: a cluster with least-latency routes keeps a route for every
// ordered pair of devices (Dijkstra from each device at finalize()), so memory
// and time grow with the square of the device count: 4,096 devices are 16.8
// million routes, about 1.5 GB and a few seconds; twice as many would be four
// times that. The largest preset (multi-node:64x16, hadoop:1024) has 1,024. A
// mesh (routing "xy") makes its routes when first asked for, so it may be
// larger: kMeshClusterMaxCores (core/mesh.h), 16,384 cores.
#pragma once

#include <string>

namespace aware {

// Devices, switches and links of a cluster with least-latency routes.
constexpr int kMaxRoutedClusterDevices = 4096;
constexpr int kMaxRoutedClusterSwitches = 4096;
constexpr int kMaxRoutedClusterLinks = 16384;
// Links of a mesh cluster (each core has one to its router and up to two to
// its neighbours' routers, so 3 x 16,384 with room to spare).
constexpr int kMaxMeshClusterLinks = 65536;

// Throws DeviceError "<source>: field 'devices' has N devices; a cluster ..."
// when a count is over its limit above (`mesh`: the mesh limits). Counts are
// 64-bit so that a reader may check a file's counts before building anything.
void check_cluster_size(const std::string& source, long long devices, long long switches,
                        long long links, bool mesh);

}  // namespace aware
