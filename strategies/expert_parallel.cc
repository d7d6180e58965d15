// ep:N — expert parallelism for a mixture of experts (GShard, Lepikhin et al. 2021;
// Switch Transformer, Fedus et al. 2022): N ranks, each a data-parallel replica of
// everything but the experts, on its 1/N of the global batch, with those weights'
// gradients exchanged as dp's; expert e lives on rank e mod N only, once, and runs
// the tokens every rank routes to it. The all-to-all is the edges that cross: each
// rank's dispatch sends its tokens for expert e to e's rank, each expert sends its
// results back to the ranks' combines, and the backward pass does the same in
// reverse, every piece the rank's share of the expert's tokens.
// Experts are read from the graph: ops whose name holds ".../expert<E>/..." (the gpt
// builder's mixture layers), their backward and update ops by their forward op.
#include <algorithm>
#include <cctype>
#include <string>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "strategies/rewrite.h"

namespace aware::strategies_detail {

namespace {

// E for a name holding "/expert<E>/", else -1.
int expert_in_name(const std::string& name) {
  for (std::size_t at = name.find("/expert"); at != std::string::npos; at = name.find("/expert", at + 1)) {
    std::size_t end = at + 7;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end > at + 7 && end < name.size() && name[end] == '/') return std::stoi(name.substr(at + 7, end - at - 7));
  }
  return -1;
}

int ep_count(const StrategySpec& spec) {
  return spec.argument.empty() ? 0 : parse_count(spec.argument, spec.text, "the expert-parallel size");
}

}  // namespace

void check_expert_parallel(const StrategySpec& spec) {
  ep_count(spec);
  collective_options(spec);
}

StrategyResult apply_expert_parallel(const OpGraph& graph, const Cluster& cluster, const StrategySpec& spec,
                                     const StrategyContext&) {
  const int devices = cluster.num_devices();
  const int ranks = ep_count(spec) > 0 ? ep_count(spec) : devices;
  if (ranks > devices)
    throw ConfigError("strategy '" + spec.text + "': " + std::to_string(ranks) + " expert-parallel ranks need as many devices, cluster '" +
                      cluster.name() + "' has " + std::to_string(devices));
  const CollectiveOptions collective = collective_options(spec);
  const int n = graph.num_ops();
  std::vector<int> expert_of(n, -1);
  int experts = 0;
  for (int id = 0; id < n; ++id) {
    if (graph.op(id).phase != Phase::kForward) continue;
    expert_of[id] = expert_in_name(graph.op(id).name);
    experts = std::max(experts, expert_of[id] + 1);
  }
  if (experts == 0)
    throw ConfigError("strategy '" + spec.text + "': graph '" + graph.name() +
                      "' has no experts to spread (expert parallelism needs a mixture of experts, e.g. zoo:mixtral-8x7b)");
  for (int id = 0; id < n; ++id) {
    if (graph.op(id).phase == Phase::kForward) continue;
    int walk = graph.op(id).forward_of, steps = 0;
    while (walk >= 0 && graph.op(walk).phase != Phase::kForward && steps++ < n) walk = graph.op(walk).forward_of;
    if (walk >= 0) expert_of[id] = expert_of[walk];
  }
  const BatchRoles roles = classify_batch_roles(graph);
  require_batch_metadata(graph, roles, spec.text, true);
  StrategyResult result;
  const double batch = graph.batch();
  const std::vector<double> shares = split_batch(batch, ranks, spec.text, "ranks", &result.notes);

  OpGraph out(graph.name() + "@ep");
  out.set_source(graph.source());
  std::vector<int> device_of;
  std::vector<char> dense(n), skip(graph.num_edges(), 0);
  for (int id = 0; id < n; ++id) dense[id] = ranks == 1 || expert_of[id] < 0;
  for (int e = 0; e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    // Dense weights' gradients go through the exchange; an edge into or out of an
    // expert is added below, once per rank.
    skip[e] = (dense[edge.src] && dense[edge.dst] && roles.gradient_edge[e]) || !dense[edge.src] || !dense[edge.dst];
  }
  std::vector<std::vector<int>> ids(ranks);
  for (int r = 0; r < ranks; ++r) {
    ids[r] = append_copy(out, graph, roles, shares[r] / batch, ranks > 1 ? "r" + std::to_string(r) + "/" : "", dense, skip);
    for (int id = 0; id < n; ++id)
      if (dense[id]) device_of.push_back(r);
  }
  // Each expert once, on the full batch's routed tokens, on rank e mod N.
  std::vector<std::vector<int>> expert_ids(experts);
  for (int x = 0; ranks > 1 && x < experts; ++x) {
    std::vector<char> mine(n, 0);
    for (int id = 0; id < n; ++id) mine[id] = expert_of[id] == x;
    expert_ids[x] = append_copy(out, graph, roles, 1.0, "", mine);
    for (int id = 0; id < n; ++id)
      if (mine[id]) device_of.push_back(x % ranks);
  }
  const auto node = [&](int id, int r) { return dense[id] ? ids[r][id] : expert_ids[expert_of[id]][id]; };
  double a2a_bytes = 0;
  for (int e = 0; ranks > 1 && e < graph.num_edges(); ++e) {
    const Edge& edge = graph.edge(e);
    if (dense[edge.src] && dense[edge.dst]) continue;
    if (!dense[edge.src] && !dense[edge.dst]) continue;  // inside one expert: copied with it
    for (int r = 0; r < ranks; ++r) {
      const double bytes = edge.bytes * shares[r] / batch;
      out.add_edge(node(edge.src, r), node(edge.dst, r), edge.src_output, bytes);
      const int expert = expert_of[dense[edge.src] ? edge.dst : edge.src];
      if (expert % ranks != r) a2a_bytes += bytes;
    }
  }
  // The dense weights' gradients, exchanged as data parallelism exchanges them.
  const std::vector<int> rank = topological_rank(graph);
  std::vector<Gradient> gradients;
  for (int e = 0; e < graph.num_edges(); ++e)
    if (roles.gradient_edge[e] && dense[graph.edge(e).src] && dense[graph.edge(e).dst])
      gradients.push_back(replica_gradient(graph, ids, rank, e, roles.edge_scales[e] ? 1.0 / ranks : 1.0));
  std::vector<int> rank_device(ranks);
  for (int r = 0; r < ranks; ++r) rank_device[r] = r;
  insert_gradient_exchange(out, device_of, gradients, rank_device, collective, "allreduce");

  out.set_batch(batch);
  out.validate();
  result.graph = std::move(out);
  result.placement = Placement(std::move(device_of));
  result.replicas = ranks;
  result.devices_used = ranks;
  result.global_batch = batch;
  char bucket[32];
  std::snprintf(bucket, sizeof bucket, "%g", collective.bucket_bytes / 1e6);
  result.spec = "ep:" + std::to_string(ranks) + ",collective=" + collective.algorithm + ",bucket_mb=" + bucket +
                ",overlap=" + (collective.overlap ? "on" : "off");
  result.graph.set_name(graph.name() + "@" + result.spec);
  if (ranks > 1) {
    result.notes.push_back(std::to_string(experts) + " experts per layer on " + std::to_string(ranks) +
                           " ranks (expert e on rank e mod " + std::to_string(ranks) + "); the all-to-all moves " +
                           std::to_string(static_cast<long long>(a2a_bytes)) + " bytes a step, forward and backward");
  }
  return result;
}

}  // namespace aware::strategies_detail
