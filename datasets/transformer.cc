// Transformer "base" (Vaswani et al. 2017): 6 encoder and 6 decoder layers,
// d_model 512, 8 heads, feed-forward 2048, post-layer-norm residual blocks, a
// shared 37,000-token BPE vocabulary, Adam. The paper batches ~25k tokens over 8
// GPUs; one step here is 64 sentences x 64 tokens (4,096 tokens a side, about
// one GPU's share). Heads are the batch dimension of the attention BatchMatMuls,
// as frameworks run them; Q, K, V and output projections are separate MatMuls.
#include "core/errors.h"
#include "datasets/layers.h"
#include "datasets/models.h"

namespace aware::datasets_detail {
namespace {

struct Dims {
  double batch, len, model, heads, ffn;
  double tokens() const { return batch * len; }
};

Tensor dense(GraphBuilder& b, const std::string& name, const Tensor& x, double units) {
  return bias_add(b, name + "/bias", dense_matmul(b, name, x, units));
}

// Multi-head attention of `query` tokens over `source` tokens; returns {tokens, model}.
Tensor attention(GraphBuilder& b, const std::string& name, const Dims& d, const Tensor& query,
                 const Tensor& source) {
  const double head_dim = d.model / d.heads, bh = d.batch * d.heads;
  const Tensor q = dense(b, name + "/query", query, d.model);
  const Tensor k = dense(b, name + "/key", source, d.model);
  const Tensor v = dense(b, name + "/value", source, d.model);
  const Tensor scores = batch_matmul(b, name + "/scores", q, k, bh, d.len, d.len, head_dim);
  const Tensor weights = softmax(b, name + "/softmax", view(scores, {bh * d.len, d.len}));
  const Tensor context = batch_matmul(b, name + "/context", weights, v, bh, d.len, head_dim, d.len);
  return dense(b, name + "/output", view(context, {d.tokens(), d.model}), d.model);
}

Tensor residual_norm(GraphBuilder& b, const std::string& name, const Tensor& x,
                     const Tensor& sublayer) {
  return layer_norm(b, name + "/layer_norm", add(b, name + "/residual", {x, sublayer}));
}

Tensor feed_forward(GraphBuilder& b, const std::string& name, const Dims& d, const Tensor& x) {
  const Tensor inner = relu(b, name + "/relu", dense(b, name + "/inner", x, d.ffn));
  return dense(b, name + "/outer", inner, d.model);
}

}  // namespace

OpGraph build_transformer(const ModelOptions& options) {
  Dims d;
  d.batch = option_or(options.batch, 64);
  d.len = option_or(options.seq_len, 64);
  d.model = option_or(options.hidden, 512);
  d.heads = 8;
  d.ffn = 4 * d.model;
  const int layers = option_or(options.layers, 6);
  const double vocab = option_or(options.vocab, 37000);
  if (static_cast<int>(d.model) % static_cast<int>(d.heads) != 0) {
    throw ConfigError("transformer: hidden size must be a multiple of 8 heads");
  }
  GraphBuilder b("transformer", Optimizer::kAdam);
  b.set_batch(d.batch);

  b.set_block("input");
  const Tensor src_ids = b.input("source_ids", {d.tokens()});
  const Tensor tgt_ids = b.input("target_ids", {d.tokens()});
  const Tensor labels = b.input("target_labels", {d.tokens()});
  const Tensor positions = b.input("position_encoding", {d.tokens(), d.model});

  b.set_block("embedding");
  b.set_prefix("embedding");
  const Tensor table = b.variable("shared_table", {vocab, d.model});
  Tensor src = add(b, "source_positions", {gather(b, "source_lookup", table, src_ids), positions});
  Tensor tgt = add(b, "target_positions", {gather(b, "target_lookup", table, tgt_ids), positions});

  for (int l = 0; l < layers; ++l) {
    b.set_block("encoder", l);
    b.set_prefix("encoder/layer" + std::to_string(l));
    src = residual_norm(b, "self_attention", src, attention(b, "self_attention", d, src, src));
    src = residual_norm(b, "ffn", src, feed_forward(b, "ffn", d, src));
  }
  for (int l = 0; l < layers; ++l) {
    b.set_block("decoder", l);
    b.set_prefix("decoder/layer" + std::to_string(l));
    tgt = residual_norm(b, "self_attention", tgt, attention(b, "self_attention", d, tgt, tgt));
    tgt = residual_norm(b, "cross_attention", tgt, attention(b, "cross_attention", d, tgt, src));
    tgt = residual_norm(b, "ffn", tgt, feed_forward(b, "ffn", d, tgt));
  }

  b.set_block("softmax");
  b.set_prefix("softmax");
  const Tensor logits = dense(b, "logits", tgt, vocab);
  return b.finish(total_loss(b, "total_loss", {softmax_cross_entropy(b, "xent", logits, labels)}));
}

}  // namespace aware::datasets_detail
