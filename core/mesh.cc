#include "core/mesh.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/errors.h"

namespace aware {
namespace {

const MeshSpec kDefaults;

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

double parse_positive(const std::string& spec, const std::string& key, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
    throw ConfigError("mesh '" + spec + "': field '" + key + "' must be a positive number, got '" + text + "'");
  return v;
}

}  // namespace

std::string MeshSpec::name() const {
  std::string out = "mesh:" + std::to_string(width) + "x" + std::to_string(height);
  if (capacity != kDefaults.capacity) out += ",capacity=" + number(capacity);
  if (link_Bps != kDefaults.link_Bps) out += ",link_Bps=" + number(link_Bps);
  if (latency_us != kDefaults.latency_us) out += ",latency_us=" + number(latency_us);
  if (core_flops != kDefaults.core_flops) out += ",core_flops=" + number(core_flops);
  if (core_memory_bytes != kDefaults.core_memory_bytes) out += ",memory=" + number(core_memory_bytes);
  return out;
}

MeshSpec parse_mesh_spec(const std::string& spec) {
  std::string rest = spec.rfind("mesh:", 0) == 0 ? spec.substr(5) : spec;
  MeshSpec mesh;
  std::vector<std::string> items;
  std::stringstream in(rest);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  const std::string usage = "expected mesh:WxH[,capacity=N,link_Bps=X,latency_us=Y,core_flops=F,memory=BYTES]";
  if (items.empty()) throw ConfigError("mesh '" + spec + "': " + usage);
  int w = 0, h = 0;
  char tail = 0;
  if (std::sscanf(items[0].c_str(), "%dx%d%c", &w, &h, &tail) != 2 || w < 1 || h < 1 || w > 1024 || h > 1024)
    throw ConfigError("mesh '" + spec + "': size '" + items[0] + "': " + usage + " with 1 <= W, H <= 1024");
  mesh.width = w;
  mesh.height = h;
  std::vector<std::string> seen;
  for (size_t i = 1; i < items.size(); ++i) {
    const size_t eq = items[i].find('=');
    if (eq == std::string::npos) throw ConfigError("mesh '" + spec + "': '" + items[i] + "' is not KEY=VALUE; " + usage);
    const std::string key = items[i].substr(0, eq), value = items[i].substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw ConfigError("mesh '" + spec + "': field '" + key + "' is given twice");
    seen.push_back(key);
    const double v = parse_positive(spec, key, value);
    if (key == "capacity") mesh.capacity = v;
    else if (key == "link_Bps") mesh.link_Bps = v;
    else if (key == "latency_us") mesh.latency_us = v;
    else if (key == "core_flops") mesh.core_flops = v;
    else if (key == "memory") mesh.core_memory_bytes = v;
    else throw ConfigError("mesh '" + spec + "': unknown field '" + key + "'; " + usage);
  }
  return mesh;
}

int mesh_hops(const MeshSpec& mesh, int a, int b) {
  return std::abs(a % mesh.width - b % mesh.width) + std::abs(a / mesh.width - b / mesh.width);
}

std::vector<int> mesh_route(const MeshSpec& mesh, int a, int b) {
  std::vector<int> out;
  int x = a % mesh.width, y = a / mesh.width;
  const int tx = b % mesh.width, ty = b / mesh.width;
  while (x != tx) {
    const int dir = tx > x ? 0 : 1;
    out.push_back(4 * (y * mesh.width + x) + dir);
    x += tx > x ? 1 : -1;
  }
  while (y != ty) {
    const int dir = ty > y ? 2 : 3;
    out.push_back(4 * (y * mesh.width + x) + dir);
    y += ty > y ? 1 : -1;
  }
  return out;
}

void hilbert_point(int order, std::int64_t index, int* x, int* y) {
  // Walks the quadrants from the finest level up, rotating as the curve does.
  std::int64_t t = index;
  int px = 0, py = 0;
  for (int s = 1; s < (1 << order); s *= 2) {
    const int rx = static_cast<int>(1 & (t / 2));
    const int ry = static_cast<int>(1 & (t ^ rx));
    if (ry == 0) {
      if (rx == 1) {
        px = s - 1 - px;
        py = s - 1 - py;
      }
      std::swap(px, py);
    }
    px += s * rx;
    py += s * ry;
    t /= 4;
  }
  *x = px;
  *y = py;
}

std::vector<int> hilbert_order(int width, int height) {
  int order = 0;
  while ((1 << order) < std::max(width, height)) ++order;
  const std::int64_t side = std::int64_t{1} << order;
  std::vector<int> out;
  out.reserve(static_cast<size_t>(width) * height);
  for (std::int64_t d = 0; d < side * side; ++d) {
    int x = 0, y = 0;
    hilbert_point(order, d, &x, &y);
    if (x < width && y < height) out.push_back(y * width + x);
  }
  return out;
}

std::vector<double> mesh_link_loads(const MeshSpec& mesh, const MeshTraffic& traffic,
                                    const std::vector<int>& core_of) {
  std::vector<double> load(static_cast<size_t>(4) * mesh.cores(), 0);
  for (const MeshTraffic::Flow& f : traffic.flows) {
    int x = core_of[f.src] % mesh.width, y = core_of[f.src] / mesh.width;
    const int tx = core_of[f.dst] % mesh.width, ty = core_of[f.dst] / mesh.width;
    while (x != tx) {
      load[4 * static_cast<size_t>(y * mesh.width + x) + (tx > x ? 0 : 1)] += f.Bps;
      x += tx > x ? 1 : -1;
    }
    while (y != ty) {
      load[4 * static_cast<size_t>(y * mesh.width + x) + (ty > y ? 2 : 3)] += f.Bps;
      y += ty > y ? 1 : -1;
    }
  }
  return load;
}

MeshCost mesh_cost(const MeshSpec& mesh, const MeshTraffic& traffic, const std::vector<int>& core_of) {
  if (static_cast<int>(core_of.size()) != traffic.groups())
    throw ConfigError("mesh mapping: " + std::to_string(core_of.size()) + " cores given for " +
                      std::to_string(traffic.groups()) + " groups");
  std::vector<double> neurons(static_cast<size_t>(mesh.cores()), 0);
  for (int g = 0; g < traffic.groups(); ++g) {
    const int c = core_of[static_cast<size_t>(g)];
    if (c < 0 || c >= mesh.cores())
      throw ConfigError("mesh mapping: group " + std::to_string(g) + " is on core " + std::to_string(c) + ", not a core of " +
                        mesh.name());
    neurons[static_cast<size_t>(c)] += traffic.group_neurons[static_cast<size_t>(g)];
  }
  MeshCost cost;
  for (int c = 0; c < mesh.cores(); ++c) {
    const double n = neurons[static_cast<size_t>(c)];
    if (n > mesh.capacity * (1 + 1e-12))
      throw ConfigError("mesh mapping: core (" + std::to_string(c % mesh.width) + "," + std::to_string(c / mesh.width) +
                        ") holds " + number(n) + " neurons, over its capacity of " + number(mesh.capacity));
    cost.cores_used += n > 0;
    cost.max_core_neurons = std::max(cost.max_core_neurons, n);
  }
  for (const MeshTraffic::Flow& f : traffic.flows) {
    const int hops = mesh_hops(mesh, core_of[f.src], core_of[f.dst]);
    cost.traffic_hops += f.Bps * hops;
    if (hops > 0) cost.total_Bps += f.Bps;
  }
  const std::vector<double> load = mesh_link_loads(mesh, traffic, core_of);
  // Directed links that exist: 2 per horizontal and per vertical neighbour pair.
  const double links = 2.0 * ((mesh.width - 1) * mesh.height + mesh.width * (mesh.height - 1));
  double sum = 0;
  for (double l : load) {
    cost.max_link_Bps = std::max(cost.max_link_Bps, l);
    sum += l;
  }
  cost.mean_link_Bps = links > 0 ? sum / links : 0;
  cost.max_link_utilisation = cost.max_link_Bps / mesh.link_Bps;
  return cost;
}

Cluster make_mesh_cluster(const MeshSpec& mesh) {
  if (mesh.cores() > kMeshClusterMaxCores)
    throw ConfigError(mesh.name() + ": " + std::to_string(mesh.cores()) +
                      " cores; as a cluster a mesh has at most " +
                      std::to_string(kMeshClusterMaxCores) + " cores. `aware mesh` maps larger meshes");
  Cluster c(mesh.name());
  for (int y = 0; y < mesh.height; ++y)
    for (int x = 0; x < mesh.width; ++x) {
      Device d;
      d.name = "c" + std::to_string(x) + "_" + std::to_string(y);
      d.kind = "core";
      d.peak_flops = mesh.core_flops;
      d.efficiency = 1;
      d.memory_bytes = mesh.core_memory_bytes;
      d.memory_Bps = mesh.core_flops * 4;  // on-core SRAM: not the bottleneck
      d.launch_overhead_us = 0;
      c.add_device(d);
    }
  // One router per core (switch i serves core i); the core-router link is
  // on-chip and free, the router-router links are the mesh.
  for (int i = 0; i < mesh.cores(); ++i) c.add_switch("r" + std::to_string(i % mesh.width) + "_" + std::to_string(i / mesh.width));
  const int routers = mesh.cores();
  for (int i = 0; i < mesh.cores(); ++i)
    c.add_link({"local" + std::to_string(i), i, routers + i, mesh.link_Bps * 1e3, 0});
  for (int y = 0; y < mesh.height; ++y)
    for (int x = 0; x < mesh.width; ++x) {
      const int i = y * mesh.width + x;
      if (x + 1 < mesh.width) c.add_link({"x" + std::to_string(x) + "_" + std::to_string(y), routers + i, routers + i + 1, mesh.link_Bps, mesh.latency_us});
      if (y + 1 < mesh.height)
        c.add_link({"y" + std::to_string(x) + "_" + std::to_string(y), routers + i, routers + i + mesh.width, mesh.link_Bps, mesh.latency_us});
    }
  c.set_mesh_routing(mesh.width, mesh.height);
  c.finalize();
  return c;
}

}  // namespace aware
