// recompute=full|selective: activation recomputation, as an option of every
// strategy (applied to the rewritten step).
//
// full (GPipe, Huang et al. 2019; Megatron-LM's full recomputation, Narayanan et
// al. 2021, Section 3.5 and Korthikanti et al. 2022, Section 4.1): each layer
// keeps only its input; its forward ops run again just before its backward, and
// the backward reads the recomputed activations. A layer here is a segment: the
// forward model ops of one (block, layer index) on one device of one
// micro-batch (a pipeline's "mK/" copy); ops outside layers are segments of their
// block.
// selective (Korthikanti et al. 2022, Section 4.2): only the attention core is
// recomputed — the scores product QK^T, the softmax (and an attention dropout)
// and the product with V — whose activations grow with the sequence's square and
// cost few FLOPs; the rest is kept.
//
// The recomputed copy of an op reads the recomputed copies of its inputs in the
// same segment and the kept tensors otherwise (the layer input, weights), and
// waits for the gradient that starts its segment's backward: every backward op
// outside the segment that feeds one of the backward ops that read the segment's
// activations (a zero-byte edge; across a pipeline's stages it rides beside the
// gradient's own transfer). A backward op on another device than the forward op
// it reads (a pipeline cut inside a layer) reads the tensor that crossed in the
// forward pass, not a recomputed copy: each stage recomputes what it holds, as
// Megatron-LM's stages do. Recomputed copies are backward-phase ops named
// "recompute/NAME"; their FLOPs count as work (Megatron's 96·B·s·l·h² counts them).
// A layer's forward tensor-parallel all-reduces (the tp rewrite's "tp/allreduce/"
// ring steps and sums, across the layer's ranks) belong to its segments and run
// again too, as Megatron-LM's checkpointed forward re-runs them
// (megatron/core/tensor_parallel/random.py, CheckpointFunction.backward calls the
// layer's forward, collectives included): only the layer input is kept.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

// The name's prefix through its pipeline micro-batch component "mK/" (after a
// data-parallel replica's "rK/", when there is one: "r1/m3/"), else "".
std::string micro_tag(const std::string& name) {
  std::size_t begin = 0;
  for (int component = 0; component < 2 && begin < name.size(); ++component) {
    const std::size_t slash = name.find('/', begin);
    if (slash == std::string::npos) return "";
    const char kind = name[begin];
    std::size_t i = begin + 1;
    while (i < slash && name[i] >= '0' && name[i] <= '9') ++i;
    const bool numbered = i == slash && slash > begin + 1;
    if (numbered && kind == 'm') return name.substr(0, slash + 1);
    if (!(numbered && kind == 'r')) return "";
    begin = slash + 1;
  }
  return "";
}

std::string last_component(const std::string& name) {
  const std::size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

bool attention_core(const Op& op) {
  static const std::set<std::string> kNames = {"scores", "softmax", "context", "attention_dropout"};
  static const std::set<std::string> kTypes = {"BatchMatMul", "Softmax", "Dropout"};
  return kTypes.count(op.type) && kNames.count(last_component(op.name));
}

}  // namespace

std::string check_recompute(const std::string& mode, const std::string& spec_text) {
  if (mode != "full" && mode != "selective" && mode != "none")
    throw ConfigError("strategy '" + spec_text + "': recompute must be full, selective or none, got '" + mode + "'");
  return mode;
}

int apply_recompute(StrategyResult& result, const std::string& mode) {
  if (mode == "none") return 0;
  const OpGraph& graph = result.graph;
  const std::vector<int>& device = result.placement.device_of_op;
  const int n = graph.num_ops();
  const BatchRoles roles = classify_batch_roles(graph);
  using Segment = std::tuple<std::string, int, int, std::string>;  // block, layer, device, micro
  // A forward tensor-parallel all-reduce's ops take the (block, layer) of the op
  // whose partial sum they reduce (set below, in topological order).
  std::vector<char> tp_forward(n, 0);
  std::vector<std::pair<std::string, int>> layer_of(n);
  for (int id = 0; id < n; ++id) layer_of[id] = {graph.op(id).block, graph.op(id).layer};
  const auto segment_of = [&](int id) {
    return Segment{layer_of[id].first, layer_of[id].second, device[id], micro_tag(graph.op(id).name)};
  };
  const auto forward_model = [&](int id) {
    return roles.role[id] == Role::kModel && (graph.op(id).phase == Phase::kForward || tp_forward[id]) &&
           graph.op(id).total_output_bytes() > 0 && graph.in_edges(id).size() > 0;
  };

  // The pass each op runs in: its phase, except that an op feeding a forward op
  // runs in the forward pass (the tensor-parallel rewrite's forward all-reduces
  // are ring steps labelled backward): those are not readers of saved tensors.
  std::vector<char> runs_backward(n, 0);
  {
    std::vector<char> runs_forward(n, 0);
    const std::vector<int> order = topological_order(graph);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const int id = *it;
      runs_forward[id] = graph.op(id).phase == Phase::kForward;
      for (int e : graph.out_edges(id))  // (a pipeline's barriers order passes; they run none)
        if (runs_forward[graph.edge(e).dst] && graph.op(graph.edge(e).dst).type != "Barrier") runs_forward[id] = 1;
      runs_backward[id] = graph.op(id).phase == Phase::kBackward && !runs_forward[id];
    }
    // The forward all-reduces: strategy ops of the tp rewrite that run forward
    // (ring steps labelled backward), inside a layer.
    for (int id : order) {
      const Op& op = graph.op(id);
      if (op.block != kStrategyBlock || !runs_forward[id] || op.name.find("tp/allreduce/") == std::string::npos) continue;
      for (int e : graph.in_edges(id)) {
        const int src = graph.edge(e).src;
        if ((graph.op(src).phase == Phase::kForward || tp_forward[src]) && layer_of[src].second >= 0) {
          layer_of[id] = layer_of[src];
          tp_forward[id] = 1;
          break;
        }
      }
    }
  }
  // Which forward ops a backward op reads (saved activations), by segment.
  std::map<Segment, std::vector<int>> saved_readers;  // backward ops reading the segment
  std::vector<char> saved(n, 0);
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    if (!forward_model(edge.src) || !runs_backward[edge.dst]) continue;
    // A reader on another device (a pipeline stage cut inside a layer) reads the
    // tensor that crossed in the forward pass; each stage recomputes its own.
    if (device[edge.src] != device[edge.dst]) continue;
    if (mode == "selective" && !attention_core(graph.op(edge.src))) continue;
    saved[edge.src] = 1;
    saved_readers[segment_of(edge.src)].push_back(edge.dst);
  }
  // The ops recomputed: full, every forward model op of a segment something
  // saved from; selective, the attention core's ops.
  std::vector<char> redo(n, 0);
  int count = 0;
  // (selective: the whole core of a layer whose core something saved from, so
  // that the softmax's recomputation does not hold the scores it read.)
  for (int id = 0; id < n; ++id) {
    if (!forward_model(id) || !saved_readers.count(segment_of(id))) continue;
    if (mode == "full" || attention_core(graph.op(id))) redo[id] = 1, ++count;
  }
  if (count == 0) {
    result.notes.push_back("recompute=" + mode + ": nothing to recompute (no activation a backward op reads)");
    return 0;
  }

  // The rewritten step: every op as it was, then the recomputed copies.
  OpGraph out(graph.name());
  out.set_source(graph.source());
  for (int id = 0; id < n; ++id) out.add_op(graph.op(id));
  std::vector<int> copy_of(n, -1);
  std::vector<int> devices = device;
  for (int id = 0; id < n; ++id) {
    if (!redo[id]) continue;
    Op op = graph.op(id);
    op.name = "recompute/" + op.name;
    op.phase = Phase::kBackward;
    op.forward_of = id;
    copy_of[id] = out.add_op(op);
    devices.push_back(device[id]);
  }
  // (A ring step reads its neighbour's chunk: within one all-reduce's ranks the
  // layer's segments on their devices are one.)
  const auto same_segment = [&](int a, int b) {
    if (tp_forward[a] && tp_forward[b])
      return layer_of[a] == layer_of[b] && micro_tag(graph.op(a).name) == micro_tag(graph.op(b).name);
    return segment_of(a) == segment_of(b);
  };
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    const bool to_backward = runs_backward[edge.dst] != 0;
    // A backward op reads the recomputed activation.
    const int src = redo[edge.src] && to_backward && device[edge.src] == device[edge.dst] ? copy_of[edge.src] : edge.src;
    out.add_edge(src, edge.dst, edge.src_output, edge.bytes);
    // The recomputed copy reads recomputed inputs of its own segment (full) or
    // of the attention core (selective), the kept tensors otherwise.
    if (redo[edge.dst]) {
      const bool recomputed_input = redo[edge.src] && same_segment(edge.src, edge.dst);
      out.add_edge(recomputed_input ? copy_of[edge.src] : edge.src, copy_of[edge.dst], edge.src_output, edge.bytes);
    }
  }
  // Each segment's recomputation waits for the gradient that starts its
  // backward: the backward ops that feed its readers and do not themselves come
  // after one of them (which would close a cycle through the recomputation).
  std::map<Segment, std::set<int>> triggers;
  std::vector<int> mark(n, -1), stack;
  int round = 0;
  for (const auto& [segment, readers] : saved_readers) {
    ++round;
    stack.assign(readers.begin(), readers.end());
    for (int b : readers) mark[b] = round;
    while (!stack.empty()) {  // the readers and everything after them
      const int id = stack.back();
      stack.pop_back();
      for (int e : graph.out_edges(id)) {
        const int dst = graph.edge(e).dst;
        if (mark[dst] != round) mark[dst] = round, stack.push_back(dst);
      }
    }
    for (int b : readers)
      for (int e : graph.in_edges(b)) {
        const int src = graph.edge(e).src;
        if (runs_backward[src] && mark[src] != round) triggers[segment].insert(src);
      }
  }
  int waits = 0;
  for (int id = 0; id < n; ++id) {
    if (!redo[id]) continue;
    bool root = true;  // reads no recomputed op
    for (int e : graph.in_edges(id)) {
      const int src = graph.edge(e).src;
      root = root && !(redo[src] && same_segment(src, id));
    }
    if (!root) continue;
    const auto it = triggers.find(segment_of(id));
    if (it == triggers.end()) continue;
    for (int t : it->second) {
      out.add_edge(t, copy_of[id], 0, 0);
      ++waits;
    }
  }
  out.set_batch(graph.batch());
  out.validate();
  double flops = 0;
  for (int id = 0; id < n; ++id)
    if (redo[id]) flops += graph.op(id).flops;
  result.graph = std::move(out);
  result.placement = Placement(std::move(devices));
  // The pipeline's note that activations are kept no longer holds.
  result.notes.erase(std::remove_if(result.notes.begin(), result.notes.end(),
                                    [](const std::string& note) { return note.rfind("no re-materialisation", 0) == 0; }),
                     result.notes.end());
  result.notes.push_back("recompute=" + mode + ": " + std::to_string(count) + " forward ops run again before their " +
                         "backward (" + std::to_string(flops / 1e9) + " GFLOP more), after " + std::to_string(waits) +
                         " waits for the gradient that starts it");
  return count;
}

}  // namespace aware::strategies_detail
