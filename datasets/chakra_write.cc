// Chakra execution traces out: write_chakra_traces, is_chakra_path (datasets/chakra.h).
#include "datasets/chakra.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "core/errors.h"
#include "core/formats.h"
#include "datasets/chakra_wire.h"

namespace aware {

namespace {
namespace pb = ChakraProtoMsg;
using namespace chakra_detail;
}  // namespace

namespace {

// ---- export ----------------------------------------------------------------------------

struct CommPair {
  int src_op = -1, src_output = 0, src_device = -1, dst_device = -1;
  double bytes = 0, start_us = 0, end_us = 0;
  bool timed = false;
};

}  // namespace

bool is_chakra_path(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return true;
  return path.size() > 3 && path.compare(path.size() - 3, 3, ".et") == 0;
}

namespace {

// The collective an op belongs to: "PREFIX/b<K>" for a communication-stream op of
// the strategy block whose name has such a component followed by more; "" else.
std::string collective_of(const Op& op) {
  if (op.stream != 1 || op.block != "strategy") return "";
  for (std::size_t at = op.name.rfind("/b"); at != std::string::npos && at > 0; at = op.name.rfind("/b", at - 1)) {
    std::size_t end = at + 2;
    while (end < op.name.size() && std::isdigit(static_cast<unsigned char>(op.name[end]))) ++end;
    if (end > at + 2 && end < op.name.size() && op.name[end] == '/') return op.name.substr(0, end);
  }
  return "";
}

}  // namespace

ChakraExport write_chakra_traces(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                                 const Trace& trace, double step_us, const std::string& evaluator,
                                 const std::string& dir, const std::string& prefix, bool collectives_as_nodes) {
  const int n = graph.num_ops();
  check_placement(graph, cluster, placement, "placement");
  if (prefix.empty() || prefix.find('/') != std::string::npos)
    throw ConfigError("the trace prefix must be a plain file name, got '" + prefix + "'");
  std::vector<double> start(n, -1), end(n, -1);
  for (const OpSpan& s : trace.ops) {
    if (s.op < 0 || s.op >= n) throw ConfigError("the trace names op " + std::to_string(s.op) + ", outside the graph");
    start[s.op] = s.start_us;
    end[s.op] = s.end_us;
  }
  for (int op = 0; op < n; ++op)
    if (start[op] < 0) throw ConfigError("the trace has no span for op " + graph.op(op).name);

  // Collectives written as one node per device (group_of[op] >= 0), and the node
  // that stands for each op on its device: its own id, or its collective's.
  const int ranks = cluster.num_devices();
  std::vector<int> group_of(n, -1);
  std::vector<std::string> group_names;
  if (collectives_as_nodes) {
    std::map<std::string, int> index;
    for (int op = 0; op < n; ++op) {
      const std::string key = collective_of(graph.op(op));
      if (key.empty()) continue;
      auto it = index.emplace(key, static_cast<int>(group_names.size())).first;
      if (it->second == static_cast<int>(group_names.size())) group_names.push_back(key);
      group_of[op] = it->second;
    }
  }
  // One send/receive pair per producer output and receiving device.
  std::map<std::tuple<int, int, int>, int> pair_of;
  std::vector<CommPair> pairs;
  for (const Edge& e : graph.edges()) {
    const int from = placement[e.src], to = placement[e.dst];
    if (from == to) continue;
    if (group_of[e.src] >= 0 && group_of[e.src] == group_of[e.dst]) continue;  // inside a collective
    const auto key = std::make_tuple(e.src, e.src_output, to);
    if (pair_of.count(key)) {
      pairs[pair_of[key]].bytes = std::max(pairs[pair_of[key]].bytes, e.bytes);
      continue;
    }
    pair_of[key] = static_cast<int>(pairs.size());
    CommPair p;
    p.src_op = e.src;
    p.src_output = e.src_output;
    p.src_device = from;
    p.dst_device = to;
    p.bytes = e.bytes;
    p.start_us = p.end_us = end[e.src];
    pairs.push_back(p);
  }
  for (const TransferSpan& t : trace.transfers) {
    for (CommPair& p : pairs) {
      if (p.src_op != t.src_op || p.src_output != t.src_output) continue;
      if (t.dst_device >= 0 && t.dst_device != p.dst_device) continue;
      if (p.timed) continue;
      p.start_us = t.start_us;
      p.end_us = t.end_us;
      p.bytes = t.bytes > 0 ? t.bytes : p.bytes;
      p.timed = true;
    }
  }

  const std::uint64_t base = static_cast<std::uint64_t>(n);
  const std::uint64_t coll_base = base + 2 * static_cast<std::uint64_t>(pairs.size());
  const auto node_of = [&](int op) {
    return group_of[op] < 0 ? static_cast<std::uint64_t>(op)
                            : coll_base + static_cast<std::uint64_t>(group_of[op]) * ranks + placement[op];
  };
  // (start, id, message) per rank, sorted by start then id.
  std::vector<std::vector<std::tuple<double, std::uint64_t, pb::Node>>> nodes(ranks);
  for (int op = 0; op < n; ++op) {
    const Op& o = graph.op(op);
    const int r = placement[op];
    if (group_of[op] >= 0) continue;  // written as its collective's node below
    pb::Node node;
    node.set_id(static_cast<std::uint64_t>(op));
    node.set_name(o.name);
    node.set_type(pb::COMP_NODE);
    node.set_start_time_micros(whole_us(start[op]));
    node.set_duration_micros(whole_us(end[op] - start[op]));
    std::vector<std::int64_t> dep_outputs;
    std::vector<double> dep_bytes;
    for (int e : graph.in_edges(op)) {
      const Edge& edge = graph.edge(e);
      if (placement[edge.src] == r) {
        node.add_data_deps(node_of(edge.src));
      } else {
        const int k = pair_of.at(std::make_tuple(edge.src, edge.src_output, r));
        node.add_data_deps(base + 2 * static_cast<std::uint64_t>(k) + 1);
      }
      dep_outputs.push_back(edge.src_output);
      dep_bytes.push_back(edge.bytes);
    }
    attr_bool(node, "is_cpu_op", false);
    attr_int64(node, "num_ops", static_cast<std::int64_t>(std::llround(o.flops)));
    attr_uint64(node, "tensor_size", static_cast<std::uint64_t>(std::llround(o.total_output_bytes())));
    attr_string(node, "op_type", o.type);
    attr_string(node, "phase", phase_name(o.phase));
    attr_double(node, "flops", o.flops);
    attr_double(node, "bytes_accessed", o.bytes_accessed);
    attr_doubles(node, "output_bytes", o.output_bytes);
    attr_double(node, "param_bytes", o.param_bytes);
    attr_double(node, "temp_bytes", o.temp_bytes);
    attr_double(node, "start_us", start[op]);
    attr_double(node, "duration_us", end[op] - start[op]);
    attr_int64s(node, "data_dep_outputs", dep_outputs);
    attr_doubles(node, "data_dep_bytes", dep_bytes);
    if (o.stream != 0) attr_int64(node, "stream", o.stream);
    if (!o.colocation_group.empty()) attr_string(node, "colocation_group", o.colocation_group);
    nodes[r].emplace_back(start[op], node.id(), std::move(node));
  }
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const CommPair& p = pairs[k];
    const std::string what = graph.op(p.src_op).name + ":" + std::to_string(p.src_output);
    for (int side = 0; side < 2; ++side) {
      pb::Node node;
      node.set_id(base + 2 * k + side);
      node.set_name((side == 0 ? "send/" : "recv/") + what + "/" + std::to_string(p.src_device) + "->" +
                    std::to_string(p.dst_device));
      node.set_type(side == 0 ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
      node.set_start_time_micros(whole_us(p.start_us));
      node.set_duration_micros(whole_us(p.end_us - p.start_us));
      if (side == 0) node.add_data_deps(node_of(p.src_op));
      attr_bool(node, "is_cpu_op", false);
      attr_int32(node, "comm_src", p.src_device);
      attr_int32(node, "comm_dst", p.dst_device);
      attr_int64(node, "comm_size", static_cast<std::int64_t>(std::llround(p.bytes)));
      attr_int32(node, "comm_tag", static_cast<std::int32_t>(k));
      attr_double(node, "comm_bytes", p.bytes);
      attr_int64(node, "src_output", p.src_output);
      attr_double(node, "duration_us", p.end_us - p.start_us);
      nodes[side == 0 ? p.src_device : p.dst_device].emplace_back(p.start_us, node.id(), std::move(node));
    }
  }

  // One COMM_COLL_NODE per collective and device: the span of its ops there, the
  // bucket's bytes, and the data dependencies of its ops from outside it.
  for (std::size_t g = 0; g < group_names.size(); ++g) {
    for (int r = 0; r < ranks; ++r) {
      double first = -1, last = 0, bytes = 0;
      std::vector<std::uint64_t> deps;
      std::vector<std::int64_t> dep_outputs;
      std::vector<double> dep_bytes;
      for (int op = 0; op < n; ++op) {
        if (group_of[op] != static_cast<int>(g) || placement[op] != r) continue;
        first = first < 0 ? start[op] : std::min(first, start[op]);
        last = std::max(last, end[op]);
        for (double b : graph.op(op).output_bytes) bytes = std::max(bytes, b);
        for (int e : graph.in_edges(op)) {
          const Edge& edge = graph.edge(e);
          if (group_of[edge.src] == static_cast<int>(g)) continue;
          deps.push_back(placement[edge.src] == r ? node_of(edge.src)
                                                  : base + 2 * static_cast<std::uint64_t>(
                                                                   pair_of.at(std::make_tuple(edge.src, edge.src_output, r))) +
                                                        1);
          dep_outputs.push_back(edge.src_output);
          dep_bytes.push_back(edge.bytes);
        }
      }
      if (first < 0) continue;  // the collective does not touch this device
      pb::Node node;
      node.set_id(coll_base + g * ranks + r);
      node.set_name(group_names[g] + "/allreduce/r" + std::to_string(r));
      node.set_type(pb::COMM_COLL_NODE);
      node.set_start_time_micros(whole_us(first));
      node.set_duration_micros(whole_us(last - first));
      for (auto d : deps) node.add_data_deps(d);
      attr_bool(node, "is_cpu_op", false);
      attr_int64(node, "comm_type", pb::ALL_REDUCE);
      attr_int64(node, "comm_size", static_cast<std::int64_t>(std::llround(bytes)));
      attr_double(node, "comm_bytes", bytes);
      attr_double(node, "duration_us", last - first);
      attr_int64s(node, "data_dep_outputs", dep_outputs);
      attr_doubles(node, "data_dep_bytes", dep_bytes);
      nodes[r].emplace_back(first, node.id(), std::move(node));
    }
  }

  ChakraExport out;
  out.comm_pairs = static_cast<int>(pairs.size());
  for (const auto& list : nodes)
    for (const auto& item : list) out.collectives += std::get<2>(item).type() == pb::COMM_COLL_NODE;
  std::filesystem::create_directories(dir);
  std::vector<std::pair<std::string, std::string>> files;
  for (int r = 0; r < ranks; ++r) {
    std::string bytes;
    pb::GlobalMetadata meta;
    meta.set_version(kVersion);
    attr_string(meta, "schema", kSchema);
    attr_string(meta, "graph", graph.name());
    attr_double(meta, "graph_batch", graph.batch());
    attr_string(meta, "cluster", cluster.name());
    attr_string(meta, "device", cluster.device(r).name);
    attr_int64(meta, "rank", r);
    attr_int64(meta, "ranks", ranks);
    attr_string(meta, "evaluator", evaluator);
    attr_double(meta, "step_us", step_us);
    append_message(bytes, meta);
    auto& list = nodes[r];
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    for (const auto& item : list) append_message(bytes, std::get<2>(item));
    out.nodes += static_cast<int>(list.size());
    const std::string path = (std::filesystem::path(dir) / (prefix + "." + std::to_string(r) + ".et")).string();
    files.emplace_back(path, std::move(bytes));
    out.files.push_back(path);
  }
  write_files_atomic(files);
  return out;
}

}  // namespace aware
