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
#include "et_def.pb.h"

namespace aware {

namespace {

namespace pb = ChakraProtoMsg;

// What our own exports say in GlobalMetadata's "schema" attribute.
constexpr const char* kSchema = "aware-workbench/chakra-export-1";
constexpr const char* kVersion = "0.0.4";  // the version ASTRA-sim's example traces carry

// ---- framing: a base-128 varint of the size, then the message -------------------

void append_message(std::string& out, const google::protobuf::MessageLite& message) {
  std::string bytes;
  message.SerializeToString(&bytes);
  std::uint64_t size = bytes.size();
  do {
    std::uint8_t byte = size & 0x7f;
    size >>= 7;
    if (size != 0) byte |= 0x80;
    out.push_back(static_cast<char>(byte));
  } while (size != 0);
  out += bytes;
}

class FrameReader {
 public:
  FrameReader(const std::string& data, const std::string& file) : data_(data), file_(file) {}
  bool done() const { return pos_ >= data_.size(); }
  std::size_t position() const { return pos_; }
  // The next message's bytes; ParseError when the file ends inside its prefix or body.
  std::string next(const std::string& what) {
    const std::size_t at = pos_;
    std::uint64_t size = 0;
    int shift = 0;
    for (;;) {
      if (pos_ >= data_.size())
        throw ParseError(file_ + ": truncated: the length of " + what + " at byte " + std::to_string(at) +
                         " runs past the end of the file");
      const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
      size |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
      shift += 7;
      if (shift > 28)
        throw ParseError(file_ + ": the length of " + what + " at byte " + std::to_string(at) +
                         " is not a 32-bit varint: not a Chakra execution trace");
    }
    const std::size_t left = data_.size() - pos_;
    if (size > left)
      throw ParseError(file_ + ": truncated: " + what + " at byte " + std::to_string(at) + " declares " +
                       std::to_string(size) + " bytes, the file has " + std::to_string(left) + " left");
    std::string out = data_.substr(pos_, size);
    pos_ += size;
    return out;
  }

 private:
  const std::string& data_;
  const std::string& file_;
  std::size_t pos_ = 0;
};

// ---- attributes ---------------------------------------------------------------------

pb::AttributeProto* add_attr(google::protobuf::RepeatedPtrField<pb::AttributeProto>* attrs, const std::string& name) {
  pb::AttributeProto* a = attrs->Add();
  a->set_name(name);
  return a;
}

template <class Msg>
void attr_bool(Msg& m, const std::string& name, bool v) { add_attr(m.mutable_attr(), name)->set_bool_val(v); }
template <class Msg>
void attr_int64(Msg& m, const std::string& name, std::int64_t v) { add_attr(m.mutable_attr(), name)->set_int64_val(v); }
template <class Msg>
void attr_uint64(Msg& m, const std::string& name, std::uint64_t v) { add_attr(m.mutable_attr(), name)->set_uint64_val(v); }
template <class Msg>
void attr_int32(Msg& m, const std::string& name, std::int32_t v) { add_attr(m.mutable_attr(), name)->set_int32_val(v); }
template <class Msg>
void attr_double(Msg& m, const std::string& name, double v) { add_attr(m.mutable_attr(), name)->set_double_val(v); }
template <class Msg>
void attr_string(Msg& m, const std::string& name, const std::string& v) {
  add_attr(m.mutable_attr(), name)->set_string_val(v);
}
template <class Msg>
void attr_doubles(Msg& m, const std::string& name, const std::vector<double>& v) {
  auto* list = add_attr(m.mutable_attr(), name)->mutable_double_list();
  for (double x : v) list->add_values(x);
}
template <class Msg>
void attr_int64s(Msg& m, const std::string& name, const std::vector<std::int64_t>& v) {
  auto* list = add_attr(m.mutable_attr(), name)->mutable_int64_list();
  for (std::int64_t x : v) list->add_values(x);
}

template <class Msg>
const pb::AttributeProto* find_attr(const Msg& m, const std::string& name) {
  for (const pb::AttributeProto& a : m.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

// A number from any scalar member (Chakra's writers disagree on the integer type).
bool attr_number(const pb::AttributeProto* a, double* out) {
  if (a == nullptr) return false;
  using A = pb::AttributeProto;
  switch (a->value_case()) {
    case A::kDoubleVal: *out = a->double_val(); return true;
    case A::kFloatVal: *out = a->float_val(); return true;
    case A::kInt32Val: *out = a->int32_val(); return true;
    case A::kInt64Val: *out = static_cast<double>(a->int64_val()); return true;
    case A::kUint32Val: *out = a->uint32_val(); return true;
    case A::kUint64Val: *out = static_cast<double>(a->uint64_val()); return true;
    case A::kSint32Val: *out = a->sint32_val(); return true;
    case A::kSint64Val: *out = static_cast<double>(a->sint64_val()); return true;
    case A::kFixed32Val: *out = a->fixed32_val(); return true;
    case A::kFixed64Val: *out = static_cast<double>(a->fixed64_val()); return true;
    case A::kSfixed32Val: *out = a->sfixed32_val(); return true;
    case A::kSfixed64Val: *out = static_cast<double>(a->sfixed64_val()); return true;
    case A::kBoolVal: *out = a->bool_val() ? 1 : 0; return true;
    default: return false;
  }
}

template <class Msg>
double number_or(const Msg& m, const std::string& name, double fallback) {
  double v = 0;
  return attr_number(find_attr(m, name), &v) ? v : fallback;
}

template <class Msg>
std::string string_or(const Msg& m, const std::string& name, const std::string& fallback) {
  const pb::AttributeProto* a = find_attr(m, name);
  return a != nullptr && a->value_case() == pb::AttributeProto::kStringVal ? a->string_val() : fallback;
}

std::vector<double> doubles_of(const pb::Node& n, const std::string& name) {
  std::vector<double> out;
  const pb::AttributeProto* a = find_attr(n, name);
  if (a == nullptr) return out;
  if (a->value_case() == pb::AttributeProto::kDoubleList)
    for (double v : a->double_list().values()) out.push_back(v);
  if (a->value_case() == pb::AttributeProto::kInt64List)
    for (auto v : a->int64_list().values()) out.push_back(static_cast<double>(v));
  if (a->value_case() == pb::AttributeProto::kUint64List)
    for (auto v : a->uint64_list().values()) out.push_back(static_cast<double>(v));
  return out;
}

std::uint64_t whole_us(double us) { return us > 0 ? static_cast<std::uint64_t>(std::llround(us)) : 0; }

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

// ---- import ------------------------------------------------------------------------------

namespace {

struct RankFile {
  std::string path;
  int rank = 0;
  pb::GlobalMetadata meta;
  std::vector<pb::Node> nodes;
  std::map<std::uint64_t, int> index_of_id;
};

std::vector<std::pair<std::string, int>> trace_files(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> names;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".et") names.push_back(entry.path().string());
    if (names.empty()) throw ParseError(path + ": the folder holds no .et file");
  } else {
    if (!std::filesystem::exists(path, ec)) throw ParseError(path + ": no such file");
    names.push_back(path);
  }
  // PREFIX.R.et: ordered by R when every file has a distinct one; else by name.
  static const std::regex numbered(R"(.*\.([0-9]{1,9})\.et$)");
  std::vector<std::pair<std::string, int>> out;
  std::set<int> seen;
  bool all_numbered = true;
  for (const std::string& name : names) {
    std::smatch m;
    if (std::regex_match(name, m, numbered) && seen.insert(std::stoi(m[1])).second) {
      out.emplace_back(name, std::stoi(m[1]));
    } else {
      all_numbered = false;
    }
  }
  if (!all_numbered || names.size() == 1) {
    out.clear();
    std::sort(names.begin(), names.end());
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::smatch m;
      const bool one = names.size() == 1 && std::regex_match(names[i], m, numbered);
      out.emplace_back(names[i], one ? std::stoi(m[1]) : static_cast<int>(i));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return out;
}

RankFile read_rank_file(const std::string& path, int rank) {
  RankFile f;
  f.path = path;
  f.rank = rank;
  const std::string data = read_text_file(path);
  if (data.size() >= 2 && static_cast<std::uint8_t>(data[0]) == 0x1f && static_cast<std::uint8_t>(data[1]) == 0x8b)
    throw ParseError(path + ": gzip-compressed: gunzip it first (a Chakra trace is read as written)");
  if (data.empty()) throw ParseError(path + ": empty: a Chakra trace starts with its GlobalMetadata");
  FrameReader reader(data, path);
  std::string meta;
  try {
    meta = reader.next("the GlobalMetadata");
  } catch (const ParseError&) {
    throw ParseError(path + ": not a Chakra execution trace: its first length prefix (" + std::to_string(data.size()) +
                     "-byte file) does not frame a GlobalMetadata message");
  }
  if (meta.empty() || !f.meta.ParseFromString(meta))
    throw ParseError(path + ": not a Chakra execution trace: the first message does not parse as its GlobalMetadata");
  int index = 0;
  while (!reader.done()) {
    const std::size_t at = reader.position();
    const std::string bytes = reader.next("node message " + std::to_string(index));
    pb::Node node;
    if (!node.ParseFromString(bytes))
      throw ParseError(path + ": node message " + std::to_string(index) + " at byte " + std::to_string(at) +
                       " does not parse as a Chakra Node");
    const std::string label = "node " + std::to_string(node.id()) + (node.name().empty() ? "" : " (" + node.name() + ")");
    const int type = static_cast<int>(node.type());
    if (type <= pb::INVALID_NODE || type > pb::COMM_COLL_NODE)
      throw ParseError(path + ": " + label + ": unknown node type " + std::to_string(type) +
                       " (Chakra's types are 1 METADATA to 7 COMM_COLL)");
    if (!f.index_of_id.emplace(node.id(), static_cast<int>(f.nodes.size())).second)
      throw ParseError(path + ": " + label + ": a second node with id " + std::to_string(node.id()));
    f.nodes.push_back(std::move(node));
    ++index;
  }
  return f;
}

const char* collective_type(std::int64_t comm_type) {
  static const char* names[] = {"AllReduce", "Reduce",        "AllGather",          "Gather",  "Scatter",
                                "Broadcast", "AllToAll",      "ReduceScatter",      "ReduceScatterBlock", "Barrier"};
  return comm_type >= 0 && comm_type < 10 ? names[comm_type] : "Collective";
}

bool is_comm_pair_node(const pb::Node& n) { return n.type() == pb::COMM_SEND_NODE || n.type() == pb::COMM_RECV_NODE; }

}  // namespace

ChakraImport read_chakra_traces(const std::string& path) {
  ChakraImport out;
  std::vector<RankFile> files;
  for (const auto& [file, rank] : trace_files(path)) files.push_back(read_rank_file(file, rank));
  out.ranks = static_cast<int>(files.size());
  out.version = files.front().meta.version();
  std::map<int, int> file_of_rank;
  for (std::size_t i = 0; i < files.size(); ++i) {
    file_of_rank[files[i].rank] = static_cast<int>(i);
    out.files.push_back(files[i].path);
    out.nodes += static_cast<int>(files[i].nodes.size());
  }
  std::string name = string_or(files.front().meta, "graph", "");
  if (name.empty()) name = std::filesystem::path(files.front().path).stem().stem().string();
  out.graph = OpGraph(name);
  out.graph.set_source(path);
  const double batch = number_or(files.front().meta, "graph_batch", 0);
  if (batch > 0) out.graph.set_batch(batch);

  // Send/receive matching by (source rank, destination rank, tag), in file order.
  using Key = std::tuple<int, int, long long>;
  std::map<Key, std::vector<std::pair<int, int>>> sends, recvs;  // (file, node)
  for (std::size_t fi = 0; fi < files.size(); ++fi)
    for (std::size_t ni = 0; ni < files[fi].nodes.size(); ++ni) {
      const pb::Node& n = files[fi].nodes[ni];
      if (!is_comm_pair_node(n)) continue;
      const bool send = n.type() == pb::COMM_SEND_NODE;
      const int src = static_cast<int>(number_or(n, "comm_src", send ? files[fi].rank : -1));
      const int dst = static_cast<int>(number_or(n, "comm_dst", send ? -1 : files[fi].rank));
      const auto tag = static_cast<long long>(number_or(n, "comm_tag", 0));
      (send ? sends : recvs)[Key{src, dst, tag}].emplace_back(static_cast<int>(fi), static_cast<int>(ni));
    }
  // matched[file][node] = the partner (file, node) of a matched send or receive.
  std::vector<std::vector<std::pair<int, int>>> partner(files.size());
  std::vector<std::tuple<int, int, int, int>> op_pairs;  // matched, but the send names no producer: two ops
  for (std::size_t fi = 0; fi < files.size(); ++fi) partner[fi].assign(files[fi].nodes.size(), {-1, -1});
  for (auto& [key, list] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end()) continue;
    const std::size_t m = std::min(list.size(), it->second.size());
    for (std::size_t i = 0; i < m; ++i) {
      const auto [sf, sn] = list[i];
      const auto [rf, rn] = it->second[i];
      // A matched pair becomes an edge only when the send names its producer.
      bool has_producer = false;
      for (auto d : files[sf].nodes[sn].data_deps()) {
        auto found = files[sf].index_of_id.find(d);
        if (found != files[sf].index_of_id.end() && !is_comm_pair_node(files[sf].nodes[found->second]) &&
            files[sf].nodes[found->second].type() != pb::METADATA_NODE)
          has_producer = true;
      }
      if (!has_producer) {
        op_pairs.emplace_back(sf, sn, rf, rn);
        continue;
      }
      partner[sf][sn] = {rf, rn};
      partner[rf][rn] = {sf, sn};
      ++out.comm_pairs;
    }
  }

  // The order ops join the graph: a graph of ours comes back in its own op order
  // (its compute nodes' ids are the op ids, unique over the ranks), so that a
  // simulator's ties break as they did; any other trace rank by rank, in file order.
  bool ours = true;
  for (const RankFile& f : files) ours = ours && string_or(f.meta, "schema", "") == kSchema;
  std::vector<std::pair<int, int>> order;
  for (std::size_t fi = 0; fi < files.size(); ++fi)
    for (std::size_t ni = 0; ni < files[fi].nodes.size(); ++ni) order.emplace_back(static_cast<int>(fi), static_cast<int>(ni));
  if (ours)
    std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      return files[a.first].nodes[a.second].id() < files[b.first].nodes[b.second].id();
    });

  // Ops: every node but metadata and matched sends/receives.
  std::vector<std::vector<int>> op_of(files.size());
  for (std::size_t fi = 0; fi < files.size(); ++fi) op_of[fi].assign(files[fi].nodes.size(), -1);
  std::set<std::string> names;
  {
    for (const auto& [fi, ni] : order) {
      const pb::Node& n = files[fi].nodes[ni];
      if (n.type() == pb::METADATA_NODE || partner[fi][ni].first >= 0) continue;
      Op op;
      op.name = n.name().empty() ? "node" + std::to_string(n.id()) : n.name();
      if (names.count(op.name)) op.name = "r" + std::to_string(files[fi].rank) + "/" + op.name;
      if (names.count(op.name)) op.name += "#" + std::to_string(n.id());
      names.insert(op.name);
      const double duration = number_or(n, "duration_us", static_cast<double>(n.duration_micros()));
      op.compute_us = duration;
      op.flops = number_or(n, "flops", number_or(n, "num_ops", 0));
      op.bytes_accessed = number_or(n, "bytes_accessed", 0);
      op.param_bytes = number_or(n, "param_bytes", 0);
      op.temp_bytes = number_or(n, "temp_bytes", 0);
      op.output_bytes = doubles_of(n, "output_bytes");
      op.stream = static_cast<int>(number_or(n, "stream", 0));
      op.colocation_group = string_or(n, "colocation_group", "");
      Phase phase = Phase::kForward;
      if (parse_phase(string_or(n, "phase", "forward"), &phase)) op.phase = phase;
      switch (n.type()) {
        case pb::COMP_NODE:
          op.type = string_or(n, "op_type", "ChakraComp");
          if (op.output_bytes.empty()) op.output_bytes = {number_or(n, "tensor_size", 0)};
          break;
        case pb::COMM_COLL_NODE:
          op.type = collective_type(static_cast<std::int64_t>(number_or(n, "comm_type", -1)));
          op.output_bytes = {number_or(n, "comm_size", 0)};
          op.stream = 1;
          break;
        case pb::COMM_SEND_NODE:
        case pb::COMM_RECV_NODE:
          op.type = n.type() == pb::COMM_SEND_NODE ? "ChakraSend" : "ChakraRecv";
          op.output_bytes = {number_or(n, "comm_bytes", number_or(n, "comm_size", 0))};
          op.stream = 1;
          break;
        default:  // memory load / store
          op.type = n.type() == pb::MEM_LOAD_NODE ? "ChakraMemLoad" : "ChakraMemStore";
          op.output_bytes = {number_or(n, "tensor_size", 0)};
          break;
      }
      if (!std::isfinite(op.compute_us) || op.compute_us < 0)
        throw ParseError(files[fi].path + ": node " + std::to_string(n.id()) + " (" + n.name() +
                         "): duration is not a finite non-negative number");
      op_of[fi][ni] = out.graph.add_op(std::move(op));
      out.rank_of_op.push_back(files[fi].rank);
    }
  }

  // Edges.
  const auto add_edge = [&](int src, int dst, int output, double bytes) {
    Op& producer = out.graph.mutable_op(src);
    if (output < 0) output = 0;
    if (output >= static_cast<int>(producer.output_bytes.size())) producer.output_bytes.resize(output + 1, bytes);
    out.graph.add_edge(src, dst, output, bytes >= 0 ? bytes : producer.output_bytes[output]);
  };
  {
    for (const auto& [fi, ni] : order) {
      const RankFile& f = files[fi];
      const int consumer = op_of[fi][ni];
      if (consumer < 0) continue;
      const pb::Node& n = f.nodes[ni];
      const std::vector<double> dep_outputs = doubles_of(n, "data_dep_outputs");
      const std::vector<double> dep_bytes = doubles_of(n, "data_dep_bytes");
      const auto resolve = [&](std::uint64_t d, const char* field) -> int {
        auto found = f.index_of_id.find(d);
        if (found == f.index_of_id.end())
          throw ParseError(f.path + ": node " + std::to_string(n.id()) + " (" + n.name() + "): " + field +
                           " names node " + std::to_string(d) + ", which the file does not have");
        return found->second;
      };
      for (int i = 0; i < n.data_deps_size(); ++i) {
        const int dn = resolve(n.data_deps(i), "data_deps");
        const pb::Node& dep = f.nodes[dn];
        if (dep.type() == pb::METADATA_NODE) continue;
        const int output = i < static_cast<int>(dep_outputs.size()) ? static_cast<int>(dep_outputs[i]) : 0;
        const double bytes = i < static_cast<int>(dep_bytes.size()) ? dep_bytes[i] : -1;
        if (op_of[fi][dn] >= 0) {
          add_edge(op_of[fi][dn], consumer, output, bytes);
          continue;
        }
        // A matched receive: from the send's producers, with the message's bytes.
        const auto [sf, sn] = partner[fi][dn];
        const pb::Node& send = files[sf].nodes[sn];
        const double message = number_or(send, "comm_bytes", number_or(send, "comm_size", 0));
        const int src_output = static_cast<int>(number_or(send, "src_output", 0));
        for (auto p : send.data_deps()) {
          auto found = files[sf].index_of_id.find(p);
          if (found == files[sf].index_of_id.end())
            throw ParseError(files[sf].path + ": node " + std::to_string(send.id()) + " (" + send.name() +
                             "): data_deps names node " + std::to_string(p) + ", which the file does not have");
          const int producer = op_of[sf][found->second];
          if (producer >= 0) add_edge(producer, consumer, src_output, bytes >= 0 ? bytes : message);
        }
      }
      for (int i = 0; i < n.ctrl_deps_size(); ++i) {
        const int dn = resolve(n.ctrl_deps(i), "ctrl_deps");
        if (op_of[fi][dn] >= 0 && op_of[fi][dn] != consumer) add_edge(op_of[fi][dn], consumer, 0, 0);
      }
    }
  }
  for (const auto& [sf, sn, rf, rn] : op_pairs) {
    const pb::Node& send = files[sf].nodes[sn];
    add_edge(op_of[sf][sn], op_of[rf][rn], 0, number_or(send, "comm_bytes", number_or(send, "comm_size", 0)));
  }
  out.graph.validate();
  return out;
}

}  // namespace aware
