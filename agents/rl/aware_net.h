// INTERNAL (includes LibTorch): the Aware agent's network (aware_agent.cc) and
// the anchor-set tensors its P-GNN layer reads. Include from aware_agent.cc and
// tests/rl only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "agents/fusion/anchor_sets.h"
#include "agents/rl/gnn.h"
#include "core/op_graph.h"

namespace aware::rl::aware_net {

// The DAG as tensors (shared with Placeto's network).
using AwareGraphTensors = DagEdgeTensors;

struct AnchorTensors {
  torch::Tensor score;   // float [n x K] (0 in padded columns)
  torch::Tensor anchor;  // int64 [n x K] (node id; padded columns point at the node itself)
  torch::Tensor mask;    // float [K]: 1 for a drawn set, 0 for padding
};

inline AwareGraphTensors graph_tensors(const OpGraph& graph) { return dag_edge_tensors(graph); }

// K anchor sets of a fixed count whatever n: P-GNN's Bourgain classes (size
// floor(n / 2^(i+1)), i < floor(log2 n)) taken round-robin, so every class is
// represented and the position vector has the same width on every graph. A graph
// too small to fill K sets gets zero-masked padding.
inline AnchorSets fixed_count_anchor_sets(int n, int k, std::uint64_t seed) {
  AnchorSets out;
  out.num_nodes = n;
  const int m = n >= 2 ? static_cast<int>(std::floor(std::log2(n))) : 0;
  if (m == 0 || k == 0) return out;
  const int per_class = (k + m - 1) / m;
  const AnchorSets drawn = sample_anchor_sets(n, static_cast<double>(per_class) / m + 1e-9, seed);
  // drawn: ordered by class, then draw; per_class sets per class.
  for (int draw = 0; draw < per_class && out.num_sets() < k; ++draw)
    for (int cls = 0; cls < m && out.num_sets() < k; ++cls) {
      const int j = cls * per_class + draw;
      if (j >= drawn.num_sets()) continue;
      out.sets.push_back(drawn.sets[j]);
      out.size_class.push_back(drawn.size_class[j]);
    }
  return out;
}

inline AnchorTensors anchor_tensors(const OpGraph& graph, const AnchorSets& sets, int k, int max_hops) {
  const int n = graph.num_ops();
  AnchorTensors t;
  t.score = torch::zeros({n, k}, torch::kFloat);
  t.anchor = torch::arange(n, torch::kInt64).unsqueeze(1).repeat({1, k}).contiguous();
  t.mask = torch::zeros({k}, torch::kFloat);
  const int drawn = std::min(k, sets.num_sets());
  if (drawn == 0) return t;
  AnchorDistanceOptions opt;
  opt.direction = AnchorDirection::kUndirected;
  opt.max_hops = max_hops;
  const AnchorDistances d = anchor_distances(graph, sets, opt);
  auto score = t.score.accessor<float, 2>();
  auto anchor = t.anchor.accessor<int64_t, 2>();
  for (int v = 0; v < n; ++v)
    for (int j = 0; j < drawn; ++j) {
      score[v][j] = d.score_at(v, j);
      anchor[v][j] = d.anchor_at(v, j);
    }
  t.mask.slice(0, 0, drawn).fill_(1.0);
  return t;
}

// Node MLP -> `rounds` rounds of mean message passing from parents and from
// children (Placeto's scheme) -> `layers` P-GNN layers over K anchor sets ->
// [structure, P-GNN, position vector (K), graph mean] -> MLP -> device logits.
// Every weight is shared across nodes: the network is size-independent.
//
// norm=true (ours): the structure embedding is normalised over each graph's nodes,
// per feature (GraphNorm, Cai et al., ICML 2021, with its mean shift fixed at 1),
// before the P-GNN layers and the head read it; the graph mean (before the
// normalisation) still carries what all nodes share. Without it, PyTorch's default
// initialisation shrinks the nodes' differences about threefold a layer: on the
// fused Table 1 graphs the logits' spread across nodes is 0.01 of their size at
// the start, the policy acts as one distribution shared by every node, and
// training kills the rest (docs/results/agents-fidelity.md).
class AwareNetImpl : public torch::nn::Module {
 public:
  AwareNetImpl(int feature_dim, int hidden, int rounds, int layers, int anchors, bool position,
               int num_devices, bool norm = false)
      : rounds_(rounds), anchors_(anchors), position_(position), norm_(norm) {
    if (norm_) {
      norm_scale_ = register_parameter("graph_norm_scale", torch::ones({hidden}));
      norm_shift_ = register_parameter("graph_norm_shift", torch::zeros({hidden}));
    }
    node1_ = register_module("node1", torch::nn::Linear(feature_dim, hidden));
    node2_ = register_module("node2", torch::nn::Linear(hidden, hidden));
    up_ = register_module("from_parents", torch::nn::Linear(2 * hidden, hidden));
    down_ = register_module("from_children", torch::nn::Linear(2 * hidden, hidden));
    merge_ = register_module("merge", torch::nn::Linear(2 * hidden, hidden));
    if (position_) {
      for (int l = 0; l < layers; ++l) {
        msg1_.push_back(register_module("pgnn" + std::to_string(l) + "_msg1",
                                        torch::nn::Linear(2 * hidden, hidden)));
        msg2_.push_back(register_module("pgnn" + std::to_string(l) + "_msg2",
                                        torch::nn::Linear(hidden, hidden)));
      }
      pos_ = register_module("pgnn_position", torch::nn::Linear(hidden, 1));
    }
    const int head_in = 2 * hidden + (position_ ? hidden + anchors : 0);
    head1_ = register_module("head1", torch::nn::Linear(head_in, hidden));
    head2_ = register_module("head2", torch::nn::Linear(hidden, num_devices));
  }

  // features [copies*n x F] -> logits [copies*n x D]: `copies` stacked graphs of
  // n nodes each (g their disjoint union, a's anchor ids global). `a` is ignored
  // when position is off.
  torch::Tensor forward(const torch::Tensor& features, const AwareGraphTensors& g,
                        const AnchorTensors& a, int64_t copies = 1) {
    const torch::Tensor h0 = torch::relu(node2_(torch::relu(node1_(features))));
    const auto [up, down] = dag_message_passing(h0, g, rounds_, up_, down_);
    const torch::Tensor h_raw = torch::relu(merge_(torch::cat({up, down}, 1)));
    const int64_t rows = h_raw.size(0), hidden = h_raw.size(1);
    const int64_t n = rows / copies;
    const torch::Tensor h = norm_ ? graph_norm(h_raw, copies) : h_raw;
    std::vector<torch::Tensor> parts = {h};
    if (position_) {
      const torch::Tensor mask = a.mask.view({1, anchors_, 1});
      const double drawn = a.mask.sum().item<double>();
      const torch::Tensor flat_anchor = a.anchor.reshape({-1});
      const torch::Tensor s = a.score.unsqueeze(2);
      torch::Tensor x = h, messages;
      for (size_t l = 0; l < msg1_.size(); ++l) {
        // message(v, S) = MLP(h_v, s(v, u*) h_u*), u* the nearest anchor of S. The
        // first layer is linear in [h_v, s h_u*], so it is applied to the nodes
        // before they are gathered: W [h_v, s h_u] + b = (W_v h_v + b) + s (W_u h)_u,
        // the same function as on the concatenation, at a third of the work.
        const torch::Tensor& w = msg1_[l]->weight;
        const torch::Tensor self = torch::addmm(msg1_[l]->bias, x, w.narrow(1, 0, hidden).t());
        const torch::Tensor other = x.mm(w.narrow(1, hidden, hidden).t());
        const torch::Tensor at_anchor = gather_rows(other, flat_anchor).view({rows, anchors_, hidden});
        messages = torch::relu(msg2_[l](torch::relu(torch::addcmul(self.unsqueeze(1), s, at_anchor))));
        messages = messages * mask;
        // The mean over drawn sets feeds the next layer (h itself when none was drawn).
        x = drawn > 0 ? messages.sum(1) / drawn : x;
      }
      // Position vector: one linear map per set, L2-normalised (P-GNN's last layer).
      torch::Tensor position = pos_(messages).squeeze(2) * a.mask.unsqueeze(0);
      position = position / position.norm(2, 1, true).clamp_min(1e-6);
      parts.push_back(x);
      parts.push_back(position);
    }
    // Each copy's own graph mean.
    parts.push_back(h_raw.view({copies, n, hidden}).mean(1, true).expand({copies, n, hidden}).reshape({rows, hidden}));
    return head2_(torch::relu(head1_(torch::cat(parts, 1))));
  }

 private:
  // Per copy and feature: (x - mean over the copy's nodes) / sqrt(var + eps), then
  // the learned scale and shift. A feature equal on every node gives 0.
  torch::Tensor graph_norm(const torch::Tensor& x, int64_t copies) const {
    const torch::Tensor v = x.view({copies, x.size(0) / copies, x.size(1)});
    const torch::Tensor centred = v - v.mean(1, true);
    const torch::Tensor var = centred.pow(2).mean(1, true);
    return (centred * torch::rsqrt(var + 1e-6) * norm_scale_ + norm_shift_).view(x.sizes());
  }

  int rounds_, anchors_;
  bool position_, norm_;
  torch::Tensor norm_scale_, norm_shift_;
  torch::nn::Linear node1_{nullptr}, node2_{nullptr}, up_{nullptr}, down_{nullptr}, merge_{nullptr};
  std::vector<torch::nn::Linear> msg1_, msg2_;
  torch::nn::Linear pos_{nullptr}, head1_{nullptr}, head2_{nullptr};
};
TORCH_MODULE(AwareNet);

}  // namespace aware::rl::aware_net
