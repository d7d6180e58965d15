#include "strategies/rewrite.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/placer.h"

namespace aware::strategies_detail {

std::string graph_where(const OpGraph& graph) {
  std::string out = "graph '" + graph.name() + "'";
  if (!graph.source().empty() && graph.source() != graph.name()) out += " (" + graph.source() + ")";
  return out;
}

int parse_count(const std::string& text, const std::string& spec, const std::string& what) {
  const bool digits = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::out_of_range&) {
    // A whole number all the same: say the limit, not that it is not one.
    if (digits)
      throw ConfigError("strategy '" + spec + "': " + what + " '" + text + "' is too large (at most " +
                        std::to_string(std::numeric_limits<int>::max()) +
                        ", and no more than the cluster's devices)");
    used = 0;
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || value < 1) {
    throw ConfigError("strategy '" + spec + "': " + what + " '" + text +
                      "' is not a whole number >= 1");
  }
  return value;
}

Placement place_with(const std::string& method, const OpGraph& graph, const Cluster& cluster,
                     const StrategyContext& context, const std::string& spec) {
  auto placer = PlacerRegistry::instance().create(method);  // unknown: ConfigError
  if (placer->needs_evaluator() && context.evaluator == nullptr) {
    throw ConfigError("strategy '" + spec + "': method '" + method +
                      "' searches by simulation and needs an evaluator");
  }
  PlaceContext pc;
  pc.evaluator = context.evaluator;
  pc.seed = context.seed;
  pc.budget_evals = context.budget_evals;
  pc.budget_seconds = context.budget_seconds;
  pc.progress = context.progress;
  pc.options = context.placer_options;
  Placement placed = placer->place(graph, cluster, pc);
  check_placement(graph, cluster, placed, "strategy '" + spec + "'");
  return placed;
}

namespace {

bool is_variable(const OpGraph& graph, int id) {
  const Op& op = graph.op(id);
  if (op.phase != Phase::kForward || !graph.in_edges(id).empty()) return false;
  return op.param_bytes > 0 || op.type.find("Variable") != std::string::npos;
}

}  // namespace

BatchRoles classify_batch_roles(const OpGraph& graph) {
  const int n = graph.num_ops();
  BatchRoles roles;
  roles.role.assign(n, Role::kModel);
  for (int id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    if (is_variable(graph, id)) {
      roles.role[id] = Role::kVariable;
    } else if (op.phase == Phase::kUpdate) {
      roles.role[id] = Role::kUpdate;
    }
  }
  for (int id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    if (op.phase == Phase::kBackward && op.forward_of >= 0 &&
        roles.role[op.forward_of] == Role::kVariable) {
      roles.role[id] = Role::kParamSide;
    }
  }
  // A pipeline's accumulation of an embedding's sparse gradients (one row per token
  // of every micro-batch) is as batch-sized as they are: a model op, not a sum of
  // the variable's gradient.
  std::vector<char> sparse(n, 0);
  for (int id : topological_order(graph)) {
    const Op& op = graph.op(id);
    if (op.type == "UnsortedSegmentSum") {
      sparse[id] = 1;
    } else if (op.type == "AccumulateGrad" && !graph.in_edges(id).empty()) {
      bool all = true;
      for (int e : graph.in_edges(id)) all = all && sparse[graph.edge(e).src];
      sparse[id] = all;
      if (all && roles.role[id] == Role::kParamSide) roles.role[id] = Role::kModel;
    }
  }
  roles.output_scales.resize(n);
  for (int id = 0; id < n; ++id) {
    const Op& op = graph.op(id);
    const bool model = roles.role[id] == Role::kModel;
    roles.output_scales[id].assign(op.output_bytes.size(), model ? 1 : 0);
  }
  roles.edge_scales.assign(graph.num_edges(), 0);
  roles.gradient_edge.assign(graph.num_edges(), 0);
  // A model op's output is a parameter gradient (weight-sized, not batch-sized) when
  // it feeds an update or a variable's gradient sum.
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    const Role dst = roles.role[edge.dst];
    if (dst == Role::kUpdate && roles.role[edge.src] != Role::kVariable) {
      roles.gradient_edge[e] = 1;
    }
    // (Except a sparse gradient: an embedding lookup's gradient holds one row per
    // token looked up, so it grows with the batch whatever it feeds.)
    if ((dst == Role::kUpdate || dst == Role::kParamSide) && roles.role[edge.src] == Role::kModel &&
        !sparse[edge.src]) {
      auto& scales = roles.output_scales[edge.src];
      if (edge.src_output < static_cast<int>(scales.size())) scales[edge.src_output] = 0;
    }
  }
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    const auto& scales = roles.output_scales[edge.src];
    roles.edge_scales[e] = edge.src_output < static_cast<int>(scales.size())
                               ? scales[edge.src_output]
                               : (roles.role[edge.src] == Role::kModel ? 1 : 0);
  }
  return roles;
}

void require_batch_metadata(const OpGraph& graph, const BatchRoles& roles, const std::string& spec,
                            bool needs_updates) {
  if (!(graph.batch() > 0)) {
    throw GraphError(graph_where(graph) + " records no batch size, which strategy '" + spec +
                     "' needs to split the global batch (build it with `aware graph build`, or "
                     "add a top-level \"batch\" field; docs/formats.md)");
  }
  if (needs_updates &&
      std::find(roles.gradient_edge.begin(), roles.gradient_edge.end(), 1) ==
          roles.gradient_edge.end()) {
    throw GraphError(graph_where(graph) + " has no update-phase ops fed by gradients, which "
                     "strategy '" + spec + "' needs to know what to exchange (phase \"update\" "
                     "ops reading a variable and its gradient; docs/formats.md)");
  }
}

std::vector<double> split_batch(double batch, int parts, const std::string& spec,
                                const std::string& what, std::vector<std::string>* notes) {
  if (parts < 1) throw ConfigError("strategy '" + spec + "': " + what + " must be at least 1");
  if (batch != std::floor(batch)) {
    throw ConfigError("strategy '" + spec + "': the graph's batch " + std::to_string(batch) +
                      " is not a whole number of samples");
  }
  if (batch < parts) {
    std::ostringstream msg;
    msg << "strategy '" << spec << "': a batch of " << batch << " samples cannot be split into "
        << parts << " " << what;
    throw ConfigError(msg.str());
  }
  const long long total = static_cast<long long>(batch);
  const long long base = total / parts, extra = total % parts;
  std::vector<double> shares(parts);
  for (int i = 0; i < parts; ++i) shares[i] = static_cast<double>(base + (i < extra ? 1 : 0));
  if (extra != 0 && notes) {
    std::ostringstream msg;
    msg << "batch " << total << " does not divide into " << parts << " " << what << ": "
        << extra << " of them take " << base + 1 << " samples, the rest " << base;
    notes->push_back(msg.str());
  }
  return shares;
}

Op scaled_op(const OpGraph& graph, const BatchRoles& roles, int id, double fraction) {
  Op op = graph.op(id);
  op.forward_of = -1;  // the caller maps it into the new graph
  if (fraction == 1) return op;
  if (roles.role[id] == Role::kParamSide) {
    // A weight's gradient sum reads its partial gradients: the sparse ones (an
    // embedding's, one row per token) follow the batch, so that part of its work
    // does too; its output is weight-sized.
    double in = 0, scaled = 0;
    for (int e : graph.in_edges(id)) {
      in += graph.edge(e).bytes;
      if (roles.edge_scales[e]) scaled += graph.edge(e).bytes;
    }
    if (scaled > 0 && in > 0) {
      const double keep = 1 - (1 - fraction) * scaled / in;
      op.flops *= keep;
      if (op.has_measured_cost()) op.compute_us *= keep;
      op.bytes_accessed = std::max(0.0, op.bytes_accessed - scaled * (1 - fraction));
    }
    return op;
  }
  if (roles.role[id] != Role::kModel) return op;
  op.flops *= fraction;
  op.temp_bytes *= fraction;
  if (op.has_measured_cost()) op.compute_us *= fraction;
  double fixed = 0;  // bytes that do not depend on the batch: weights read, gradients written
  for (int e : graph.in_edges(id)) {
    if (!roles.edge_scales[e]) fixed += graph.edge(e).bytes;
  }
  for (std::size_t o = 0; o < op.output_bytes.size(); ++o) {
    if (roles.output_scales[id][o]) {
      op.output_bytes[o] *= fraction;
    } else {
      fixed += op.output_bytes[o];
    }
  }
  fixed = std::min(fixed, op.bytes_accessed);
  op.bytes_accessed = fixed + (op.bytes_accessed - fixed) * fraction;
  op.shape.clear();
  return op;
}

std::vector<int> append_copy(OpGraph& out, const OpGraph& in, const BatchRoles& roles,
                             double fraction, const std::string& prefix,
                             const std::vector<char>& keep, const std::vector<char>& skip_edge) {
  std::vector<int> id_map(in.num_ops(), -1);
  for (int id = 0; id < in.num_ops(); ++id) {
    if (!keep.empty() && !keep[id]) continue;
    Op op = scaled_op(in, roles, id, fraction);
    op.name = prefix + op.name;
    if (!op.colocation_group.empty()) op.colocation_group = prefix + op.colocation_group;
    id_map[id] = out.add_op(std::move(op));
  }
  for (int id = 0; id < in.num_ops(); ++id) {
    const int forward_of = in.op(id).forward_of;
    if (id_map[id] >= 0 && forward_of >= 0 && id_map[forward_of] >= 0) {
      out.mutable_op(id_map[id]).forward_of = id_map[forward_of];
    }
  }
  for (int e = 0; e < in.num_edges(); ++e) {
    if (!skip_edge.empty() && skip_edge[e]) continue;
    const Edge& edge = in.edge(e);
    if (id_map[edge.src] < 0 || id_map[edge.dst] < 0) continue;
    out.add_edge(id_map[edge.src], id_map[edge.dst], edge.src_output,
                 roles.edge_scales[e] ? edge.bytes * fraction : edge.bytes);
  }
  return id_map;
}

Gradient replica_gradient(const OpGraph& graph, const std::vector<std::vector<int>>& ids,
                          const std::vector<int>& topo_rank, int e, double scale) {
  const Edge& edge = graph.edge(e);
  Gradient g;
  for (const std::vector<int>& replica : ids) {
    g.producer.push_back(replica[edge.src]);
    g.output.push_back(edge.src_output);
    g.consumer.push_back(replica[edge.dst]);
  }
  g.bytes = edge.bytes * scale;
  g.ready_order = topo_rank[edge.src];
  return g;
}

int add_strategy_op(OpGraph& out, const std::string& name, const std::string& type, Phase phase,
                    double flops, double bytes_accessed, std::vector<double> output_bytes) {
  Op op;
  op.name = name;
  op.type = type;
  op.phase = phase;
  op.flops = flops;
  op.bytes_accessed = bytes_accessed;
  op.output_bytes = std::move(output_bytes);
  op.block = kStrategyBlock;
  return out.add_op(std::move(op));
}

}  // namespace aware::strategies_detail
