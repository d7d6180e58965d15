// The "ptb" family: ENAS recurrent cells (Pham et al. 2018) as language models
// over the Penn Treebank vocabulary (10,000 words), unrolled over 35 steps.
//
// A cell has 12 nodes. Node 0 reads the step's input x_t and the previous hidden
// state h_{t-1}; node i > 0 reads one earlier node j. Each node is a highway
// unit, c = sigmoid(in W_c), h = c * f(in W_h) + (1 - c) * in, with f drawn from
// {tanh, ReLU, identity, sigmoid}; we emit it as one fused op per node per step
// (its matmul and the gating), so a 35-step graph stays around 1,000-3,000 ops.
// The cell's output (and the next h_{t-1}) averages the loose ends. The softmax
// is applied once to all steps' outputs stacked, as ENAS does.
#include "datasets/layers.h"
#include "datasets/models.h"
#include "datasets/seeded.h"

namespace aware::datasets_detail {
namespace {

constexpr std::uint64_t kPtbStream = 0x505442;
constexpr int kNodes = 12;
constexpr int kSteps = 35;
constexpr double kVocab = 10000;

struct NodeChoice {
  int input = 0;  // earlier node (unused by node 0)
  std::string activation;
};

Tensor highway_node(GraphBuilder& b, const std::string& name, const std::string& activation,
                    const std::vector<Tensor>& inputs, const Tensor& weights) {
  const double batch = inputs[0].dim(0), hidden = weights.dim(1) / 2, in = weights.dim(0);
  const double matmul_flops = 2 * batch * in * 2 * hidden;
  ForwardSpec spec;
  spec.name = name;
  spec.type = "HighwayNode";
  spec.inputs = inputs;
  spec.inputs.push_back(weights);
  spec.output_dims = {{batch, hidden}};
  spec.flops = matmul_flops + 8 * batch * hidden;
  spec.temp_bytes = batch * 2 * hidden * kFloatBytes;
  spec.shape = {{"batch", batch}, {"input", in},     {"hidden", hidden},
                {"M", batch},     {"N", 2 * hidden}, {"K", in}};
  spec.shape["activation"] = activation == "Tanh"       ? 0
                             : activation == "Relu"     ? 1
                             : activation == "Identity" ? 2
                                                        : 3;
  GradSpec grad;
  grad.type = "HighwayNodeGrad";
  grad.suffix = "grad";
  grad.flops = 2 * matmul_flops + 12 * batch * hidden;  // input and weight gradients
  grad.temp_bytes = spec.temp_bytes;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    grad.grad_of.push_back(static_cast<int>(i));
    grad.reads.push_back(static_cast<int>(i));
  }
  grad.reads_output = true;
  spec.grads = {grad};
  return b.add1(spec);
}

}  // namespace

OpGraph build_ptb_member(std::uint64_t seed) {
  SeededChoice choice(seed, kPtbStream);
  const std::vector<std::string> activations = {"Tanh", "Relu", "Identity", "Sigmoid"};
  std::vector<NodeChoice> nodes(kNodes);
  for (int i = 0; i < kNodes; ++i) {
    nodes[i].input = i == 0 ? 0 : choice.below(i);
    nodes[i].activation = choice.pick(activations);
  }
  const double hidden = choice.pick(std::vector<double>{200, 256, 320});
  const double batch = 64;
  std::vector<bool> loose(kNodes, true);
  for (int i = 1; i < kNodes; ++i) loose[nodes[i].input] = false;

  GraphBuilder b("ptb-" + std::to_string(seed), Optimizer::kSgd);
  b.set_batch(batch);

  b.set_block("input");
  const Tensor ids = b.input("token_ids", {kSteps * batch});
  const Tensor next_ids = b.input("next_token_ids", {kSteps * batch});
  const Tensor zero_state = b.input("zero_state", {batch, hidden});

  b.set_block("embedding");
  b.set_prefix("embedding");
  const Tensor table = b.variable("table", {kVocab, hidden});
  const std::vector<Tensor> inputs = unstack(b, "unstack", gather(b, "lookup", table, ids), kSteps);

  b.set_block("encoder", 0);
  b.set_prefix("cell");
  std::vector<Tensor> weights;
  for (int i = 0; i < kNodes; ++i) {
    const double in = i == 0 ? 2 * hidden : hidden;
    weights.push_back(b.variable("node" + std::to_string(i) + "/kernel", {in, 2 * hidden}));
  }
  Tensor h = zero_state;
  std::vector<Tensor> outputs;
  for (int t = 0; t < kSteps; ++t) {
    const std::string ts = "t" + std::to_string(t) + "/";
    std::vector<Tensor> node_out(kNodes);
    std::vector<Tensor> ends;
    for (int i = 0; i < kNodes; ++i) {
      const std::vector<Tensor> in = i == 0 ? std::vector<Tensor>{inputs[t], h}
                                            : std::vector<Tensor>{node_out[nodes[i].input]};
      node_out[i] =
          highway_node(b, ts + "node" + std::to_string(i), nodes[i].activation, in, weights[i]);
      if (loose[i]) ends.push_back(node_out[i]);
    }
    h = add(b, ts + "average", ends);
    outputs.push_back(h);
  }

  b.set_block("softmax");
  b.set_prefix("softmax");
  const Tensor stacked = view(stack(b, "stack", outputs), {kSteps * batch, hidden});
  const Tensor logits = bias_add(b, "bias", dense_matmul(b, "logits", stacked, kVocab));
  return b.finish(
      total_loss(b, "total_loss", {softmax_cross_entropy(b, "xent", logits, next_ids)}));
}

}  // namespace aware::datasets_detail
