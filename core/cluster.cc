#include "core/cluster.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <queue>
#include <sstream>
#include <unordered_map>

#include "core/cluster_limits.h"
#include "core/errors.h"
#include "core/mesh.h"

namespace aware {
namespace {

std::atomic<std::uint64_t> g_next_cluster_revision{1};

std::string where(const Cluster& cluster) {
  return cluster.source().empty() ? cluster.name() : cluster.source();
}

void check_positive(const Cluster& cluster, const std::string& what, const std::string& name,
                    const char* field, double value, bool allow_zero = false) {
  const bool ok = std::isfinite(value) && (allow_zero ? value >= 0 : value > 0);
  if (!ok) {
    std::ostringstream out;
    out << where(cluster) << ": " << what << " '" << name << "': field '" << field << "' must be "
        << (allow_zero ? "finite and non-negative" : "finite and positive") << ", got " << value;
    throw DeviceError(out.str());
  }
}

}  // namespace

void check_cluster_size(const std::string& source, long long devices, long long switches,
                        long long links, bool mesh) {
  const long long max_devices = mesh ? kMeshClusterMaxCores : kMaxRoutedClusterDevices;
  const long long max_switches = mesh ? kMeshClusterMaxCores : kMaxRoutedClusterSwitches;
  const long long max_links = mesh ? kMaxMeshClusterLinks : kMaxRoutedClusterLinks;
  const char* why = mesh
                        ? "a mesh cluster (\"routing\": xy) holds at most"
                        : "a cluster with least-latency routes (a route for every pair of devices, "
                          "computed up front) holds at most";
  const auto refuse = [&](const char* field, long long count, long long limit) {
    throw DeviceError(source + ": field '" + field + "' has " + std::to_string(count) + " " +
                      field + "; " + why + " " + std::to_string(limit) +
                      " (docs/formats.md, cluster size)");
  };
  if (devices > max_devices) refuse("devices", devices, max_devices);
  if (switches > max_switches) refuse("switches", switches, max_switches);
  if (links > max_links) refuse("links", links, max_links);
}

void Cluster::touch() {
  finalized_ = false;
  mesh_routes_.reset();
  lazy_routes_.reset();
  revision_ = g_next_cluster_revision.fetch_add(1, std::memory_order_relaxed);
}

int Cluster::add_device(Device device) {
  if (device.name.empty()) throw DeviceError(where(*this) + ": a device has an empty 'name'");
  if (find_node(device.name) >= 0)
    throw DeviceError(where(*this) + ": device '" + device.name + "': field 'name' is a duplicate");
  if (!switches_.empty())
    throw DeviceError(where(*this) + ": devices must be added before switches");
  devices_.push_back(std::move(device));
  touch();
  return num_devices() - 1;
}

int Cluster::add_switch(std::string name) {
  if (name.empty()) throw DeviceError(where(*this) + ": a switch has an empty 'name'");
  if (find_node(name) >= 0)
    throw DeviceError(where(*this) + ": switch '" + name + "': field 'name' is a duplicate");
  switches_.push_back(std::move(name));
  touch();
  return num_nodes() - 1;
}

int Cluster::add_link(Link link) {
  if (link.a < 0 || link.a >= num_nodes() || link.b < 0 || link.b >= num_nodes() ||
      link.a == link.b) {
    throw DeviceError(where(*this) + ": link '" + link.name +
                      "': fields 'a'/'b' must name two different devices or switches");
  }
  if (link.name.empty()) link.name = node_name(link.a) + "<->" + node_name(link.b);
  links_.push_back(std::move(link));
  touch();
  return num_links() - 1;
}

int Cluster::connect(const std::string& a, const std::string& b, double bandwidth_Bps,
                     double latency_us, std::string link_name) {
  const int na = find_node(a);
  const int nb = find_node(b);
  if (na < 0) throw DeviceError(where(*this) + ": link '" + link_name + "': unknown node '" + a + "'");
  if (nb < 0) throw DeviceError(where(*this) + ": link '" + link_name + "': unknown node '" + b + "'");
  return add_link(Link{std::move(link_name), na, nb, bandwidth_Bps, latency_us});
}

const std::string& Cluster::node_name(int node) const {
  AWARE_CHECK(node >= 0 && node < num_nodes(), "node id in range");
  return node < num_devices() ? devices_[node].name : switches_[node - num_devices()];
}

int Cluster::find_node(const std::string& name) const {
  for (int i = 0; i < num_devices(); ++i)
    if (devices_[i].name == name) return i;
  for (int i = 0; i < static_cast<int>(switches_.size()); ++i)
    if (switches_[i] == name) return num_devices() + i;
  return -1;
}

int Cluster::find_device(const std::string& name) const {
  for (int i = 0; i < num_devices(); ++i)
    if (devices_[i].name == name) return i;
  return -1;
}

namespace {

// The least-latency search from device `src` (ties: fewer hops, then the first
// path found, the adjacency lists being in link order), through switches only:
// devices are endpoints. Stops once `stop` is settled (-1: every node). Fills
// each node's (latency, hops), the hop it is reached by, and whether it settled.
using RouteKey = std::pair<double, int>;  // (latency, hops)
struct RouteSearch {
  std::vector<RouteKey> best;
  std::vector<Hop> via;
  std::vector<char> done;
};
RouteSearch search_routes(const std::vector<std::vector<Hop>>& adjacency, const std::vector<Link>& links, int devices,
                          int src, int stop) {
  const int nodes = static_cast<int>(adjacency.size());
  RouteSearch r{std::vector<RouteKey>(nodes, RouteKey{std::numeric_limits<double>::infinity(), 0}),
                std::vector<Hop>(nodes, Hop{-1, 0}), std::vector<char>(nodes, 0)};
  r.best[src] = RouteKey{0, 0};
  using Item = std::pair<RouteKey, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
  queue.push({r.best[src], src});
  while (!queue.empty()) {
    const auto [key, node] = queue.top();
    queue.pop();
    if (r.done[node]) continue;
    r.done[node] = 1;
    if (node == stop) break;
    if (node != src && node < devices) continue;
    for (const Hop& hop : adjacency[node]) {
      const Link& link = links[hop.link];
      const int next = hop.direction == 0 ? link.b : link.a;
      const RouteKey cand{key.first + link.latency_us, key.second + 1};
      if (cand < r.best[next]) {
        r.best[next] = cand;
        r.via[next] = hop;
        queue.push({cand, next});
      }
    }
  }
  return r;
}

}  // namespace

void Cluster::finalize() {
  if (devices_.empty()) throw DeviceError(where(*this) + ": the cluster has no devices");
  for (const Device& d : devices_) {
    check_positive(*this, "device", d.name, "peak_flops", d.peak_flops);
    check_positive(*this, "device", d.name, "efficiency", d.efficiency);
    if (d.efficiency > 1) {
      std::ostringstream out;
      out << where(*this) << ": device '" << d.name
          << "': field 'efficiency' (a fraction of peak_flops) must be at most 1, got " << d.efficiency;
      throw DeviceError(out.str());
    }
    check_positive(*this, "device", d.name, "memory_bytes", d.memory_bytes);
    check_positive(*this, "device", d.name, "memory_Bps", d.memory_Bps);
    check_positive(*this, "device", d.name, "launch_overhead_us", d.launch_overhead_us, true);
  }
  for (const Link& l : links_) {
    check_positive(*this, "link", l.name, "bandwidth_Bps", l.bandwidth_Bps);
    check_positive(*this, "link", l.name, "latency_us", l.latency_us, true);
  }
  // Before the routes are allocated: their memory grows with devices^2.
  check_cluster_size(where(*this), num_devices(), static_cast<long long>(switches_.size()),
                     num_links(), mesh_width_ > 0);
  if (mesh_width_ > 0) {
    finalize_mesh_routes();
    return;
  }
  if (finalize_lazy_routes()) return;
  const int nodes = num_nodes();
  const int devices = num_devices();
  std::vector<std::vector<Hop>> adjacency(nodes);
  for (int l = 0; l < num_links(); ++l) {
    adjacency[links_[l].a].push_back(Hop{l, 0});
    adjacency[links_[l].b].push_back(Hop{l, 1});
  }
  routes_.assign(static_cast<size_t>(devices) * devices, {});
  route_latency_us_.assign(static_cast<size_t>(devices) * devices, 0);
  route_bandwidth_Bps_.assign(static_cast<size_t>(devices) * devices,
                              std::numeric_limits<double>::infinity());
  // Dijkstra from each device on (latency, hops); deterministic because the
  // adjacency lists are in link order and ties keep the first path found.
  for (int src = 0; src < devices; ++src) {
    const RouteSearch found = search_routes(adjacency, links_, devices, src, -1);
    const std::vector<RouteKey>& best = found.best;
    const std::vector<Hop>& via = found.via;
    const std::vector<char>& done = found.done;
    for (int dst = 0; dst < devices; ++dst) {
      if (dst == src) continue;
      if (!done[dst]) {
        throw DeviceError(where(*this) + ": device '" + devices_[dst].name +
                          "' cannot be reached from device '" + devices_[src].name +
                          "' (field 'links')");
      }
      std::vector<Hop> path;
      double bandwidth = std::numeric_limits<double>::infinity();
      for (int node = dst; node != src;) {
        const Hop hop = via[node];
        path.push_back(hop);
        bandwidth = std::min(bandwidth, links_[hop.link].bandwidth_Bps);
        node = hop.direction == 0 ? links_[hop.link].a : links_[hop.link].b;
      }
      std::reverse(path.begin(), path.end());
      const size_t idx = static_cast<size_t>(src) * devices + dst;
      routes_[idx] = std::move(path);
      route_latency_us_[idx] = best[dst].first;
      route_bandwidth_Bps_[idx] = bandwidth;
    }
  }
  finalized_ = true;
}

void Cluster::set_mesh_routing(int width, int height) {
  if (width < 1 || height < 1) throw DeviceError(where(*this) + ": a mesh needs width and height >= 1");
  mesh_width_ = width;
  mesh_height_ = height;
  touch();
}

// Dimension-order (XY) routes on a mesh: devices 0..W*H-1 are the cores, row-major,
// switch i is core i's router, each core is linked to its router and each router
// to its right and lower neighbours. A route: core -> router, along x, along y,
// router -> core. finalize() finds the hop of every link a route can take; each
// route is built from them when first asked for and kept.
struct Cluster::MeshRouteEntry {
  std::vector<Hop> hops;
  double latency_us = 0;
  double bandwidth_Bps = std::numeric_limits<double>::infinity();
};

struct Cluster::MeshRoutes {
  std::vector<Hop> up, down;                  // core i -> router i, router i -> core i
  std::vector<Hop> east, west, north, south;  // router i -> router at x+1, x-1, y+1, y-1
  std::mutex mutex;
  std::unordered_map<std::uint64_t, MeshRouteEntry> routes;  // key src * devices + dst
};

void Cluster::finalize_mesh_routes() {
  const int devices = num_devices();
  if (static_cast<long long>(mesh_width_) * mesh_height_ > kMeshClusterMaxCores)
    throw DeviceError(where(*this) + ": a " + std::to_string(mesh_width_) + "x" +
                      std::to_string(mesh_height_) + " mesh has more than " +
                      std::to_string(kMeshClusterMaxCores) +
                      " cores, the most a mesh cluster holds");
  const int cores = mesh_width_ * mesh_height_;
  if (devices != cores || static_cast<int>(switches_.size()) != cores)
    throw DeviceError(where(*this) + ": a " + std::to_string(mesh_width_) + "x" + std::to_string(mesh_height_) +
                      " mesh needs " + std::to_string(cores) + " devices and as many routers (switches), got " +
                      std::to_string(devices) + " and " + std::to_string(switches_.size()));
  std::map<std::pair<int, int>, Hop> between;  // (from node, to node) -> hop
  for (int l = 0; l < num_links(); ++l) {
    between[{links_[l].a, links_[l].b}] = Hop{l, 0};
    between[{links_[l].b, links_[l].a}] = Hop{l, 1};
  }
  const auto hop = [&](int from, int to) {
    const auto it = between.find({from, to});
    if (it == between.end())
      throw DeviceError(where(*this) + ": mesh routing needs a link between '" + node_name(from) + "' and '" +
                        node_name(to) + "' (field 'links')");
    return it->second;
  };
  auto m = std::make_shared<MeshRoutes>();
  const size_t n = static_cast<size_t>(cores);
  m->up.resize(n);
  m->down.resize(n);
  m->east.assign(n, Hop{});
  m->west.assign(n, Hop{});
  m->north.assign(n, Hop{});
  m->south.assign(n, Hop{});
  // Every link an XY route can take, checked now (a mesh of more than one core
  // routes through all of them); the routes themselves come on demand.
  slowest_route_Bps_ = std::numeric_limits<double>::infinity();
  for (int i = 0; i < cores; ++i) {
    const int x = i % mesh_width_, y = i / mesh_width_, r = cores + i;
    if (cores > 1) {
      m->up[i] = hop(i, r);
      m->down[i] = hop(r, i);
    }
    if (x + 1 < mesh_width_) m->east[i] = hop(r, r + 1);
    if (x > 0) m->west[i] = hop(r, r - 1);
    if (y + 1 < mesh_height_) m->north[i] = hop(r, r + mesh_width_);
    if (y > 0) m->south[i] = hop(r, r - mesh_width_);
    for (const Hop* h : {&m->up[i], &m->down[i], &m->east[i], &m->west[i], &m->north[i], &m->south[i]})
      if (h->link >= 0) slowest_route_Bps_ = std::min(slowest_route_Bps_, links_[h->link].bandwidth_Bps);
  }
  routes_.clear();
  route_latency_us_.clear();
  route_bandwidth_Bps_.clear();
  mesh_routes_ = std::move(m);
  finalized_ = true;
}

const Cluster::MeshRouteEntry& Cluster::mesh_route(int src, int dst) const {
  MeshRoutes& m = *mesh_routes_;
  const std::uint64_t key = static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(num_devices()) +
                            static_cast<std::uint64_t>(dst);
  std::lock_guard<std::mutex> lock(m.mutex);
  const auto found = m.routes.find(key);
  if (found != m.routes.end()) return found->second;
  MeshRouteEntry entry;
  if (src != dst) {
    entry.hops.push_back(m.up[src]);
    int x = src % mesh_width_, y = src / mesh_width_;
    const int tx = dst % mesh_width_, ty = dst / mesh_width_;
    for (; x != tx; x += tx > x ? 1 : -1) entry.hops.push_back(tx > x ? m.east[y * mesh_width_ + x] : m.west[y * mesh_width_ + x]);
    for (; y != ty; y += ty > y ? 1 : -1) entry.hops.push_back(ty > y ? m.north[y * mesh_width_ + x] : m.south[y * mesh_width_ + x]);
    entry.hops.push_back(m.down[dst]);
    for (const Hop& h : entry.hops) {
      entry.latency_us += links_[h.link].latency_us;
      entry.bandwidth_Bps = std::min(entry.bandwidth_Bps, links_[h.link].bandwidth_Bps);
    }
  }
  // unordered_map keeps its elements in place: the reference outlives later insertions.
  return m.routes.emplace(key, std::move(entry)).first->second;
}

// Above this many devices the all-pairs routes (devices^2 of them, a Dijkstra
// from every device) cost seconds and gigabytes a step never needs: each route is
// found when first asked for, by the same search stopped at its destination (so
// the same route, ties included), and kept.
constexpr int kLazyRouteDevices = 256;

struct Cluster::LazyRoutes {
  std::vector<std::vector<Hop>> adjacency;  // per node, its links in link order
  std::mutex mutex;
  std::unordered_map<std::uint64_t, MeshRouteEntry> routes;  // key src * devices + dst
};

bool Cluster::finalize_lazy_routes() {
  const int devices = num_devices(), nodes = num_nodes();
  if (devices <= kLazyRouteDevices) return false;
  auto lazy = std::make_shared<LazyRoutes>();
  lazy->adjacency.assign(nodes, {});
  for (int l = 0; l < num_links(); ++l) {
    lazy->adjacency[links_[l].a].push_back(Hop{l, 0});
    lazy->adjacency[links_[l].b].push_back(Hop{l, 1});
  }
  // Every pair must be joined. Routes pass through switches only, so it is
  // enough that one group of switches joined among themselves touches every
  // device; otherwise the all-pairs search runs and names the pair.
  std::vector<int> group(nodes, -1);
  int groups = 0;
  for (int start = devices; start < nodes; ++start) {
    if (group[start] >= 0) continue;
    std::vector<int> stack = {start};
    group[start] = groups;
    while (!stack.empty()) {
      const int node = stack.back();
      stack.pop_back();
      for (const Hop& hop : lazy->adjacency[node]) {
        const int next = hop.direction == 0 ? links_[hop.link].b : links_[hop.link].a;
        if (next >= devices && group[next] < 0) group[next] = groups, stack.push_back(next);
      }
    }
    ++groups;
  }
  std::vector<int> touches(groups, 0);
  for (int d = 0; d < devices; ++d) {
    std::vector<char> seen(groups, 0);
    for (const Hop& hop : lazy->adjacency[d]) {
      const int next = hop.direction == 0 ? links_[hop.link].b : links_[hop.link].a;
      if (next >= devices && !seen[group[next]]) seen[group[next]] = 1, ++touches[group[next]];
    }
  }
  if (std::find(touches.begin(), touches.end(), devices) == touches.end()) return false;
  routes_.clear();
  route_latency_us_.clear();
  route_bandwidth_Bps_.clear();
  lazy_routes_ = std::move(lazy);
  finalized_ = true;
  return true;
}

const Cluster::MeshRouteEntry& Cluster::lazy_route(int src, int dst) const {
  LazyRoutes& m = *lazy_routes_;
  const int devices = num_devices();
  const std::uint64_t key = static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(devices) +
                            static_cast<std::uint64_t>(dst);
  std::lock_guard<std::mutex> lock(m.mutex);
  const auto found = m.routes.find(key);
  if (found != m.routes.end()) return found->second;
  MeshRouteEntry entry;
  if (src != dst) {
    // finalize()'s search, stopped when dst is settled.
    const RouteSearch found = search_routes(m.adjacency, links_, devices, src, dst);
    const std::vector<RouteKey>& best = found.best;
    const std::vector<Hop>& via = found.via;
    const std::vector<char>& done = found.done;
    AWARE_CHECK(done[dst], "lazy routes: a device the connectivity check passed was not reached");
    for (int node = dst; node != src;) {
      const Hop hop = via[node];
      entry.hops.push_back(hop);
      entry.bandwidth_Bps = std::min(entry.bandwidth_Bps, links_[hop.link].bandwidth_Bps);
      node = hop.direction == 0 ? links_[hop.link].a : links_[hop.link].b;
    }
    std::reverse(entry.hops.begin(), entry.hops.end());
    entry.latency_us = best[dst].first;
  }
  return m.routes.emplace(key, std::move(entry)).first->second;
}

const std::vector<Hop>& Cluster::route(int src, int dst) const {
  AWARE_CHECK(finalized_, "Cluster::finalize() must run before route()");
  if (mesh_routes_) return mesh_route(src, dst).hops;
  if (lazy_routes_) return lazy_route(src, dst).hops;
  return routes_[static_cast<size_t>(src) * num_devices() + dst];
}

double Cluster::route_latency_us(int src, int dst) const {
  AWARE_CHECK(finalized_, "Cluster::finalize() must run before route_latency_us()");
  if (mesh_routes_) return mesh_route(src, dst).latency_us;
  if (lazy_routes_) return lazy_route(src, dst).latency_us;
  return route_latency_us_[static_cast<size_t>(src) * num_devices() + dst];
}

double Cluster::route_bandwidth_Bps(int src, int dst) const {
  AWARE_CHECK(finalized_, "Cluster::finalize() must run before route_bandwidth_Bps()");
  if (mesh_routes_) return mesh_route(src, dst).bandwidth_Bps;
  if (lazy_routes_) return lazy_route(src, dst).bandwidth_Bps;
  return route_bandwidth_Bps_[static_cast<size_t>(src) * num_devices() + dst];
}

double Cluster::transfer_time_us(int src, int dst, double bytes) const {
  if (src == dst) return 0;
  return route_latency_us(src, dst) + bytes / route_bandwidth_Bps(src, dst) * 1e6;
}

double Cluster::slowest_route_bandwidth_Bps() const {
  // A mesh's XY routes between them cross every link it has.
  if (mesh_routes_) return slowest_route_Bps_;
  double slowest = std::numeric_limits<double>::infinity();
  for (int s = 0; s < num_devices(); ++s)
    for (int d = 0; d < num_devices(); ++d)
      if (s != d) slowest = std::min(slowest, route_bandwidth_Bps(s, d));
  return slowest;
}

Cluster star_cluster(const std::string& name, const Device& device, int num_devices,
                     const std::string& hub, double link_Bps, double latency_us) {
  Cluster cluster(name);
  for (int i = 0; i < num_devices; ++i) {
    Device d = device;
    d.name = device.name + std::to_string(i);
    cluster.add_device(std::move(d));
  }
  cluster.add_switch(hub);
  for (int i = 0; i < num_devices; ++i)
    cluster.connect(device.name + std::to_string(i), hub, link_Bps, latency_us);
  cluster.finalize();
  return cluster;
}

}  // namespace aware
