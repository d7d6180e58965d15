// Cluster: devices, switches and the links between them, with a route between
// every pair of devices: computed for every pair at finalize(), or, on a mesh,
// on first use (XY routes have a closed form, and a 64x64 mesh has 16.7 million
// pairs), kept once computed.
//
// Nodes are numbered devices first (0..num_devices-1), then switches. Links are
// full duplex: each direction is a separate channel. A copyable value; read-only
// use from several threads is safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace aware {

struct Device {
  std::string name;
  std::string kind;              // "K40", "V100", "cpu", ...
  double peak_flops = 0;         // FLOP/s at peak
  double efficiency = 1;         // fraction of peak that kernels reach (0, 1]
  double memory_bytes = 0;       // device memory capacity
  double memory_Bps = 0;         // device memory bandwidth, bytes/s
  double launch_overhead_us = 0; // fixed cost added to every op
};

struct Link {
  std::string name;
  int a = -1;                    // node id of one end
  int b = -1;                    // node id of the other end
  double bandwidth_Bps = 0;      // per direction
  double latency_us = 0;
};

// One step of a route: a link crossed in one direction (0: a->b, 1: b->a).
struct Hop {
  int link = -1;
  int direction = 0;
  int channel() const { return 2 * link + direction; }  // dense id of the directed channel
};

class Cluster {
 public:
  Cluster() = default;
  explicit Cluster(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const std::string& source() const { return source_; }
  void set_source(std::string source) { source_ = std::move(source); }

  // Adders return the new id. Names must be unique among devices and switches.
  int add_device(Device device);
  int add_switch(std::string name);
  int add_link(Link link);
  // Convenience: link by node names.
  int connect(const std::string& a, const std::string& b, double bandwidth_Bps, double latency_us,
              std::string link_name = "");

  int num_devices() const { return static_cast<int>(devices_.size()); }
  int num_nodes() const { return num_devices() + static_cast<int>(switches_.size()); }
  int num_links() const { return static_cast<int>(links_.size()); }
  const Device& device(int id) const { return devices_[id]; }
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<std::string>& switches() const { return switches_; }
  const Link& link(int id) const { return links_[id]; }
  const std::vector<Link>& links() const { return links_; }
  const std::string& node_name(int node) const;
  // Node id by device or switch name, or -1.
  int find_node(const std::string& name) const;
  int find_device(const std::string& name) const;

  // Validates numbers (throws DeviceError naming the device/link and field) and
  // computes the route between every ordered pair of devices: the path of least
  // total latency, ties broken by fewer hops. Throws DeviceError when a pair is
  // unreachable. Must be called after the last add_*; the presets and the JSON
  // reader call it.
  void finalize();
  bool finalized() const { return finalized_; }
  // A 2-D mesh (core/mesh.h): devices 0..W*H-1 are its cores, row-major, switch i
  // is core i's router; finalize() then routes dimension-order (XY: along x,
  // then y) instead of least-latency, each route computed when first asked for
  // (thread-safe). finalize() checks every link the routes need. Throws
  // DeviceError for W or H < 1.
  void set_mesh_routing(int width, int height);
  bool is_mesh() const { return mesh_width_ > 0; }
  int mesh_width() const { return mesh_width_; }
  int mesh_height() const { return mesh_height_; }

  // The hops from device `src` to device `dst` (empty when src == dst). The
  // reference stays valid while the cluster is neither changed nor destroyed.
  const std::vector<Hop>& route(int src, int dst) const;
  // Sum of latencies along the route, in µs.
  double route_latency_us(int src, int dst) const;
  // Smallest bandwidth along the route, bytes/s (infinity when src == dst).
  double route_bandwidth_Bps(int src, int dst) const;
  // Time for `bytes` to cross an idle route: latency + bytes / bottleneck bandwidth.
  double transfer_time_us(int src, int dst, double bytes) const;
  // The slowest device-to-device route's bandwidth, bytes/s.
  double slowest_route_bandwidth_Bps() const;

  std::uint64_t revision() const { return revision_; }

 private:
  void touch();
  void finalize_mesh_routes();
  struct MeshRoutes;      // cluster.cc: the mesh's hops by router and the routes computed so far
  struct MeshRouteEntry;  // one computed route: hops, latency, bottleneck bandwidth
  const MeshRouteEntry& mesh_route(int src, int dst) const;
  struct LazyRoutes;      // cluster.cc: large clusters' least-latency routes, each found when first asked for
  const MeshRouteEntry& lazy_route(int src, int dst) const;
  bool finalize_lazy_routes();

  std::string name_;
  std::string source_;
  std::vector<Device> devices_;
  std::vector<std::string> switches_;
  std::vector<Link> links_;
  std::vector<std::vector<Hop>> routes_;  // num_devices^2
  std::vector<double> route_latency_us_;
  std::vector<double> route_bandwidth_Bps_;
  bool finalized_ = false;
  int mesh_width_ = 0, mesh_height_ = 0;  // 0: least-latency routes
  std::shared_ptr<MeshRoutes> mesh_routes_;  // meshes only; shared by copies (routes depend on the links alone)
  std::shared_ptr<LazyRoutes> lazy_routes_;  // clusters above kLazyRouteDevices devices; shared by copies
  double slowest_route_Bps_ = 0;
  std::uint64_t revision_ = 0;
};

// A one-switch star for tests and benchmarks: `num_devices` copies of `device`
// named device.name + "0", "1", ..., each joined to the switch `hub` by a
// full-duplex link of `link_Bps` per direction and `latency_us` (default link
// names). Finalized; throws what finalize() throws.
Cluster star_cluster(const std::string& name, const Device& device, int num_devices,
                     const std::string& hub, double link_Bps, double latency_us);

// Names of the presets ("k40x4", "dgx-a100", "multi-node:2x8" is a pattern): the
// built-in ones, then the registered ones (register_cluster_preset) by name.
std::vector<std::string> cluster_preset_names();
// Builds a preset by name (without the "preset:" prefix). Throws ConfigError listing
// the known presets for an unknown name, and what a registered preset's builder throws.
Cluster make_cluster_preset(const std::string& name);
// Adds a preset that an optional module builds when asked (the CUDA backend's
// "cuda-host" describes the GPUs it finds). make_cluster_preset(name) calls `build`
// each time, then sets the source to "preset:NAME" and finalizes the result. A
// second registration of a name replaces the first; a built-in name cannot be
// registered (ConfigError). Thread-safe.
void register_cluster_preset(const std::string& name, std::function<Cluster()> build);
// "preset:NAME" -> make_cluster_preset; a file whose name ends in a suffix with a
// registered loader (".xml" when the SimGrid evaluator is built) -> that loader;
// anything else -> read a JSON cluster file.
Cluster load_cluster(const std::string& spec);
// Lets an optional module read another cluster file format. Thread-safe.
void register_cluster_loader(const std::string& suffix,
                             std::function<Cluster(const std::string&)> loader);

}  // namespace aware

namespace aware {
// The first `count` devices of `cluster` with every switch and the links among
// them (for "the same box with fewer GPUs"). Throws ConfigError on a bad count.
Cluster restrict_devices(const Cluster& cluster, int count);

// For the cpu executor and its calibration: every device of `cluster` must be of
// kind "cpu" (this machine's cores). Throws ConfigError naming `cluster_spec`,
// the first other device and its kind, and `who` ("--backend cpu"), so that a
// preset of GPUs is never "measured" on CPU cores.
void require_cpu_devices(const Cluster& cluster, const std::string& cluster_spec, const std::string& who);
}  // namespace aware
