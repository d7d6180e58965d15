// Placeto's policy network as its public code builds it (net=paper; networks.h
// gives the architecture with its sources). Written from the facts of the code,
// not carried over from it. LibTorch translation unit.
#include <string>
#include <vector>

#include "agents/rl/networks.h"
#include "core/errors.h"

namespace aware::rl {

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
    const torch::Tensor summed = torch::zeros_like(m).index_add_(0, dst, m.index_select(0, src));
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
