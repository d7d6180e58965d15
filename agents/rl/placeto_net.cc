// The Placeto agent's networks and their inputs: the graph's tensors, the pooling
// masks, the start-time column, our network (net=ours) and Placeto's network as
// its public code builds it (net=paper; networks.h gives the architecture with its
// sources; written from the facts of the code, not carried over from it).
// LibTorch translation unit.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "agents/rl/networks.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware::rl {

// ------------------------------------------------------------ network

PlacetoGraphTensors placeto_graph_tensors(const OpGraph& graph) {
  const int n = graph.num_ops();
  PlacetoGraphTensors g;
  static_cast<DagEdgeTensors&>(g) = dag_edge_tensors(graph);
  g.num_ops = n;
  const Reachability reach(graph);
  g.descendants = torch::zeros({n, n}, torch::kBool);
  auto acc = g.descendants.accessor<bool, 2>();
  for (int i = 0; i < n; ++i)
    for (int j : reach.descendants(i)) acc[i][j] = true;
  g.ancestors = g.descendants.t().contiguous();
  g.has_parent = torch::zeros({n, 1}, torch::kFloat);
  g.has_child = torch::zeros({n, 1}, torch::kFloat);
  if (g.edge_src.numel() > 0) {
    g.has_parent.index_fill_(0, g.edge_dst, 1.0);
    g.has_child.index_fill_(0, g.edge_src, 1.0);
  }
  return g;
}

PoolMasks placeto_pool_masks(const PlacetoGraphTensors& g, const torch::Tensor& idx, bool normalise_rows) {
  PoolMasks m;
  const torch::Tensor desc = g.descendants.index_select(0, idx).to(torch::kFloat);
  const torch::Tensor anc = g.ancestors.index_select(0, idx).to(torch::kFloat);
  const torch::Tensor self = torch::zeros_like(desc).scatter_(1, idx.unsqueeze(1), 1.0);
  const torch::Tensor par = (1.0 - desc - anc - self).clamp_min(0.0);
  auto normalise = [&](const torch::Tensor& t) {
    return normalise_rows ? t / t.sum(1, true).clamp_min(1.0) : t;
  };
  m.ancestors = normalise(anc);
  m.descendants = normalise(desc);
  m.parallel = normalise(par);
  return m;
}

PlacetoNetImpl::PlacetoNetImpl(int feature_dim, int hidden, int rounds, int num_devices, bool skip)
    : rounds_(rounds), skip_(skip) {
  node1_ = register_module("node1", torch::nn::Linear(feature_dim, hidden));
  node2_ = register_module("node2", torch::nn::Linear(hidden, hidden));
  up_ = register_module("from_parents", torch::nn::Linear(2 * hidden, hidden));
  down_ = register_module("from_children", torch::nn::Linear(2 * hidden, hidden));
  head1_ = register_module("head1", torch::nn::Linear(8 * hidden + (skip ? 4 * feature_dim : 0), hidden));
  head2_ = register_module("head2", torch::nn::Linear(hidden, num_devices));
}

torch::Tensor PlacetoNetImpl::embed(const torch::Tensor& features, const DagEdgeTensors& edges) {
  const torch::Tensor h0 = torch::relu(node2_(torch::relu(node1_(features))));
  const auto [up, down] = dag_message_passing(h0, edges, rounds_, up_, down_);
  return torch::cat({up, down}, 1);
}

torch::Tensor PlacetoNetImpl::embed(const torch::Tensor& features, const PlacetoGraphTensors& g) {
  return embed(features, static_cast<const DagEdgeTensors&>(g));
}

torch::Tensor PlacetoNetImpl::forward(const torch::Tensor& features, const PlacetoGraphTensors& g,
                                      const torch::Tensor& idx) {
  const torch::Tensor e = embed(features, g);
  const PoolMasks m = placeto_pool_masks(g, idx);
  const torch::Tensor summary =
      skip_ ? torch::cat({m.ancestors.mm(e), m.descendants.mm(e), m.parallel.mm(e), e.index_select(0, idx),
                          m.ancestors.mm(features), m.descendants.mm(features), m.parallel.mm(features),
                          features.index_select(0, idx)},
                         1)
            : torch::cat({m.ancestors.mm(e), m.descendants.mm(e), m.parallel.mm(e), e.index_select(0, idx)}, 1);
  return head2_(torch::relu(head1_(summary)));
}

torch::Tensor PlacetoNetImpl::forward_batch(const torch::Tensor& features,
                                            const PlacetoGraphTensors& g,
                                            const DagEdgeTensors& replicated,
                                            const std::vector<torch::Tensor>& idx) {
  const int64_t S = static_cast<int64_t>(idx.size());
  const int64_t n = g.num_ops;
  AWARE_CHECK(S > 0 && features.size(0) == S * n && replicated.num_nodes == S * n,
              "batched Placeto input does not match the graph");
  const torch::Tensor e = embed(features, replicated);
  // Pooling masks of every state, padded to the largest chunk: [S x Cmax x n].
  int64_t cmax = 0;
  for (const auto& i : idx) cmax = std::max(cmax, i.size(0));
  std::vector<torch::Tensor> anc, desc, par, self_rows;
  std::vector<int64_t> valid;
  for (int64_t s = 0; s < S; ++s) {
    const PoolMasks m = placeto_pool_masks(g, idx[s]);
    const int64_t c = idx[s].size(0);
    auto pad = [&](const torch::Tensor& t) {
      return c == cmax ? t : torch::cat({t, torch::zeros({cmax - c, n}, t.options())});
    };
    anc.push_back(pad(m.ancestors));
    desc.push_back(pad(m.descendants));
    par.push_back(pad(m.parallel));
    self_rows.push_back(idx[s] + s * n);
    for (int64_t k = 0; k < c; ++k) valid.push_back(s * cmax + k);
  }
  const torch::Tensor A = torch::stack(anc), Dm = torch::stack(desc), P = torch::stack(par);
  const torch::Tensor rows = torch::tensor(valid, torch::kInt64);
  const torch::Tensor self_idx = torch::cat(self_rows);
  auto pool = [&](const torch::Tensor& mask, const torch::Tensor& x) {
    return mask.bmm(x.view({S, n, x.size(1)})).view({S * cmax, x.size(1)}).index_select(0, rows);
  };
  const torch::Tensor summary =
      skip_ ? torch::cat({pool(A, e), pool(Dm, e), pool(P, e), e.index_select(0, self_idx), pool(A, features),
                          pool(Dm, features), pool(P, features), features.index_select(0, self_idx)},
                         1)
            : torch::cat({pool(A, e), pool(Dm, e), pool(P, e), e.index_select(0, self_idx)}, 1);
  return head2_(torch::relu(head1_(summary)));
}

std::vector<float> placeto_start_column(const std::vector<double>& rel, bool paper) {
  double largest_abs = 0, largest = 0;
  for (size_t i = 0; i < rel.size(); ++i) {
    largest_abs = std::max(largest_abs, std::abs(rel[i]));
    largest = i == 0 ? rel[i] : std::max(largest, rel[i]);
  }
  const double scale = paper ? (largest != 0 ? largest : 1.0) : largest_abs;
  std::vector<float> column(rel.size(), 0.0f);
  if (scale != 0)
    for (size_t i = 0; i < rel.size(); ++i) column[i] = static_cast<float>(rel[i] / scale);
  return column;
}


// ------------------------------------------------------------ Placeto's own network (net=paper)

PlacetoPaperNetImpl::PlacetoPaperNetImpl(int feature_dim, int rounds, int num_devices, bool mean_pool)
    : rounds_(rounds), mean_pool_(mean_pool) {
  AWARE_CHECK(feature_dim >= 1 && rounds >= 0 && num_devices >= 1, "Placeto network: bad shape");
  const int d = feature_dim, e = 2 * feature_dim;
  node_ = fnn("node", {d, d, d, d});
  parents_f_ = fnn("parents_f", {d, d, d});
  parents_g_ = fnn("parents_g", {d, d, d});
  children_f_ = fnn("children_f", {d, d, d});
  children_g_ = fnn("children_g", {d, d, d});
  anc_f_ = fnn("ancestors_f", {e, e, e});
  anc_g_ = fnn("ancestors_g", {e, e, e});
  desc_f_ = fnn("descendants_f", {e, e, e});
  desc_g_ = fnn("descendants_g", {e, e, e});
  par_f_ = fnn("parallel_f", {e, e, e});
  par_g_ = fnn("parallel_g", {e, e, e});
  classifier_ = fnn("classifier", {4 * e, 8 * e, 4 * e, num_devices});
}

PlacetoPaperNetImpl::Fnn PlacetoPaperNetImpl::fnn(const std::string& name, std::vector<int> sizes) {
  Fnn layers;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    auto layer = register_module(name + std::to_string(i), torch::nn::Linear(sizes[i], sizes[i + 1]));
    // Glorot-uniform weights, zero biases (NP:6-16, NP:26-27).
    torch::NoGradGuard no_grad;
    torch::nn::init::xavier_uniform_(layer->weight);
    layer->bias.zero_();
    layers.push_back(layer);
  }
  return layers;
}

torch::Tensor PlacetoPaperNetImpl::run(const Fnn& layers, torch::Tensor x) {
  for (size_t i = 0; i < layers.size(); ++i) {
    x = torch::linear(x, layers[i]->weight, layers[i]->bias);
    if (i + 1 < layers.size()) x = torch::relu(x);  // no ReLU after the last layer (NP:32-38)
  }
  return x;
}

torch::Tensor PlacetoPaperNetImpl::pass(const torch::Tensor& self, const torch::Tensor& src,
                                        const torch::Tensor& dst, const torch::Tensor& sink, const Fnn& f,
                                        const Fnn& g) const {
  torch::Tensor x = self;
  if (src.numel() == 0) return x;  // no edges: every row is a sink, x stays the node transform
  for (int r = 0; r < rounds_; ++r) {
    // A · relu(f(x)): the sum of the messages over each node's parents (or children).
    const torch::Tensor m = torch::relu(run(f, x));
    const torch::Tensor summed = scatter_add_rows(gather_rows(m, src), dst, m.size(0));
    x = torch::relu(run(g, summed)) * sink + self;
  }
  return x;
}

torch::Tensor PlacetoPaperNetImpl::embed(const torch::Tensor& features, const PlacetoGraphTensors& g) {
  const torch::Tensor self = run(node_, features);
  const torch::Tensor from_parents = pass(self, g.edge_src, g.edge_dst, g.has_parent, parents_f_, parents_g_);
  const torch::Tensor from_children = pass(self, g.edge_dst, g.edge_src, g.has_child, children_f_, children_g_);
  return torch::cat({from_parents, from_children}, 1);
}

torch::Tensor PlacetoPaperNetImpl::forward(const torch::Tensor& features, const PlacetoGraphTensors& g,
                                           const torch::Tensor& idx) {
  const torch::Tensor e = embed(features, g);
  const PoolMasks m = placeto_pool_masks(g, idx, /*normalise=*/mean_pool_);
  auto pool = [&](const Fnn& f, const Fnn& gg, const torch::Tensor& mask) {
    return torch::relu(run(gg, mask.mm(torch::relu(run(f, e)))));
  };
  const torch::Tensor summary = torch::cat(
      {pool(anc_f_, anc_g_, m.ancestors), pool(desc_f_, desc_g_, m.descendants),
       pool(par_f_, par_g_, m.parallel), e.index_select(0, idx)},
      1);
  return run(classifier_, summary);
}

torch::Tensor PlacetoPaperNetImpl::forward_batch(const torch::Tensor& features, const PlacetoGraphTensors& g,
                                                 const DagEdgeTensors& /*replicated*/,
                                                 const std::vector<torch::Tensor>& idx) {
  const int64_t n = g.num_ops;
  AWARE_CHECK(!idx.empty() && features.size(0) == static_cast<int64_t>(idx.size()) * n,
              "batched Placeto input does not match the graph");
  std::vector<torch::Tensor> logits;
  for (size_t s = 0; s < idx.size(); ++s)
    logits.push_back(forward(features.narrow(0, static_cast<int64_t>(s) * n, n), g, idx[s]));
  return torch::cat(logits);
}

}  // namespace aware::rl
