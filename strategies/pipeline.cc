// pipeline: S stages on devices 0..S-1, the global batch split into M micro-batches
// run in GPipe order (all forwards, a flush, all backwards in reverse), the M
// partial gradients of each parameter summed before its one update.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

// Cuts `cost` (forward ops in topological order) into `stages` contiguous,
// non-empty pieces whose sums are as close as the prefix sums allow to equal
// shares: piece s ends where the running sum is nearest to (s + 1) / stages of the
// total. Returns the stage of each position.
std::vector<int> balanced_cut(const std::vector<double>& cost, int stages) {
  const int n = static_cast<int>(cost.size());
  std::vector<double> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
  std::vector<int> stage(n, stages - 1);
  int begin = 0;
  for (int s = 0; s + 1 < stages; ++s) {
    const double target = prefix[n] * (s + 1) / stages;
    // This piece ends at `end` (exclusive): at least one op, and one op left for
    // each later stage.
    const int lo = begin + 1, hi = n - (stages - 1 - s);
    int best = lo;
    for (int end = lo; end <= hi; ++end) {
      if (std::abs(prefix[end] - target) < std::abs(prefix[best] - target)) best = end;
    }
    for (int i = begin; i < best; ++i) stage[i] = s;
    begin = best;
  }
  return stage;
}

// The schedule's name ("gpipe", "1f1b" or "interleaved") and its model chunks
// per device (1 unless interleaved:V).
std::pair<std::string, int> pipeline_schedule(const StrategySpec& spec) {
  const std::string schedule = spec.options.count("schedule") ? spec.options.at("schedule") : "gpipe";
  if (schedule == "gpipe" || schedule == "1f1b") return {schedule, 1};
  if (schedule.rfind("interleaved:", 0) == 0) {
    const int v = parse_count(schedule.substr(12), spec.text, "the model chunks per device (interleaved:V)");
    if (v < 2)
      throw ConfigError("strategy '" + spec.text + "': interleaved:" + std::to_string(v) +
                        " needs 2 or more model chunks per device (interleaved:1 is schedule=1f1b)");
    return {"interleaved", v};
  }
  throw ConfigError("strategy '" + spec.text + "': schedule must be gpipe, 1f1b or interleaved:V, got '" + schedule + "'");
}

}  // namespace

// The order of one stage's micro-batch passes.
// GPipe (Huang et al. 2019): every forward, then every backward in reverse.
// 1F1B (PipeDream-Flush as Megatron-LM runs it, Narayanan et al. 2021, Section 2.2):
// stage s of p first runs min(p - s - 1, M) forwards, then alternates one forward
// and one backward, oldest first, then the remaining backwards; it holds at most
// p - s micro-batches' activations where GPipe holds all M.
// Interleaved 1F1B (Narayanan et al. 2021, Section 2.2.2; Megatron-LM's
// megatron/schedules.py, forward_backward_pipelining_with_interleaving, at
// 0504208): each device holds `virtual` model chunks (chunk j of device s is
// virtual stage j·S + s). Its m·v passes each way are taken in groups of S
// micro-batches per chunk: pass k runs chunk (k mod S·v) div S (backward: v − 1
// minus that) on micro-batch (k div S·v)·S + k mod S. Device s first runs
// min(2(S − s − 1) + (v − 1)·S, m·v) forwards (all of them when m = S), then
// alternates one forward and one backward, then the remaining backwards.
std::vector<Pass> stage_order(const std::string& schedule, int virtual_stages, int s, int stages, int micro) {
  std::vector<Pass> out;
  if (schedule == "gpipe") {
    for (int m = 0; m < micro; ++m) out.push_back({true, m, 0});
    for (int m = micro - 1; m >= 0; --m) out.push_back({false, m, 0});
    return out;
  }
  if (schedule == "1f1b") {
    const int warmup = std::min(stages - s - 1, micro);
    for (int m = 0; m < warmup; ++m) out.push_back({true, m, 0});
    for (int i = 0; i + warmup < micro; ++i) {
      out.push_back({true, warmup + i, 0});
      out.push_back({false, i, 0});
    }
    for (int m = micro - warmup; m < micro; ++m) out.push_back({false, m, 0});
    return out;
  }
  const int v = virtual_stages, group = stages * v, passes = micro * v;
  const auto pass = [&](int k, bool forward) {
    const int chunk = (k % group) / stages;
    return Pass{forward, (k / group) * stages + k % stages, forward ? chunk : v - 1 - chunk};
  };
  const int warmup = micro == stages ? passes : std::min(2 * (stages - s - 1) + (v - 1) * stages, passes);
  for (int k = 0; k < warmup; ++k) out.push_back(pass(k, true));
  for (int k = 0; k + warmup < passes; ++k) {
    out.push_back(pass(warmup + k, true));
    out.push_back(pass(k, false));
  }
  for (int k = passes - warmup; k < passes; ++k) out.push_back(pass(k, false));
  return out;
}

// accumulate=sum (the default): the M partial gradients of a parameter summed by
// one op after the last micro-batch, reading all M (GPipe's accumulation);
// fused: each micro-batch's weight-gradient op adds into the running sum as it
// writes (Megatron-LM's gradient accumulation fusion, the wgrad GEMM run with
// beta = 1 into the fp32 main gradient), so the sum costs nothing more.
bool fused_accumulation(const StrategySpec& spec) {
  const std::string mode = spec.options.count("accumulate") ? spec.options.at("accumulate") : "sum";
  if (mode != "sum" && mode != "fused")
    throw ConfigError("strategy '" + spec.text + "': accumulate must be sum or fused, got '" + mode + "'");
  return mode == "fused";
}

void check_pipeline(const StrategySpec& spec) {
  if (!spec.argument.empty()) parse_count(spec.argument, spec.text, "the stage count");
  fused_accumulation(spec);
  if (spec.options.count("micro")) parse_count(spec.options.at("micro"), spec.text, "the micro-batch count");
  pipeline_schedule(spec);
}

StrategyResult apply_pipeline(const OpGraph& graph, const Cluster& cluster,
                              const StrategySpec& spec, const StrategyContext&) {
  check_pipeline(spec);
  const int devices = cluster.num_devices();
  const int stages =
      spec.argument.empty() ? devices : parse_count(spec.argument, spec.text, "the stage count");
  if (stages > devices) {
    throw ConfigError("strategy '" + spec.text + "': " + std::to_string(stages) +
                      " stages need as many devices, cluster '" + cluster.name() + "' has " +
                      std::to_string(devices));
  }
  return pipeline_rewrite(graph, cluster, spec, stages, 1, {}, {});
}

int pipeline_model_chunks(const StrategySpec& spec) { return pipeline_schedule(spec).second; }

std::vector<int> pipeline_pieces(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec, int pieces) {
  const BatchRoles roles = classify_batch_roles(graph);
  const int n = graph.num_ops();
  const std::vector<int> order = topological_order(graph);
  std::vector<int> forward;  // forward model ops in topological order
  for (int id : order)
    if (roles.role[id] == Role::kModel && graph.op(id).phase == Phase::kForward) forward.push_back(id);
  if (static_cast<int>(forward.size()) < pieces)
    throw ConfigError("strategy '" + spec.text + "': " + graph_where(graph) + " has " + std::to_string(forward.size()) +
                      " forward ops, too few for " + std::to_string(pieces) + " stages");
  std::vector<double> cost;
  for (int id : forward) cost.push_back(op_time_us(graph.op(id), cluster.device(0)));
  const std::vector<int> cut = balanced_cut(cost, pieces);
  std::vector<int> piece(n, -1);
  for (std::size_t i = 0; i < forward.size(); ++i) piece[forward[i]] = cut[i];
  return piece;
}

StrategyResult pipeline_rewrite(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec, int stages,
                                int group, const std::vector<int>& slot, const std::vector<int>& piece_hint) {
  const auto [schedule, chunks] = pipeline_schedule(spec);
  const bool fused = fused_accumulation(spec);
  const int pieces = stages * chunks;  // virtual stages: piece c runs on stage c mod S
  // Stage s's devices are s * group .. s * group + group - 1; an op sits on the
  // one its slot names (0 unless the graph is a tensor-parallel step).
  const auto slot_of = [&](int id) { return slot.empty() ? 0 : slot[id]; };
  const BatchRoles roles = classify_batch_roles(graph);
  require_batch_metadata(graph, roles, spec.text, false);
  const double batch = graph.batch();
  int micro = 0;
  if (spec.options.count("micro")) {
    micro = parse_count(spec.options.at("micro"), spec.text, "the micro-batch count");
  } else {
    micro = static_cast<int>(std::min<double>(4.0 * stages, std::max(1.0, std::floor(batch))));
  }
  if (chunks > 1 && micro % stages != 0)
    throw ConfigError("strategy '" + spec.text + "': the interleaved schedule needs micro-batches in whole groups "
                      "of the stage count (Megatron-LM's rule): micro=" + std::to_string(micro) + " is not a multiple of " +
                      std::to_string(stages));
  StrategyResult result;
  const std::vector<double> shares =
      split_batch(batch, micro, spec.text, "micro-batches", &result.notes);

  // ---- stages: a balanced cut of the forward model ops in topological order,
  // priced as device 0 would run them (the measured time when there is one),
  // unless the caller cut them already (piece_hint: the 3d spec's, by the ops
  // of the step before tensor parallelism).
  const int n = graph.num_ops();
  const std::vector<int> order = topological_order(graph);
  std::vector<int> forward;  // forward model ops in topological order
  for (int id : order) {
    if (roles.role[id] == Role::kModel && graph.op(id).phase == Phase::kForward) forward.push_back(id);
  }
  if (piece_hint.empty() && static_cast<int>(forward.size()) < pieces) {
    throw ConfigError("strategy '" + spec.text + "': " + graph_where(graph) + " has " +
                      std::to_string(forward.size()) + " forward ops, too few for " +
                      std::to_string(pieces) + (chunks > 1 ? " virtual" : "") + " stages");
  }
  std::vector<double> cost;
  for (int id : forward) cost.push_back(op_time_us(graph.op(id), cluster.device(0)));
  std::vector<int> cut;
  if (piece_hint.empty()) {
    cut = balanced_cut(cost, pieces);
  } else {
    // Ops without a piece (the collectives the tensor-parallel rewrite inserted,
    // and their steps) take their latest predecessor's, in topological order.
    std::vector<int> known = piece_hint;
    for (int id : order) {
      if (known[id] >= 0) continue;
      for (int e : graph.in_edges(id)) known[id] = std::max(known[id], known[graph.edge(e).src]);
    }
    for (int id : forward) cut.push_back(std::max(0, known[id]));
  }
  std::vector<int> stage(n, -1);
  for (std::size_t i = 0; i < forward.size(); ++i) stage[forward[i]] = cut[i];

  // Variables: the stage of their first consumer (in topological order) that has one.
  std::vector<int> rank = topological_rank(graph);
  auto first_consumer_stage = [&](int id) {
    int best = -1, best_rank = n;
    for (int e : graph.out_edges(id)) {
      const int dst = graph.edge(e).dst;
      if (stage[dst] >= 0 && rank[dst] < best_rank) best = stage[dst], best_rank = rank[dst];
    }
    return best;
  };
  for (int id = 0; id < n; ++id) {
    if (roles.role[id] == Role::kVariable) stage[id] = first_consumer_stage(id);
  }
  // Backward ops: the stage of the op their forward_of chain leads to; without
  // one, the latest stage among their predecessors.
  auto latest_predecessor_stage = [&](int id) {
    int best = -1;
    for (int e : graph.in_edges(id)) best = std::max(best, stage[graph.edge(e).src]);
    return best;
  };
  for (int id : order) {
    if (stage[id] >= 0 || roles.role[id] == Role::kVariable || roles.role[id] == Role::kUpdate) continue;
    int walk = graph.op(id).forward_of, steps = 0;
    while (walk >= 0 && stage[walk] < 0 && steps++ < n) walk = graph.op(walk).forward_of;
    stage[id] = walk >= 0 && stage[walk] >= 0 ? stage[walk] : std::max(0, latest_predecessor_stage(id));
  }
  // Variables only backward or update ops read, then the updates: with their variable.
  for (int id = 0; id < n; ++id) {
    if (roles.role[id] == Role::kVariable && stage[id] < 0) {
      stage[id] = std::max(0, first_consumer_stage(id));
    }
  }
  for (int id : order) {
    if (roles.role[id] != Role::kUpdate) continue;
    int variable = graph.op(id).forward_of;
    if (variable < 0 || roles.role[variable] != Role::kVariable) {
      variable = -1;
      for (int e : graph.in_edges(id)) {
        if (roles.role[graph.edge(e).src] == Role::kVariable) variable = graph.edge(e).src;
      }
    }
    stage[id] = variable >= 0 ? stage[variable] : std::max(0, latest_predecessor_stage(id));
  }

  // ---- the rewritten step: variables and updates once, the rest once per micro-batch.
  OpGraph out(graph.name() + "@pipeline");
  out.set_source(graph.source());
  std::vector<int> device_of;
  std::vector<char> shared(n, 0), per_micro(n, 0);
  for (int id = 0; id < n; ++id) {
    const Role r = roles.role[id];
    shared[id] = r == Role::kVariable || r == Role::kUpdate;
    per_micro[id] = !shared[id];
  }
  // The shared ops and micro-batch 0's in the graph's own order, so that the
  // simulator breaks ties among ready ops as it does on the graph itself (a
  // one-stage, one-micro-batch pipeline is the step); the other micro-batches after.
  const auto device_for = [&](int id) { return (stage[id] % stages) * group + slot_of(id); };
  std::vector<int> shared_id(n, -1);
  std::vector<std::vector<int>> micro_id(micro);
  micro_id[0].assign(n, -1);
  for (int id = 0; id < n; ++id) {
    Op op = scaled_op(graph, roles, id, shared[id] ? 1.0 : shares[0] / batch);
    if (per_micro[id]) {
      op.name = "m0/" + op.name;
      if (!op.colocation_group.empty()) op.colocation_group = "m0/" + op.colocation_group;
    }
    (shared[id] ? shared_id : micro_id[0])[id] = out.add_op(std::move(op));
    device_of.push_back(device_for(id));
  }
  for (int id = 0; id < n; ++id) {
    const int fwd = graph.op(id).forward_of;
    if (fwd >= 0 && shared[id] && shared[fwd]) out.mutable_op(shared_id[id]).forward_of = shared_id[fwd];
    if (fwd >= 0 && per_micro[id] && per_micro[fwd]) out.mutable_op(micro_id[0][id]).forward_of = micro_id[0][fwd];
  }
  for (int pass = 0; pass < 2; ++pass)  // the shared copy's edges, then micro-batch 0's (as append_copy adds them)
    for (int e = 0; e < graph.num_edges(); ++e) {
      const Edge& edge = graph.edge(e);
      if (pass == 0 && shared[edge.src] && shared[edge.dst])
        out.add_edge(shared_id[edge.src], shared_id[edge.dst], edge.src_output, edge.bytes);
      if (pass == 1 && per_micro[edge.src] && per_micro[edge.dst])
        out.add_edge(micro_id[0][edge.src], micro_id[0][edge.dst], edge.src_output,
                     roles.edge_scales[e] ? edge.bytes * (shares[0] / batch) : edge.bytes);
    }
  for (int m = 0; m < micro; ++m) {
    if (m > 0)
      micro_id[m] = append_copy(out, graph, roles, shares[m] / batch, "m" + std::to_string(m) + "/", per_micro);
    for (int id = 0; id < n; ++id) {
      if (!per_micro[id]) continue;
      if (m > 0) device_of.push_back(device_for(id));
      const int fwd = graph.op(id).forward_of;
      if (fwd >= 0 && shared[fwd]) out.mutable_op(micro_id[m][id]).forward_of = shared_id[fwd];
    }
    // Weights into every micro-batch's ops that read them.
    for (int e = 0; e < graph.num_edges(); ++e) {
      const Edge& edge = graph.edge(e);
      if (shared[edge.src] && per_micro[edge.dst]) {
        out.add_edge(shared_id[edge.src], micro_id[m][edge.dst], edge.src_output, edge.bytes);
      }
    }
  }
  auto add_on = [&](int id, int device) {
    device_of.push_back(device);
    return id;
  };
  // Each parameter gradient: M partial copies summed into one before its update.
  int accumulators = 0;
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    if (!per_micro[edge.src] || !shared[edge.dst]) continue;  // only gradients cross so
    const int update = shared_id[edge.dst];
    if (micro == 1) {
      out.add_edge(micro_id[0][edge.src], update, edge.src_output, edge.bytes);
      continue;
    }
    std::string name = "pipeline/" + graph.op(edge.dst).name + "/accumulate";
    if (out.find(name) >= 0) name += "#" + std::to_string(e);
    const int acc = add_on(add_strategy_op(out, name, "AccumulateGrad", Phase::kBackward,
                                           fused ? 0 : (micro - 1) * edge.bytes / 4,
                                           fused ? 0 : (micro + 1) * edge.bytes, {edge.bytes}),
                           (stage[edge.dst] % stages) * group + slot_of(edge.dst));
    if (fused) out.mutable_op(acc).compute_us = 0;
    // A gradient sum of the update's variable (so that a rewrite on top of this
    // one sees weight-sized tensors, not batch-sized ones).
    const int variable = graph.op(edge.dst).forward_of;
    if (variable >= 0 && roles.role[variable] == Role::kVariable) out.mutable_op(acc).forward_of = shared_id[variable];
    for (int m = 0; m < micro; ++m) out.add_edge(micro_id[m][edge.src], acc, edge.src_output, edge.bytes);
    out.add_edge(acc, update, 0, edge.bytes);
    ++accumulators;
  }

  // ---- the schedule's order on each stage (stage_order): GPipe's F0, F1, ...,
  // F(M-1), then B(M-1), ..., B0, or 1F1B's. A zero-cost barrier between
  // consecutive groups waits for the ops of the first group that feed nothing
  // inside it and releases the ops of the next group that nothing inside it feeds.
  // The pass an op runs in: its phase, except that an op feeding a forward op
  // runs in the forward pass whatever its label (the tensor-parallel rewrite's
  // collective steps are all labelled backward, its forward all-reduces too).
  std::vector<char> runs_forward(n, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int id = *it;
    runs_forward[id] = graph.op(id).phase == Phase::kForward;
    for (int e : graph.out_edges(id))
      if (runs_forward[graph.edge(e).dst] && graph.op(graph.edge(e).dst).phase == Phase::kForward) runs_forward[id] = 1;
    if (graph.op(id).phase != Phase::kForward)
      for (int e : graph.out_edges(id))
        if (runs_forward[graph.edge(e).dst]) runs_forward[id] = 1;
  }
  int barriers = 0;
  for (int device = 0; device < stages * group; ++device) {
    const int s = device / group, r = device % group;
    std::vector<std::vector<int>> groups;  // new ids, in run order
    for (const Pass& pass : stage_order(schedule, chunks, s, stages, micro)) {
      const Phase phase = pass.forward ? Phase::kForward : Phase::kBackward;
      const int piece = pass.chunk * stages + s;
      std::vector<int> members;
      for (int id = 0; id < n; ++id) {
        const Phase runs = runs_forward[id] ? Phase::kForward : graph.op(id).phase;
        if (per_micro[id] && stage[id] == piece && slot_of(id) == r && runs == phase)
          members.push_back(micro_id[pass.micro][id]);
      }
      if (!members.empty()) groups.push_back(std::move(members));
    }
    // (One stage and one micro-batch: its two passes need no order beyond their
    // data's, and the step is the graph's own.)
    if (pieces == 1 && micro == 1) groups.clear();
    for (std::size_t g = 0; g + 1 < groups.size(); ++g) {
      std::vector<char> in_a(out.num_ops(), 0), in_b(out.num_ops(), 0);
      for (int id : groups[g]) in_a[id] = 1;
      for (int id : groups[g + 1]) in_b[id] = 1;
      const int barrier = add_on(
          add_strategy_op(out,
                          "pipeline/s" + std::to_string(s) + (group > 1 ? "r" + std::to_string(r) : "") + "/barrier" +
                              std::to_string(g),
                          "Barrier", Phase::kForward, 0, 0, {0}),
          device);
      out.mutable_op(barrier).compute_us = 0;
      in_a.push_back(0);
      in_b.push_back(0);
      for (int id : groups[g]) {
        bool feeds_group = false;
        for (int e : out.out_edges(id)) feeds_group = feeds_group || in_a[out.edge(e).dst];
        if (!feeds_group) out.add_edge(id, barrier, 0, 0);
      }
      for (int id : groups[g + 1]) {
        bool fed_by_group = false;
        for (int e : out.in_edges(id)) fed_by_group = fed_by_group || in_b[out.edge(e).src];
        if (!fed_by_group) out.add_edge(barrier, id, 0, 0);
      }
      ++barriers;
    }
  }

  out.set_batch(batch);
  out.validate();
  result.spec = "pipeline:" + std::to_string(stages) + ",micro=" + std::to_string(micro) +
                (schedule == "gpipe" ? "" : ",schedule=" + (chunks > 1 ? "interleaved:" + std::to_string(chunks) : schedule)) +
                (fused ? ",accumulate=fused" : "");
  out.set_name(graph.name() + "@" + result.spec);
  result.graph = std::move(out);
  result.placement = Placement(std::move(device_of));
  result.replicas = 1;
  result.devices_used = stages * group;
  result.global_batch = batch;
  {
    std::vector<double> stage_us(stages, 0);
    for (std::size_t i = 0; i < forward.size(); ++i) stage_us[cut[i] % stages] += cost[i];
    std::string text = "forward cost per stage on " + cluster.device(0).name + " (us):";
    for (double t : stage_us) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, " %.4g", t);
      text += buffer;
    }
    result.notes.push_back(text);
  }
  if (fused && accumulators > 0)
    result.notes.push_back("accumulate=fused: each micro-batch's weight gradient is added into the sum as it is "
                           "written (Megatron-LM's gradient accumulation fusion); the sums cost nothing more");
  result.notes.push_back(std::string(schedule == "gpipe" ? "GPipe" : schedule == "1f1b" ? "1F1B" : "interleaved 1F1B") +
                         (chunks > 1 ? " (" + std::to_string(chunks) + " model chunks per device)" : std::string()) +
                         " order enforced by " +
                         std::to_string(barriers) +
                         " zero-cost barrier ops; " + std::to_string(accumulators) +
                         " gradient accumulations of " + std::to_string(micro) + " micro-batches");
  result.notes.push_back("no re-materialisation: activations are kept, not recomputed in backward "
                         "as GPipe does, so backward time and memory are those of plain training");
  return result;
}

}  // namespace aware::strategies_detail
