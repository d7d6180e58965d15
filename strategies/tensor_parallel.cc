// tp:N — Megatron-LM's tensor parallelism (Shoeybi et al. 2019, Section 3) as a
// graph rewrite over a transformer's training step: N ranks, each a copy of the
// step in which every layer's attention and MLP are split N ways:
//  - column-parallel: the query, key and value projections and the MLP's first
//    projection(s) (fc1; SwiGLU's gate and up), and everything between them and the
//    row-parallel projection (biases, rotary embedding, the per-head scores,
//    softmax and context, the activation): each rank holds 1/N of their weights and
//    does 1/N of their work;
//  - row-parallel: the attention's output projection and the MLP's last projection
//    (fc2; SwiGLU's down): 1/N of the weights and work, a full-size partial sum out;
//  - the token embedding, the output layer and the cross-entropy split by the
//    vocabulary (Shoeybi et al. 2019, Section 3, "Input embedding" and the fused
//    cross-entropy; Megatron-LM's VocabParallelEmbedding and vocab-parallel cross
//    entropy): each rank holds V/N rows of the table, looks up the tokens in its
//    rows (an all-reduce sums the ranks' partial embeddings), computes its V/N
//    logits and its part of the loss (one all-reduce of the b*s per-token losses
//    stands for Megatron's three of b*s floats: the max, the target logit and the
//    sum of exponentials), and the output layer's input gradient is all-reduced;
//  - everything else (the position embedding, norms, residual adds, the
//    row-parallel biases, the loss's mean) replicated: every rank does it whole, as
//    Megatron's ranks do;
//  - an all-reduce wherever a partial sum meets replicated work: after each
//    row-parallel projection in the forward pass and after each column-parallel
//    block's input gradient in the backward pass (Megatron's g and f operators): four
//    per layer per step. They are ring all-reduces among the N ranks' devices on the
//    communication stream, as the data-parallel exchange's.
// Which ops are which is read from the graph: the column and row projections by
// their names (the zoo's transformer and gpt builders: .../query, key, value, fc1,
// gate, up; .../output, fc2, down), the ops between them by reachability within the
// layer, a backward or update op by its forward op, a variable by its consumers, and
// a gradient sum by its inputs.
#include <algorithm>
#include <map>
#include <tuple>
#include <set>
#include <string>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/graph_algorithms.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool is_column(const Op& op) {
  if (op.type != "MatMul" || op.phase != Phase::kForward) return false;
  for (const char* t : {"/attention/query", "/attention/key", "/attention/value", "/ffn/fc1", "/ffn/gate", "/ffn/up",
                        "/self_attention/query", "/self_attention/key", "/self_attention/value",
                        "/cross_attention/query", "/cross_attention/key", "/cross_attention/value", "/ffn/inner"})
    if (ends_with(op.name, t)) return true;
  return false;
}

bool is_row(const Op& op) {
  if (op.type != "MatMul" || op.phase != Phase::kForward) return false;
  for (const char* t : {"/attention/output", "/ffn/fc2", "/ffn/down", "/self_attention/output",
                        "/cross_attention/output", "/ffn/outer"})
    if (ends_with(op.name, t)) return true;
  return false;
}

bool is_sum(const Op& op) { return op.type == "AddN" || op.type == "AccumulateGrad"; }

int tp_count(const StrategySpec& spec) {
  return spec.argument.empty() ? 0 : parse_count(spec.argument, spec.text, "the tensor-parallel size");
}

}  // namespace

void check_tensor_parallel(const StrategySpec& spec) {
  tp_count(spec);
  option_bool(spec.options, "sp", false, "strategy '" + spec.text + "'");
}

StrategyResult apply_tensor_parallel(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec,
                                     const StrategyContext&) {
  const int devices = cluster.num_devices();
  const int n = tp_count(spec) > 0 ? tp_count(spec) : devices;
  if (n > devices)
    throw ConfigError("strategy '" + spec.text + "': " + std::to_string(n) + " tensor-parallel ranks need as many devices, cluster '" +
                      cluster.name() + "' has " + std::to_string(devices));
  const int ops = graph.num_ops();

  // Sharded forward ops: the column and row projections and what lies between.
  std::vector<char> sharded(ops, 0);
  int columns = 0, rows = 0;
  for (int id = 0; id < ops; ++id) {
    const Op& op = graph.op(id);
    if (is_row(op)) {
      sharded[id] = 1;
      ++rows;
    }
    if (!is_column(op)) continue;
    ++columns;
    // Forward ops reachable from the column projection before a row projection.
    std::vector<int> stack = {id};
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      if (sharded[u]) continue;
      sharded[u] = 1;
      for (int e : graph.out_edges(u)) {
        const int v = graph.edge(e).dst;
        const Op& w = graph.op(v);
        if (w.phase != Phase::kForward || is_row(w) || w.type == "AddN" || ends_with(w.name, "/residual")) continue;
        if (w.type == "Add" || w.type == "LayerNorm" || w.type == "RMSNorm") continue;
        stack.push_back(v);
      }
    }
  }
  // The vocabulary-split ops of the zoo's language models (datasets/gpt.cc names):
  // the token lookup, the output projection (tied to the token table or not) and
  // the cross-entropy. Their backward ops and the table follow below.
  // All three or none: a logits split without its loss would need an all-gather.
  std::vector<int> vocab_ops;
  for (int id = 0; id < ops; ++id) {
    const Op& op = graph.op(id);
    if (op.phase != Phase::kForward) continue;
    if ((op.type == "ResourceGather" && ends_with(op.name, "embedding/token_lookup")) ||
        (op.type == "MatMul" && ends_with(op.name, "head/logits")) ||
        (op.type == "SparseSoftmaxCrossEntropyWithLogits" && ends_with(op.name, "head/xent")))
      vocab_ops.push_back(id);
  }
  const bool vocab_split = vocab_ops.size() == 3;
  if (vocab_split)
    for (int id : vocab_ops) sharded[id] = 1;
  if (columns == 0 || rows == 0)
    throw ConfigError("strategy '" + spec.text + "': graph '" + graph.name() +
                      "' has no transformer layers to split (tensor parallelism needs the attention and MLP "
                      "projections of zoo:gpt, a named size such as zoo:gpt3-175b, or zoo:transformer)");
  // Variables: sharded when every consumer is.
  for (int id = 0; id < ops; ++id) {
    const Op& op = graph.op(id);
    if (op.phase != Phase::kForward || !graph.in_edges(id).empty() || graph.out_edges(id).empty() || op.param_bytes <= 0)
      continue;
    bool all = true;
    for (int e : graph.out_edges(id))
      if (graph.op(graph.edge(e).dst).phase == Phase::kForward && !sharded[graph.edge(e).dst]) all = false;
    sharded[id] = all;
  }
  // Backward and update ops follow their forward op (creation order puts it first).
  for (int id = 0; id < ops; ++id) {
    const Op& op = graph.op(id);
    if (op.phase != Phase::kForward && op.forward_of >= 0 && !is_sum(op)) sharded[id] = sharded[op.forward_of];
  }
  // A gradient sum of sharded ops only is sharded (it sums partial sums locally).
  for (int id = 0; id < ops; ++id) {
    const Op& op = graph.op(id);
    if (!is_sum(op) || graph.in_edges(id).empty()) continue;
    bool all = true;
    for (int e : graph.in_edges(id)) all = all && sharded[graph.edge(e).src];
    if (all) sharded[id] = 1;
  }
  // Partial sums: a sharded op's output a replicated op consumes, or a sum passes on.
  std::vector<std::vector<char>> partial(ops);
  for (int id = 0; id < ops; ++id) partial[id].assign(graph.op(id).output_bytes.size(), 0);
  const std::vector<int> order = topological_order(graph);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int id = *it;
    if (!sharded[id]) continue;
    for (int e : graph.out_edges(id)) {
      const Edge& edge = graph.edge(e);
      const int v = edge.dst;
      const bool sum_of_partials = is_sum(graph.op(v)) && sharded[v] &&
                                   std::any_of(partial[v].begin(), partial[v].end(), [](char c) { return c; });
      if (!sharded[v] || sum_of_partials) partial[id][edge.src_output] = 1;
    }
  }

  // Sequence parallelism (sp=on; Korthikanti et al. 2022): the layers' replicated
  // ops (norms, residual adds, the row-parallel biases), their backward ops and the
  // sums of those hold 1/N of the sequence instead of all of it.
  const bool sp = option_bool(spec.options, "sp", false, "strategy '" + spec.text + "'") && n > 1;
  const BatchRoles roles = classify_batch_roles(graph);
  std::vector<char> seq(ops, 0);
  if (sp) {
    for (int id = 0; id < ops; ++id) {
      const Op& op = graph.op(id);
      const bool variable = graph.in_edges(id).empty();
      seq[id] = op.phase == Phase::kForward && !sharded[id] && !variable && op.layer >= 0 &&
                (op.block == "decoder" || op.block == "encoder");
    }
    for (int id : order) {
      const Op& op = graph.op(id);
      if (op.phase == Phase::kForward || sharded[id]) continue;
      if (is_sum(op)) {
        // A sum with a sequence-sharded input and no tensor-sharded one is sharded by
        // the sequence too (its replicated inputs are sliced where they are).
        bool any = false, none_sharded = true;
        for (int e : graph.in_edges(id)) {
          any = any || seq[graph.edge(e).src];
          none_sharded = none_sharded && !sharded[graph.edge(e).src];
        }
        seq[id] = any && none_sharded;
      } else if (op.forward_of >= 0) {
        seq[id] = seq[op.forward_of];
      }
    }
  }
  // A sequence-sharded op's output that is a parameter's gradient is a partial sum
  // over the sequence (whole-sized); its other outputs are slices.
  std::vector<std::vector<char>> seq_partial(ops);
  for (int id = 0; id < ops; ++id) seq_partial[id].assign(graph.op(id).output_bytes.size(), 0);
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    if (seq[edge.src] && (roles.gradient_edge[e] || graph.op(edge.dst).phase == Phase::kUpdate))
      seq_partial[edge.src][edge.src_output] = 1;
  }

  // What each edge needs: nothing (the same rank), an all-reduce (a partial sum into
  // replicated work), a reduce-scatter (a partial sum into sequence-sharded work) or
  // an all-gather (a sequence slice into work that needs all of it).
  enum class Move { kLocal, kAllReduce, kReduceScatter, kAllGather };
  std::vector<Move> move(graph.num_edges(), Move::kLocal);
  std::vector<double> local_bytes(graph.num_edges(), 0);
  const double f = 1.0 / n;
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    const int u = edge.src, v = edge.dst, o = edge.src_output;
    local_bytes[e] = edge.bytes;
    if (n == 1) continue;
    if (sharded[u]) {
      if (!partial[u][o]) {
        local_bytes[e] = edge.bytes * f;  // a slice, to sharded work
      } else if (!sharded[v]) {
        move[e] = seq[v] ? Move::kReduceScatter : Move::kAllReduce;
      }
    } else if (seq[u]) {
      if (seq_partial[u][o]) {
        if (!seq[v]) move[e] = Move::kAllReduce;
      } else if (seq[v]) {
        local_bytes[e] = edge.bytes * f;
      } else {
        move[e] = Move::kAllGather;
      }
    } else if (seq[v]) {
      local_bytes[e] = edge.bytes * f;  // a replicated tensor's own slice: no traffic
    }
  }

  OpGraph out(graph.name() + "@tp");
  out.set_source(graph.source());
  std::vector<int> device_of;
  std::vector<std::vector<int>> ids(n, std::vector<int>(ops, -1));
  for (int r = 0; r < n; ++r) {
    const std::string prefix = n > 1 ? "t" + std::to_string(r) + "/" : "";
    for (int id = 0; id < ops; ++id) {
      Op op = graph.op(id);
      op.forward_of = -1;
      op.name = prefix + op.name;
      if (!op.colocation_group.empty()) op.colocation_group = prefix + op.colocation_group;
      if ((sharded[id] || seq[id]) && n > 1) {
        const auto& whole = sharded[id] ? partial[id] : seq_partial[id];
        const bool sums_partials = is_sum(op) && std::all_of(whole.begin(), whole.end(), [](char c) { return c; });
        const double work = sums_partials ? 1.0 : f;  // a sum of full-size partials is whole
        op.flops *= work;
        op.bytes_accessed *= work;
        op.temp_bytes *= work;
        if (sharded[id]) op.param_bytes *= f;
        if (op.has_measured_cost()) op.compute_us *= work;
        for (std::size_t o = 0; o < op.output_bytes.size(); ++o)
          if (!whole[o]) op.output_bytes[o] *= f;
        op.shape.clear();
      }
      ids[r][id] = out.add_op(std::move(op));
      device_of.push_back(r);
    }
    for (int id = 0; id < ops; ++id)
      if (graph.op(id).forward_of >= 0) out.mutable_op(ids[r][id]).forward_of = ids[r][graph.op(id).forward_of];
    for (int e = 0; e < graph.num_edges(); ++e) {
      if (move[e] != Move::kLocal) continue;
      const Edge& edge = graph.edge(e);
      out.add_edge(ids[r][edge.src], ids[r][edge.dst], edge.src_output, local_bytes[e]);
    }
  }

  // One collective per tensor and kind (all-gathers also per phase of their readers:
  // a backward reader gathers again, as Megatron's sequence parallelism does).
  std::map<std::tuple<int, int, int, int>, std::vector<int>> groups;  // (op, output, move, phase) -> edges
  for (int e = 0; e < graph.num_edges(); ++e) {
    if (move[e] == Move::kLocal) continue;
    const Edge& edge = graph.edge(e);
    const int phase = move[e] == Move::kAllGather && graph.op(edge.dst).phase != Phase::kForward ? 1 : 0;
    groups[{edge.src, edge.src_output, static_cast<int>(move[e]), phase}].push_back(e);
  }
  CollectiveOptions ring;
  ring.algorithm = "ring";
  ring.overlap = true;
  std::vector<int> rank_device(n);
  for (int r = 0; r < n; ++r) rank_device[r] = r;
  int forward_ar = 0, backward_ar = 0, scatters = 0, gathers = 0;
  for (const auto& [key, edges] : groups) {
    const auto [src, output, kind, reader_phase] = key;
    const double bytes = graph.op(src).output_bytes[output];
    const Phase phase = reader_phase ? Phase::kBackward : graph.op(src).phase;
    const std::string tensor = graph.op(src).name + (output ? ":" + std::to_string(output) : "");
    std::vector<int> producer, outputs;
    for (int r = 0; r < n; ++r) {
      producer.push_back(ids[r][src]);
      outputs.push_back(output);
    }
    std::vector<int> last;  // per rank: the op whose output 0 its readers take
    if (static_cast<Move>(kind) == Move::kAllReduce) {
      const std::string name = "tp/allreduce/" + tensor;
      (graph.op(src).phase == Phase::kForward ? forward_ar : backward_ar)++;
      Gradient g;
      g.bytes = bytes;
      for (int r = 0; r < n; ++r) {
        last.push_back(add_strategy_op(out, name + "/sum/t" + std::to_string(r), "TensorParallelSum",
                                       graph.op(src).phase, 0, 0, {bytes}));
        device_of.push_back(r);
        g.producer.push_back(producer[r]);
        g.output.push_back(output);
        g.consumer.push_back(last.back());
      }
      ring.bucket_bytes = bytes + 1;
      insert_gradient_exchange(out, device_of, {g}, rank_device, ring, name);
    } else if (static_cast<Move>(kind) == Move::kReduceScatter) {
      ++scatters;
      last = insert_reduce_scatter(out, device_of, producer, outputs, bytes, rank_device, phase,
                                   "tp/reducescatter/" + tensor);
    } else {
      ++gathers;
      last = insert_parameter_gather(out, device_of, producer, outputs, bytes * f, rank_device, phase,
                                     std::string("tp/allgather/") + (reader_phase ? "backward/" : "") + tensor);
    }
    for (int r = 0; r < n; ++r)
      for (int e : edges) {
        const Edge& edge = graph.edge(e);
        const double into = static_cast<Move>(kind) == Move::kReduceScatter ? edge.bytes * f : edge.bytes;
        out.add_edge(last[r], ids[r][edge.dst], 0, into);
      }
  }

  StrategyResult result;
  out.set_batch(graph.batch());
  out.validate();
  result.graph = std::move(out);
  result.placement = Placement(std::move(device_of));
  result.replicas = 1;
  result.devices_used = n;
  result.global_batch = graph.batch();
  result.spec = "tp:" + std::to_string(n) + (sp ? ",sp=on" : "");
  result.graph.set_name(graph.name() + "@" + result.spec);
  if (n > 1) {
    result.notes.push_back(std::to_string(columns) + " column- and " + std::to_string(rows) +
                           " row-parallel projections split " + std::to_string(n) + " ways; " +
                           std::to_string(forward_ar) + " all-reduces in the forward pass and " +
                           std::to_string(backward_ar) + " in the backward pass" +
                           (sp ? "; sequence parallel: " + std::to_string(scatters) + " reduce-scatters and " +
                                     std::to_string(gathers) + " all-gathers"
                               : ""));
    result.notes.push_back(vocab_split ? "token embedding, output layer and cross-entropy split by the vocabulary "
                                              "(2 of the forward all-reduces and 1 of the backward)"
                                            : "embeddings, output layer and loss replicated on every rank (no "
                                              "embedding/token_lookup, head/logits and head/xent to split by the "
                                              "vocabulary)");
  }
  return result;
}

}  // namespace aware::strategies_detail
