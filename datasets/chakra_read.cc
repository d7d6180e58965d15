// Chakra execution traces in: read_chakra_traces (datasets/chakra.h).
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

