// RNNLM: a 2-layer LSTM language model over the Penn Treebank vocabulary (the
// Hierarchical paper's RNNLM). Sizes follow Zaremba et al. 2014's "large" model
// (1500 hidden units, 35 unrolled steps, 10,000 words); the batch is raised from
// their 20 to 64 as a GPU-sized step. One LSTMBlockCell per layer per step, the
// softmax projection per step, plain SGD as in Zaremba et al.
#include "core/errors.h"
#include "datasets/layers.h"
#include "datasets/models.h"

namespace aware::datasets_detail {

OpGraph build_rnnlm(const ModelOptions& options) {
  const double batch = option_or(options.batch, 64);
  const int steps = option_or(options.seq_len, 35);
  const double hidden = option_or(options.hidden, 1500);
  const int layers = option_or(options.layers, 2);
  const double vocab = option_or(options.vocab, 10000);
  GraphBuilder b("rnnlm", Optimizer::kSgd);
  b.set_batch(batch);

  b.set_block("input");
  const Tensor ids = b.input("token_ids", {steps * batch});
  const Tensor next_ids = b.input("next_token_ids", {steps * batch, 1});
  const Tensor zero_state = b.input("zero_state", {batch, 2 * hidden});
  const std::vector<Tensor> labels = unstack(b, "labels_unstack", next_ids, steps);

  b.set_block("embedding");
  b.set_prefix("embedding");
  const Tensor table = b.variable("table", {vocab, hidden});
  std::vector<Tensor> inputs = embed_steps(b, "", table, ids, steps);

  for (int l = 0; l < layers; ++l) {
    b.set_block("encoder", l);
    b.set_prefix("lstm/layer" + std::to_string(l));
    const Tensor weights = b.variable("kernel", {2 * hidden, 4 * hidden});
    const Tensor bias = b.variable("bias", {4 * hidden});
    Tensor state = zero_state;
    for (int t = 0; t < steps; ++t) {
      const LstmStep s = lstm_cell(b, "t" + std::to_string(t), inputs[t], state, weights, bias);
      inputs[t] = s.h;
      state = s.state;
    }
  }

  b.set_block("softmax");
  b.set_prefix("softmax");
  const Tensor proj = b.variable("kernel", {hidden, vocab});
  const Tensor proj_bias = b.variable("bias", {vocab});
  std::vector<Tensor> losses;
  for (int t = 0; t < steps; ++t)
    losses.push_back(
        projected_xent(b, "/t" + std::to_string(t), inputs[t], proj, proj_bias, labels[t]));
  return b.finish(total_loss(b, "total_loss", losses));
}

}  // namespace aware::datasets_detail
