#include "core/formats.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cluster_limits.h"
#include "core/errors.h"
#include "core/mesh.h"

namespace aware {

using nlohmann::json;

// ---------------------------------------------------------------- field helpers

namespace {

// Context for error messages: "<file>: op 'x': field 'y' ...".
struct Where {
  std::string source;
  std::string object;  // "op 'conv1'", "device 'gpu0'", "" for the document
  std::string prefix() const { return object.empty() ? source + ": " : source + ": " + object + ": "; }
};

[[noreturn]] void fail(const Where& w, const std::string& field, const std::string& what) {
  throw ParseError(w.prefix() + "field '" + field + "' " + what);
}

// Where element `index` of an array of `kind`s is ("op #3"), until the caller
// names it by its own fields; throws ParseError unless the element is an object.
Where array_element(const std::string& source, const char* kind, size_t index,
                    const json& element) {
  Where w{source, std::string(kind) + " #" + std::to_string(index)};
  if (!element.is_object()) throw ParseError(w.prefix() + "must be an object");
  return w;
}

// Strict readers: a field this format does not have (a misspelt "flps") is
// refused, so that a cost is never silently dropped.
void check_fields(const json& obj, std::initializer_list<const char*> known, const Where& w) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool found = false;
    for (const char* k : known) found = found || it.key() == k;
    if (found) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    throw ParseError(w.prefix() + "unknown field '" + it.key() + "' (known: " + list + ")");
  }
}

const json& require(const json& obj, const char* field, const Where& w) {
  auto it = obj.find(field);
  if (it == obj.end()) fail(w, field, "is missing");
  return *it;
}

std::string get_string(const json& obj, const char* field, const Where& w, bool required,
                       const std::string& fallback = "") {
  auto it = obj.find(field);
  if (it == obj.end()) {
    if (required) fail(w, field, "is missing");
    return fallback;
  }
  if (!it->is_string()) fail(w, field, "must be a string");
  return it->get<std::string>();
}

double to_number(const json& v, const std::string& field, const Where& w, bool non_negative) {
  if (!v.is_number()) fail(w, field, "must be a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) fail(w, field, "must be finite");
  if (non_negative && x < 0) fail(w, field, "must not be negative, got " + std::to_string(x));
  return x;
}

double get_number(const json& obj, const char* field, const Where& w, bool required,
                  double fallback = 0, bool non_negative = true) {
  auto it = obj.find(field);
  if (it == obj.end()) {
    if (required) fail(w, field, "is missing");
    return fallback;
  }
  return to_number(*it, field, w, non_negative);
}

int get_int(const json& obj, const char* field, const Where& w, bool required, int fallback) {
  auto it = obj.find(field);
  if (it == obj.end()) {
    if (required) fail(w, field, "is missing");
    return fallback;
  }
  if (!it->is_number_integer()) fail(w, field, "must be an integer");
  return it->get<int>();
}

void check_header(const json& doc, const char* format, int version, const std::string& source) {
  const Where w{source, ""};
  if (!doc.is_object()) throw ParseError(source + ": expected a JSON object at the top level");
  const std::string f = get_string(doc, "format", w, true);
  if (f != format) fail(w, "format", "is '" + f + "', expected '" + format + "'");
  const int v = get_int(doc, "version", w, true, 0);
  if (v != version) {
    fail(w, "version", "is " + std::to_string(v) + ", this build reads version " +
                           std::to_string(version));
  }
}


}  // namespace

// ---------------------------------------------------------------- graphs

json graph_to_json(const OpGraph& graph) {
  json ops = json::array();
  for (const Op& op : graph.ops()) {
    json o;
    o["name"] = op.name;
    o["type"] = op.type;
    o["phase"] = phase_name(op.phase);
    o["flops"] = op.flops;
    o["bytes_accessed"] = op.bytes_accessed;
    o["output_bytes"] = op.output_bytes;
    o["param_bytes"] = op.param_bytes;
    o["temp_bytes"] = op.temp_bytes;
    if (!op.colocation_group.empty()) o["colocation_group"] = op.colocation_group;
    if (op.has_measured_cost()) o["compute_us"] = op.compute_us;
    if (!op.shape.empty()) o["shape"] = op.shape;
    if (!op.block.empty()) o["block"] = op.block;
    if (op.layer >= 0) o["layer"] = op.layer;
    if (op.forward_of >= 0) o["forward_of"] = graph.op(op.forward_of).name;
    if (op.stream != 0) o["stream"] = op.stream;
    ops.push_back(std::move(o));
  }
  json edges = json::array();
  for (const Edge& e : graph.edges()) {
    edges.push_back({{"src", graph.op(e.src).name},
                     {"dst", graph.op(e.dst).name},
                     {"src_output", e.src_output},
                     {"bytes", e.bytes}});
  }
  json doc{{"format", "aware-graph"}, {"version", kGraphFormatVersion}, {"name", graph.name()}};
  if (graph.batch() > 0) doc["batch"] = graph.batch();
  doc["ops"] = std::move(ops);
  doc["edges"] = std::move(edges);
  return doc;
}

OpGraph graph_from_json(const json& doc, const std::string& source) {
  check_header(doc, "aware-graph", kGraphFormatVersion, source);
  const Where top{source, ""};
  check_fields(doc, {"format", "version", "name", "batch", "ops", "edges"}, top);
  OpGraph graph(get_string(doc, "name", top, false, source));
  graph.set_source(source);
  if (doc.contains("batch")) {
    // 0 would read as "no batch recorded" and print per-sample figures of batch 0.
    const double batch = get_number(doc, "batch", top, true);
    if (batch <= 0) fail(top, "batch", "must be > 0 (the samples one step processes), got 0");
    graph.set_batch(batch);
  }
  const json& ops = require(doc, "ops", top);
  if (!ops.is_array()) fail(top, "ops", "must be an array");
  if (ops.empty()) fail(top, "ops", "is empty: a training step needs at least one op");
  std::vector<std::string> forward_of(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const json& o = ops[i];
    Where w = array_element(source, "op", i, o);
    Op op;
    op.name = get_string(o, "name", w, true);
    w.object = "op '" + op.name + "'";
    check_fields(o,
                 {"name", "type", "phase", "flops", "bytes_accessed", "output_bytes", "param_bytes",
                  "temp_bytes", "colocation_group", "compute_us", "shape", "block", "layer",
                  "forward_of", "stream"},
                 w);
    if (op.name.empty()) fail(w, "name", "is empty");
    if (graph.find(op.name) >= 0) fail(w, "name", "is a duplicate");
    op.type = get_string(o, "type", w, false, "Op");
    const std::string phase = get_string(o, "phase", w, false, "forward");
    if (!parse_phase(phase, &op.phase)) fail(w, "phase", "must be forward, backward or update");
    op.flops = get_number(o, "flops", w, false);
    op.bytes_accessed = get_number(o, "bytes_accessed", w, false);
    op.param_bytes = get_number(o, "param_bytes", w, false);
    op.temp_bytes = get_number(o, "temp_bytes", w, false);
    if (auto it = o.find("output_bytes"); it != o.end()) {
      if (!it->is_array()) fail(w, "output_bytes", "must be an array of numbers");
      for (const json& b : *it) op.output_bytes.push_back(to_number(b, "output_bytes", w, true));
    }
    op.colocation_group = get_string(o, "colocation_group", w, false);
    if (o.contains("compute_us")) op.compute_us = get_number(o, "compute_us", w, true);
    if (auto it = o.find("shape"); it != o.end()) {
      if (!it->is_object()) fail(w, "shape", "must be an object of numbers");
      for (auto s = it->begin(); s != it->end(); ++s)
        op.shape[s.key()] = to_number(s.value(), "shape." + s.key(), w, false);
    }
    op.block = get_string(o, "block", w, false);
    op.layer = get_int(o, "layer", w, false, -1);
    op.stream = get_int(o, "stream", w, false, 0);
    if (op.stream != 0 && op.stream != 1) fail(w, "stream", "must be 0 (compute) or 1 (communication)");
    forward_of[i] = get_string(o, "forward_of", w, false);
    graph.add_op(std::move(op));
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (forward_of[i].empty()) continue;
    const int f = graph.find(forward_of[i]);
    if (f < 0) {
      fail(Where{source, "op '" + graph.op(static_cast<int>(i)).name + "'"}, "forward_of",
           "names unknown op '" + forward_of[i] + "'");
    }
    graph.mutable_op(static_cast<int>(i)).forward_of = f;
  }
  const json& edges = require(doc, "edges", top);
  if (!edges.is_array()) fail(top, "edges", "must be an array");
  std::set<std::tuple<int, int, int>> seen_edges;
  for (size_t i = 0; i < edges.size(); ++i) {
    const json& e = edges[i];
    Where w = array_element(source, "edge", i, e);
    const std::string src = get_string(e, "src", w, true);
    const std::string dst = get_string(e, "dst", w, true);
    w.object = "edge '" + src + "' -> '" + dst + "'";
    check_fields(e, {"src", "dst", "src_output", "bytes"}, w);
    const int s = graph.find(src);
    const int d = graph.find(dst);
    if (s < 0) fail(w, "src", "names unknown op '" + src + "'");
    if (d < 0) fail(w, "dst", "names unknown op '" + dst + "'");
    const int out = get_int(e, "src_output", w, false, 0);
    if (out < 0) fail(w, "src_output", "must not be negative");
    if (!seen_edges.insert({s, d, out}).second)
      fail(w, "dst", "repeats an earlier edge with the same src, dst and src_output");
    double bytes = -1;
    if (e.contains("bytes")) {
      bytes = get_number(e, "bytes", w, true);
    } else if (out >= static_cast<int>(graph.op(s).output_bytes.size())) {
      fail(w, "src_output", "is " + std::to_string(out) + " but op '" + src + "' has " +
                                std::to_string(graph.op(s).output_bytes.size()) +
                                " output sizes (give 'bytes')");
    }
    graph.add_edge(s, d, out, bytes);
  }
  try {
    graph.validate();
  } catch (const GraphError& e) {
    throw ParseError(e.what());
  }
  return graph;
}

OpGraph read_graph_file(const std::string& path) {
  return graph_from_json(parse_json_text(read_text_file(path), path), path);
}

void write_graph_file(const OpGraph& graph, const std::string& path) {
  write_text_file_atomic(path, graph_to_json(graph).dump(1) + "\n");
}

// ---------------------------------------------------------------- clusters

json cluster_to_json(const Cluster& cluster) {
  json devices = json::array();
  for (const Device& d : cluster.devices()) {
    devices.push_back({{"name", d.name},
                       {"kind", d.kind},
                       {"peak_flops", d.peak_flops},
                       {"efficiency", d.efficiency},
                       {"memory_bytes", d.memory_bytes},
                       {"memory_Bps", d.memory_Bps},
                       {"launch_overhead_us", d.launch_overhead_us}});
  }
  json links = json::array();
  for (const Link& l : cluster.links()) {
    links.push_back({{"name", l.name},
                     {"a", cluster.node_name(l.a)},
                     {"b", cluster.node_name(l.b)},
                     {"bandwidth_Bps", l.bandwidth_Bps},
                     {"latency_us", l.latency_us}});
  }
  json doc{{"format", "aware-cluster"}, {"version", kClusterFormatVersion},
           {"name", cluster.name()},    {"devices", std::move(devices)},
           {"switches", cluster.switches()}, {"links", std::move(links)}};
  if (cluster.is_mesh())
    doc["routing"] = {{"kind", "xy"}, {"width", cluster.mesh_width()}, {"height", cluster.mesh_height()}};
  return doc;
}

Cluster cluster_from_json(const json& doc, const std::string& source) {
  check_header(doc, "aware-cluster", kClusterFormatVersion, source);
  const Where top{source, ""};
  check_fields(doc, {"format", "version", "name", "devices", "switches", "links", "routing"}, top);
  Cluster cluster(get_string(doc, "name", top, false, source));
  cluster.set_source(source);
  const json& devices = require(doc, "devices", top);
  if (!devices.is_array() || devices.empty()) fail(top, "devices", "must be a non-empty array");
  {
    // Sizes first, before a device is added: adding checks each name against
    // the ones before it, and finalize() keeps a route per pair of devices.
    const auto count = [&](const char* field) -> long long {
      const auto it = doc.find(field);
      return it != doc.end() && it->is_array() ? static_cast<long long>(it->size()) : 0;
    };
    try {
      check_cluster_size(source, static_cast<long long>(devices.size()), count("switches"),
                         count("links"), doc.contains("routing"));
    } catch (const DeviceError& e) {
      throw ParseError(e.what());
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    const json& o = devices[i];
    Where w = array_element(source, "device", i, o);
    Device d;
    d.name = get_string(o, "name", w, true);
    w.object = "device '" + d.name + "'";
    check_fields(o,
                 {"name", "kind", "peak_flops", "efficiency", "memory_bytes", "memory_Bps",
                  "launch_overhead_us"},
                 w);
    d.kind = get_string(o, "kind", w, false, "gpu");
    d.peak_flops = get_number(o, "peak_flops", w, true);
    d.efficiency = get_number(o, "efficiency", w, false, 1.0);
    d.memory_bytes = get_number(o, "memory_bytes", w, true);
    d.memory_Bps = get_number(o, "memory_Bps", w, true);
    d.launch_overhead_us = get_number(o, "launch_overhead_us", w, false, 0);
    try {
      cluster.add_device(std::move(d));
    } catch (const DeviceError& e) {
      throw ParseError(e.what());
    }
  }
  if (auto it = doc.find("switches"); it != doc.end()) {
    if (!it->is_array()) fail(top, "switches", "must be an array of names");
    for (const json& s : *it) {
      if (!s.is_string()) fail(top, "switches", "must be an array of names");
      try {
        cluster.add_switch(s.get<std::string>());
      } catch (const DeviceError& e) {
        throw ParseError(e.what());
      }
    }
  }
  if (auto it = doc.find("links"); it != doc.end()) {
    if (!it->is_array()) fail(top, "links", "must be an array");
    std::set<std::string> link_names;
    // Node ids by name, once: Cluster::find_node looks through every node.
    std::unordered_map<std::string, int> node_by_name;
    for (int n = 0; n < cluster.num_nodes(); ++n) node_by_name.emplace(cluster.node_name(n), n);
    const auto node = [&](const std::string& name) {
      const auto found = node_by_name.find(name);
      return found == node_by_name.end() ? -1 : found->second;
    };
    for (size_t i = 0; i < it->size(); ++i) {
      const json& o = (*it)[i];
      Where w = array_element(source, "link", i, o);
      Link l;
      l.name = get_string(o, "name", w, false);
      if (!l.name.empty()) w.object = "link '" + l.name + "'";
      check_fields(o, {"name", "a", "b", "bandwidth_Bps", "latency_us"}, w);
      if (!l.name.empty() && !link_names.insert(l.name).second)
        fail(w, "name", "is a duplicate (link names must be unique)");
      const std::string a = get_string(o, "a", w, true);
      const std::string b = get_string(o, "b", w, true);
      l.a = node(a);
      l.b = node(b);
      if (l.a < 0) fail(w, "a", "names unknown device or switch '" + a + "'");
      if (l.b < 0) fail(w, "b", "names unknown device or switch '" + b + "'");
      if (l.a == l.b) fail(w, "b", "is the same node as 'a'");
      l.bandwidth_Bps = get_number(o, "bandwidth_Bps", w, true);
      if (l.bandwidth_Bps <= 0) fail(w, "bandwidth_Bps", "must be positive");
      l.latency_us = get_number(o, "latency_us", w, false, 0);
      cluster.add_link(std::move(l));
    }
  }
  if (auto it = doc.find("routing"); it != doc.end()) {
    // A mesh: devices are its cores row-major, switch i core i's router (core/mesh.h).
    const Where w{source, "routing"};
    if (!it->is_object()) fail(top, "routing", "must be an object {kind: xy, width, height}");
    check_fields(*it, {"kind", "width", "height"}, w);
    if (get_string(*it, "kind", w, true) != "xy") fail(w, "kind", "must be \"xy\" (dimension-order routes on a mesh)");
    const int width = get_int(*it, "width", w, true, 0), height = get_int(*it, "height", w, true, 0);
    if (width < 1 || height < 1) fail(w, "width", "and height must be at least 1");
    if (static_cast<long long>(width) * height > kMeshClusterMaxCores)
      fail(w, "width",
           "x height is " + std::to_string(static_cast<long long>(width) * height) +
               " cores; a mesh cluster holds at most " + std::to_string(kMeshClusterMaxCores));
    cluster.set_mesh_routing(width, height);
  }
  try {
    cluster.finalize();
  } catch (const DeviceError& e) {
    throw ParseError(e.what());
  }
  return cluster;
}

namespace {

// Counts the elements of the top-level "devices", "switches" and "links"
// arrays, and notes "routing", without building the document: a file with a
// million devices is refused before it takes gigabytes as a JSON tree. Stops
// quietly on bad JSON; the real parse reports it.
class ClusterSizeCounter {
 public:
  long long devices = 0, switches = 0, links = 0;
  bool mesh = false;

  bool null() { return element(); }
  bool boolean(bool) { return element(); }
  bool number_integer(json::number_integer_t) { return element(); }
  bool number_unsigned(json::number_unsigned_t) { return element(); }
  bool number_float(json::number_float_t, const json::string_t&) { return element(); }
  bool string(json::string_t&) { return element(); }
  bool binary(json::binary_t&) { return element(); }
  bool start_object(std::size_t) { return open(); }
  bool start_array(std::size_t) { return open(); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& name) {
    if (depth_ == 1) {
      counter_ = name == "devices"    ? &devices
                 : name == "switches" ? &switches
                 : name == "links"    ? &links
                                      : nullptr;
      mesh = mesh || name == "routing";
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  // A value directly inside a counted top-level array (depth 2) is one element.
  bool element() {
    if (depth_ == 2 && counter_ != nullptr) ++*counter_;
    return true;
  }
  bool open() {
    element();
    ++depth_;
    return true;
  }
  bool close() {
    if (--depth_ == 1) counter_ = nullptr;
    return true;
  }
  int depth_ = 0;
  long long* counter_ = nullptr;
};

}  // namespace

Cluster read_cluster_file(const std::string& path) {
  const std::string text = read_text_file(path);
  ClusterSizeCounter sizes;
  json::sax_parse(text, &sizes);
  try {
    check_cluster_size(path, sizes.devices, sizes.switches, sizes.links, sizes.mesh);
  } catch (const DeviceError& e) {
    throw ParseError(e.what());
  }
  return cluster_from_json(parse_json_text(text, path), path);
}

void write_cluster_file(const Cluster& cluster, const std::string& path) {
  write_text_file_atomic(path, cluster_to_json(cluster).dump(1) + "\n");
}

// ---------------------------------------------------------------- placements

json placement_to_json(const OpGraph& graph, const Cluster& cluster, const Placement& placement) {
  json devices = json::object();
  for (int op = 0; op < graph.num_ops(); ++op)
    devices[graph.op(op).name] = cluster.device(placement[op]).name;
  return json{{"format", "aware-placement"},
              {"version", kPlacementFormatVersion},
              {"graph", graph.name()},
              {"cluster", cluster.name()},
              {"devices", std::move(devices)}};
}

Placement placement_from_json(const json& doc, const OpGraph& graph, const Cluster& cluster,
                              const std::string& source) {
  check_header(doc, "aware-placement", kPlacementFormatVersion, source);
  const Where top{source, ""};
  check_fields(doc, {"format", "version", "graph", "cluster", "devices"}, top);
  const json& devices = require(doc, "devices", top);
  if (!devices.is_object()) fail(top, "devices", "must be an object mapping op name to device");
  Placement placement(std::vector<int>(graph.num_ops(), -1));
  // Device ids by name, once: Cluster::find_device looks through every device.
  std::unordered_map<std::string, int> device_by_name;
  for (int d = 0; d < cluster.num_devices(); ++d) device_by_name.emplace(cluster.device(d).name, d);
  for (auto it = devices.begin(); it != devices.end(); ++it) {
    const Where w{source, "op '" + it.key() + "'"};
    const int op = graph.find(it.key());
    if (op < 0) throw ParseError(w.prefix() + "is not an op of graph '" + graph.name() + "'");
    int device = -1;
    if (it.value().is_string()) {
      const auto found = device_by_name.find(it.value().get<std::string>());
      device = found == device_by_name.end() ? -1 : found->second;
      if (device < 0) {
        fail(w, "device", "names device '" + it.value().get<std::string>() +
                              "' that cluster '" + cluster.name() + "' lacks");
      }
    } else if (it.value().is_number_integer()) {
      device = it.value().get<int>();
      if (device < 0 || device >= cluster.num_devices()) {
        fail(w, "device", "is " + std::to_string(device) + " but cluster '" + cluster.name() +
                              "' has " + std::to_string(cluster.num_devices()) + " devices");
      }
    } else {
      fail(w, "device", "must be a device name or index");
    }
    placement[op] = device;
  }
  for (int op = 0; op < graph.num_ops(); ++op) {
    if (placement[op] < 0) {
      throw ParseError(source + ": op '" + graph.op(op).name +
                       "': field 'devices' has no device for this op");
    }
  }
  try {
    check_placement(graph, cluster, placement, source);
  } catch (const DeviceError& e) {
    throw ParseError(e.what());
  }
  return placement;
}

Placement read_placement_file(const std::string& path, const OpGraph& graph,
                              const Cluster& cluster) {
  return placement_from_json(parse_json_text(read_text_file(path), path), graph, cluster, path);
}

void write_placement_file(const OpGraph& graph, const Cluster& cluster,
                          const Placement& placement, const std::string& path) {
  write_text_file_atomic(path, placement_to_json(graph, cluster, placement).dump(1) + "\n");
}

}  // namespace aware
