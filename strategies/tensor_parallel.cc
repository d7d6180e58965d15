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
//  - everything else (embeddings, norms, residual adds, the row-parallel biases, the
//    output layer and the loss) replicated: every rank does it whole, as Megatron's
//    ranks do (it splits the vocabulary of the embedding and output layer too; we do
//    not: docs/strategies.md);
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
#include <set>
#include <string>

#include "core/cluster.h"
#include "core/errors.h"
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

void check_tensor_parallel(const StrategySpec& spec) { tp_count(spec); }

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

  const double f = 1.0 / n;
  OpGraph out(graph.name() + "@tp");
  out.set_source(graph.source());
  std::vector<int> device_of;
  std::vector<std::vector<int>> ids(n, std::vector<int>(ops, -1));
  std::vector<char> ar_edge(graph.num_edges(), 0);
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    ar_edge[e] = n > 1 && sharded[edge.src] && partial[edge.src][edge.src_output] && !sharded[edge.dst];
  }
  for (int r = 0; r < n; ++r) {
    const std::string prefix = n > 1 ? "t" + std::to_string(r) + "/" : "";
    for (int id = 0; id < ops; ++id) {
      Op op = graph.op(id);
      op.forward_of = -1;
      op.name = prefix + op.name;
      if (!op.colocation_group.empty()) op.colocation_group = prefix + op.colocation_group;
      if (sharded[id] && n > 1) {
        const bool sums_partials = is_sum(op) && std::all_of(partial[id].begin(), partial[id].end(), [](char c) { return c; });
        const double work = sums_partials ? 1.0 : f;  // a sum of full-size partials is whole
        op.flops *= work;
        op.bytes_accessed *= work;
        op.temp_bytes *= work;
        op.param_bytes *= f;
        if (op.has_measured_cost()) op.compute_us *= work;
        for (std::size_t o = 0; o < op.output_bytes.size(); ++o)
          if (!partial[id][o]) op.output_bytes[o] *= f;
        op.shape.clear();
      }
      ids[r][id] = out.add_op(std::move(op));
      device_of.push_back(r);
    }
    for (int id = 0; id < ops; ++id)
      if (graph.op(id).forward_of >= 0) out.mutable_op(ids[r][id]).forward_of = ids[r][graph.op(id).forward_of];
    for (int e = 0; e < graph.num_edges(); ++e) {
      if (ar_edge[e]) continue;
      const Edge& edge = graph.edge(e);
      const bool scaled = n > 1 && sharded[edge.src] && !partial[edge.src][edge.src_output];
      out.add_edge(ids[r][edge.src], ids[r][edge.dst], edge.src_output, scaled ? edge.bytes * f : edge.bytes);
    }
  }

  // One all-reduce per partial tensor, feeding a join op per rank that passes the
  // summed tensor on to every replicated consumer.
  std::map<std::pair<int, int>, std::vector<int>> consumers;  // (op, output) -> edges
  for (int e = 0; e < graph.num_edges(); ++e)
    if (ar_edge[e]) consumers[{graph.edge(e).src, graph.edge(e).src_output}].push_back(e);
  CollectiveOptions ring;
  ring.algorithm = "ring";
  ring.overlap = true;
  std::vector<int> rank_device(n);
  for (int r = 0; r < n; ++r) rank_device[r] = r;
  int forward_ar = 0, backward_ar = 0;
  for (const auto& [tensor, edges] : consumers) {
    const auto [src, output] = tensor;
    const double bytes = graph.op(src).output_bytes[output];
    const std::string name = "tp/allreduce/" + graph.op(src).name + (output ? ":" + std::to_string(output) : "");
    (graph.op(src).phase == Phase::kForward ? forward_ar : backward_ar)++;
    Gradient g;
    g.bytes = bytes;
    for (int r = 0; r < n; ++r) {
      const int join = add_strategy_op(out, name + "/sum/t" + std::to_string(r), "TensorParallelSum",
                                       graph.op(src).phase, 0, 0, {bytes});
      device_of.push_back(r);
      g.producer.push_back(ids[r][src]);
      g.output.push_back(output);
      g.consumer.push_back(join);
      for (int e : edges) out.add_edge(join, ids[r][graph.edge(e).dst], 0, graph.edge(e).bytes);
    }
    ring.bucket_bytes = bytes + 1;
    insert_gradient_exchange(out, device_of, {g}, rank_device, ring, name);
  }

  StrategyResult result;
  out.set_batch(graph.batch());
  out.validate();
  result.graph = std::move(out);
  result.placement = Placement(std::move(device_of));
  result.replicas = 1;
  result.devices_used = n;
  result.global_batch = graph.batch();
  result.spec = "tp:" + std::to_string(n);
  result.graph.set_name(graph.name() + "@" + result.spec);
  if (n > 1) {
    result.notes.push_back(std::to_string(columns) + " column- and " + std::to_string(rows) +
                           " row-parallel projections split " + std::to_string(n) + " ways; " +
                           std::to_string(forward_ar) + " all-reduces in the forward pass and " +
                           std::to_string(backward_ar) + " in the backward pass");
    result.notes.push_back("embeddings, output layer and loss replicated on every rank (Megatron splits their "
                           "vocabulary too)");
  }
  return result;
}

}  // namespace aware::strategies_detail
