// INTERNAL (includes LibTorch): the networks of the Placeto and Hierarchical
// agents, exposed for the agents' .cc files and the tests. Shapes are written
// [rows x columns]; n = ops, D = devices, C = ops decided in one step.
#pragma once

#include <utility>

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "agents/rl/env.h"
#include "agents/rl/gnn.h"
#include "core/op_graph.h"

namespace aware::rl {

// ---------------------------------------------------------------- Placeto

// Number of per-node feature columns before the device one-hot:
// [cost, output size, visited, current, start time relative to current, memory].
constexpr int kPlacetoBaseFeatures = 6;

// The graph structure the Placeto network reads, as tensors: the DAG's edges
// (gnn.h) plus the transitive closure.
struct PlacetoGraphTensors : DagEdgeTensors {
  int num_ops = 0;
  torch::Tensor descendants;  // bool [n x n]: row i = ops reachable from i
  torch::Tensor ancestors;    // bool [n x n]: row i = ops that reach i (transpose)
  torch::Tensor has_parent;   // float [n x 1]: 1 where op i has a parent, else 0
  torch::Tensor has_child;    // float [n x 1]: 1 where op i has a child, else 0
};

// Builds the tensors of `graph` (deduplicated parent -> child pairs, transitive
// closure from core's Reachability).
PlacetoGraphTensors placeto_graph_tensors(const OpGraph& graph);

// Pooling masks for ops `idx`, [C x n] each: row-normalised (each row sums to 1,
// or is all 0 when the set is empty), or 0/1 with normalise=false (Placeto's
// code sums, normalize_aggs off: progressive_placer_test.py:211).
struct PoolMasks {
  torch::Tensor ancestors;
  torch::Tensor descendants;
  torch::Tensor parallel;
};
PoolMasks placeto_pool_masks(const PlacetoGraphTensors& g, const torch::Tensor& idx, bool normalise = true);

// The start-time feature column from each op's start minus the current op's
// (microseconds). paper=false (ours): divided by the largest absolute value, so
// within [-1, 1] (all 0 when every value is 0). paper=true, as Placeto's code
// scales it (pgraph.py:65-80, :152; pp_item.py converts only the run time to
// seconds): divided by the column's signed maximum unless that is 0, so earlier
// ops can fall below -1 and, when the current op starts last, the column stays in
// microseconds.
std::vector<float> placeto_start_column(const std::vector<double>& rel, bool paper);

// What the Placeto agent asks of its policy network, whichever it is (net=ours:
// PlacetoNetImpl; net=paper: PlacetoPaperNetImpl).
class PlacetoPolicyImpl : public torch::nn::Module {
 public:
  // features [n x feature_dim]; idx int64 [C] -> logits [C x D].
  virtual torch::Tensor forward(const torch::Tensor& features, const PlacetoGraphTensors& g,
                                const torch::Tensor& idx) = 0;
  // S states of one graph at once: features [S n x feature_dim] (state s in rows
  // s n ... s n + n - 1), `replicated` = replicate_dag(g, S), idx[s] the ops decided
  // in state s -> logits [sum of C_s x D], state by state. Same values as S calls
  // of forward().
  virtual torch::Tensor forward_batch(const torch::Tensor& features, const PlacetoGraphTensors& g,
                                      const DagEdgeTensors& replicated,
                                      const std::vector<torch::Tensor>& idx) = 0;
};

// Node MLP -> k rounds of message passing from parents and from children
// (weights shared across rounds, the two directions separate, concatenated) ->
// mean over ancestors / descendants / parallel ops of the decided nodes ->
// [ancestors, descendants, parallel, self] -> MLP -> logits over devices.
// Our deviation: the same four summaries of the RAW features (mean over
// ancestors / descendants / parallel ops, and the op's own row) are concatenated
// to the head's input too, a skip path past the message passing (whose default
// initialisation attenuates the device one-hots ~100x, so REINFORCE could not
// find the relational rule in a small budget; see agents/rl/README.md).
class PlacetoNetImpl : public PlacetoPolicyImpl {
 public:
  // skip=false: without the raw-feature skip path (features=paper).
  PlacetoNetImpl(int feature_dim, int hidden, int rounds, int num_devices, bool skip = true);
  torch::Tensor forward(const torch::Tensor& features, const PlacetoGraphTensors& g,
                        const torch::Tensor& idx) override;
  torch::Tensor forward_batch(const torch::Tensor& features, const PlacetoGraphTensors& g,
                              const DagEdgeTensors& replicated,
                              const std::vector<torch::Tensor>& idx) override;
  // Node embeddings after message passing, [n x 2 hidden].
  torch::Tensor embed(const torch::Tensor& features, const PlacetoGraphTensors& g);
  torch::Tensor embed(const torch::Tensor& features, const DagEdgeTensors& edges);
  int rounds() const { return rounds_; }

 private:
  int rounds_;
  bool skip_ = true;
  torch::nn::Linear node1_{nullptr}, node2_{nullptr};
  torch::nn::Linear up_{nullptr}, down_{nullptr};
  torch::nn::Linear head1_{nullptr}, head2_{nullptr};
};
TORCH_MODULE(PlacetoNet);

// Placeto's network as its public code builds it (net=paper; aravic/
// generalizable-device-placement, files model/nn_primitives.py `NP` and
// model/mp_progressive_nn.py `MP`, lines in docs/agents.md). Every block is an
// FNN: linear layers with a ReLU between them and none after the last (NP:18-40),
// Glorot-uniform weights and zero biases (NP:6-16, NP:26-27). With d = the
// feature width (Placeto's embedding width is its input's, MP:32, MP:38-43):
//   self  = FNN(d, [d, d], d)(features)                         node transform, NP:150-154
//   x <- self; k times: x = relu(g(A · relu(f(x)))) ⊙ sink + self  NP:203-218
//     from parents (A[i][j] = 1 for an edge j -> i) and, with their own f and g,
//     from children; f, g = FNN(d, [d], d) each, shared by the k rounds (NP:86-87,
//     NP:144-149); sink zeroes the rows with no parent (children): NP:204, NP:216
//   e = [from parents, from children]                           [n x 2d], NP:238
//   for ancestors, descendants, parallel ops of the decided op:
//     relu(g(M · relu(f(e)))), M the 0/1 mask (a sum: normalize_aggs is off by
//     default, PPT:211; mean_pool=true is that flag on: M's rows sum to 1, NP:103-110),
//     f, g = FNN(2d, [2d], 2d), one pair per set                    MP:56-67
//   logits = FNN(8d, [16d, 8d], D)([ancestors, descendants, parallel, e of the op])
//                                                                MP:69-73, MP:91-96
// The pooling over ancestors / descendants / parallel ops is Placeto's `--tri-agg`
// (the paper's design; the code's flag defaults off, when the classifier reads the
// whole graph's embeddings flattened: MP:83-85, no fit for 1,159 ops).
class PlacetoPaperNetImpl : public PlacetoPolicyImpl {
 public:
  PlacetoPaperNetImpl(int feature_dim, int rounds, int num_devices, bool mean_pool = false);
  torch::Tensor forward(const torch::Tensor& features, const PlacetoGraphTensors& g,
                        const torch::Tensor& idx) override;
  // One forward() per state (this network has no stacked form).
  torch::Tensor forward_batch(const torch::Tensor& features, const PlacetoGraphTensors& g,
                              const DagEdgeTensors& replicated,
                              const std::vector<torch::Tensor>& idx) override;
  // Node embeddings after message passing, [n x 2d].
  torch::Tensor embed(const torch::Tensor& features, const PlacetoGraphTensors& g);
  int rounds() const { return rounds_; }

 private:
  // One FNN: its layers, in order.
  using Fnn = std::vector<torch::nn::Linear>;
  Fnn fnn(const std::string& name, std::vector<int> sizes);
  static torch::Tensor run(const Fnn& layers, torch::Tensor x);
  // One direction's k rounds (NP:203-218): `src` -> `dst` edges carry the messages.
  torch::Tensor pass(const torch::Tensor& self, const torch::Tensor& src, const torch::Tensor& dst,
                     const torch::Tensor& sink, const Fnn& f, const Fnn& g) const;
  int rounds_;
  bool mean_pool_ = false;
  Fnn node_, parents_f_, parents_g_, children_f_, children_g_;
  Fnn anc_f_, anc_g_, desc_f_, desc_g_, par_f_, par_g_, classifier_;
};

// ---------------------------------------------------------------- Hierarchical

// Per-op features of the grouper: op-type hash one-hot, output-size features
// (up to kShapeSlots outputs), cost features, adjacency (kAdjacency neighbour ranks).
constexpr int kTypeBuckets = 32;
constexpr int kShapeSlots = 5;
constexpr int kAdjacency = 20;
constexpr int kGrouperFeatures = kTypeBuckets + kShapeSlots + 3 + kAdjacency;
// Group embedding: [adjacency row (G), adjacency column (G), type counts, summed sizes, cost,
// work before the group] (the last column is our addition: the fraction of the graph's
// total time in ops that precede the group's first op in the grouper's locality order).
inline int group_embedding_dim(int groups) { return 2 * groups + kTypeBuckets + kShapeSlots + 2; }

// Feed-forward grouper: op features [n x kGrouperFeatures] -> group logits [n x G].
// linear=false (ours): Linear, ReLU, Linear. linear=true (the controller's,
// hierarchical_controller.py `HC`:560-561, make_grouping_predictions()): two
// matrices, no bias, no nonlinearity between them, Glorot-uniform.
class GrouperImpl : public torch::nn::Module {
 public:
  GrouperImpl(int feature_dim, int hidden, int groups, bool linear = false);
  torch::Tensor forward(const torch::Tensor& op_features);

 private:
  bool linear_ = false;
  torch::nn::Linear l1_{nullptr}, l2_{nullptr};
};
TORCH_MODULE(Grouper);

// Gaussian noise for `logits` (same shape): std = factor × their root mean
// square, drawn from `rng` (Box-Muller). per_row: each row's own root mean square
// (the placer's samples: the controller draws one placement at a time, so its
// scale is one row's); otherwise one over all of them (the grouper's one grouping).
// The scale is not detached: the gradient passes through it, as in the controller.
torch::Tensor logit_noise(const torch::Tensor& logits, double factor, SampleRng& rng, bool per_row);

struct DecodeResult {
  torch::Tensor logits;                      // [B x G x D], squashed
  std::vector<std::vector<int64_t>> actions;  // [B][G]: device per group
};

// What the Hierarchical agent asks of its placer, whichever it is (net=ours:
// GroupPlacerImpl; net=paper: GroupPlacerPaperImpl).
class GroupPlacerPolicyImpl : public torch::nn::Module {
 public:
  // embeddings [B x G x E]. Samples with `rng` (argmax when greedy) unless `forced`
  // gives the actions ([B][G]) to score.
  // noise > 0: Gaussian noise of std noise × the squashed logits' root mean
  // square, added after the squash when sampling (drawn from `rng`).
  // explore > 0: sampled from (1 − explore) softmax + explore uniform.
  virtual DecodeResult decode(const torch::Tensor& embeddings, SampleRng* rng, bool greedy,
                              const std::vector<std::vector<int64_t>>* forced = nullptr, double noise = 0,
                              double explore = 0) = 0;
};

// Sequence-to-sequence placer: bidirectional LSTM over the group embeddings, an
// LSTM-cell decoder with additive attention emitting a device per group.
class GroupPlacerImpl : public GroupPlacerPolicyImpl {
 public:
  GroupPlacerImpl(int embedding_dim, int hidden, int num_devices, double tanh_constant,
                  double temperature);
  // embeddings [B x G x E]. Samples with `rng` (argmax when greedy) unless `forced`
  // gives the actions ([B][G]) to score.
  // noise > 0: Gaussian noise of std noise × the squashed logits' root mean
  // square, added after the squash when sampling (drawn from `rng`).
  // explore > 0: sampled from (1 − explore) softmax + explore uniform.
  DecodeResult decode(const torch::Tensor& embeddings, SampleRng* rng, bool greedy,
                      const std::vector<std::vector<int64_t>>* forced = nullptr, double noise = 0,
                      double explore = 0) override;

 private:
  int hidden_, devices_;
  double tanh_constant_, temperature_;
  torch::nn::LSTM encoder_{nullptr};
  torch::nn::Embedding device_embedding_{nullptr};  // D + 1 rows: the last one is "start"
  torch::nn::LSTMCell decoder_{nullptr};
  torch::nn::Linear attn_enc_{nullptr}, attn_dec_{nullptr}, attn_v_{nullptr};
  torch::nn::Linear out_{nullptr};
};
TORCH_MODULE(GroupPlacer);

// The controller's placer as TensorFlow's hierarchical_controller.py builds it
// (net=paper; `HC`, commit c425908, by function; docs/agents.md). H = `hidden`
// (the code's hidden_size, 512 in hierarchical_controller_hparams()):
//   encoder: a bidirectional LSTM of H/2 units each way over the group embeddings
//     (encode(), bi_lstm); decoder: an LSTM of H units started from the encoder's
//     final states, both directions concatenated (encode()'s last_c, last_h);
//   every LSTM is the code's cell lstm(): gates [i, f, o, g] = [x, h] · W, no bias
//     but one trainable scalar forget bias, 1.0 at the start (forget_bias_init);
//   decoder input: the previous group's device embedding ([D x H]), a "go"
//     embedding first; no input feeding (decode());
//   attention: memory M = encoder states · W1; score = v · tanh(h W2 + M); context =
//     the softmax-weighted sum of M (encode(), decode());
//   logits = [h, context] · W_out ([2H x D], no bias), then C·tanh(x/T) and the noise
//     (HC:904-918); every matrix Glorot-uniform (the variable scope's initializer in
//     HierarchicalController.__init__).
class GroupPlacerPaperImpl : public GroupPlacerPolicyImpl {
 public:
  GroupPlacerPaperImpl(int embedding_dim, int hidden, int num_devices, double tanh_constant, double temperature);
  DecodeResult decode(const torch::Tensor& embeddings, SampleRng* rng, bool greedy,
                      const std::vector<std::vector<int64_t>>* forced = nullptr, double noise = 0,
                      double explore = 0) override;
  // One step of the code's cell lstm(), W [in + H x 4H]: returns {c, h}.
  static std::pair<torch::Tensor, torch::Tensor> cell(const torch::Tensor& x, const torch::Tensor& c,
                                                      const torch::Tensor& h, const torch::Tensor& w,
                                                      const torch::Tensor& forget_bias);

 private:
  torch::Tensor glorot(const std::string& name, int64_t rows, int64_t cols);
  int hidden_, devices_;
  double tanh_constant_, temperature_;
  torch::Tensor enc_fw_, enc_bw_, enc_forget_, dec_w_, dec_forget_;
  torch::Tensor device_embedding_, go_, attn_w1_, attn_w2_, attn_v_, out_;
};

}  // namespace aware::rl
