// Decoder-only language models: GPT-3 and Megatron-LM's GPT (pre-layer-norm
// blocks with biases, learned positions, GELU), Llama-style models (RMSNorm, no
// biases, rotary positions, grouped-query attention, SwiGLU, untied output) and a
// Mixtral-style mixture of experts (a Llama block whose MLP is E SwiGLU experts
// behind a top-k router). The named sizes and their sources are in gpt_sizes.cc;
// the parameter count each gives is checked against the published one in
// tests/datasets/gpt_test.cc.
//
// At op granularity one layer is a few dozen ops (forward, backward, updates).
// Attention is one BatchMatMul for the scores and one for the context over
// batch x heads, as frameworks run it; a mixture-of-experts layer routes
// tokens x top_k / experts tokens to each expert on average (the balanced case).
// Every tensor is fp32 as in the other zoo models (GraphBuilder): the papers train
// in fp16/bf16, so bytes are twice theirs; FLOPs and parameters are not affected.
#include "core/errors.h"
#include "datasets/gpt.h"
#include "datasets/layers.h"

namespace aware::datasets_detail {
namespace {

double last(const Tensor& t) { return t.dims.back(); }
double rows(const Tensor& t) { return t.elements() / last(t); }

Tensor linear(GraphBuilder& b, const std::string& name, const Tensor& x, double units, bool bias) {
  const Tensor y = dense_matmul(b, name, x, units);
  return bias ? bias_add(b, name + "/bias", y) : y;
}

// RMSNorm (Llama): one scale vector; 4 FLOPs per element forward, 8 backward.
Tensor rms_norm(GraphBuilder& b, const std::string& name, const Tensor& x) {
  const Tensor scale = b.variable(name + "/scale", {1, last(x)});
  ForwardSpec spec;
  spec.name = name;
  spec.type = "RMSNorm";
  spec.inputs = {x, scale};
  spec.output_dims = {x.dims};
  spec.flops = 4 * x.elements();
  spec.shape = {{"rows", rows(x)}, {"cols", last(x)}};
  spec.grads = {grad("RMSNormGrad", "grad", 8 * x.elements(), {0, 1}, {0, 1})};
  return b.add1(spec);
}

Tensor norm(GraphBuilder& b, const GptConfig& c, const std::string& name, const Tensor& x) {
  return c.rms_norm ? rms_norm(b, name, x) : layer_norm(b, name, x);
}

// Rotary position embedding applied to a projection: 6 FLOPs per element.
Tensor rope(GraphBuilder& b, const std::string& name, const Tensor& x) {
  ForwardSpec spec;
  spec.name = name;
  spec.type = "RotaryEmbedding";
  spec.inputs = {x};
  spec.output_dims = {x.dims};
  spec.flops = 6 * x.elements();
  spec.shape = {{"rows", rows(x)}, {"cols", last(x)}};
  spec.grads = {grad("RotaryEmbeddingGrad", "grad", 6 * x.elements(), {0})};
  return b.add1(spec);
}

Tensor attention(GraphBuilder& b, const GptConfig& c, const Tensor& x) {
  const double tokens = rows(x), head_dim = c.hidden / c.heads, kv = c.kv_heads * head_dim;
  const double seqs = c.batch, bh = seqs * c.heads;
  Tensor q = linear(b, "query", x, c.hidden, c.biases);
  Tensor k = linear(b, "key", x, kv, c.biases);
  const Tensor v = linear(b, "value", x, kv, c.biases);
  if (c.rotary) {
    q = rope(b, "query_rope", q);
    k = rope(b, "key_rope", k);
  }
  // Grouped-query attention shares each K/V head among heads / kv_heads query
  // heads: the products still run per query head.
  const Tensor scores = batch_matmul(b, "scores", q, k, bh, c.seq_len, c.seq_len, head_dim);
  const Tensor weights = softmax(b, "softmax", view(scores, {bh * c.seq_len, c.seq_len}));
  // Per head when the width divides (a batch of b x heads products of s x head_dim);
  // GPT-3's XL and 13B widths do not (2048 / 24, 5140 / 40): one product per sequence
  // of s x hidden then, the same FLOPs and output without a fractional head width.
  const bool whole_heads = c.hidden % c.heads == 0;
  const Tensor context = whole_heads ? batch_matmul(b, "context", weights, v, bh, c.seq_len, head_dim, c.seq_len)
                                     : batch_matmul(b, "context", weights, v, seqs, c.seq_len, c.hidden, c.seq_len);
  return linear(b, "output", view(context, {tokens, static_cast<double>(c.hidden)}), c.hidden, c.biases);
}

// The two-matrix MLP (GPT: GELU) or SwiGLU's three (Llama: SiLU(x W1) * (x W3), then W2).
Tensor mlp(GraphBuilder& b, const GptConfig& c, const std::string& name, const Tensor& x) {
  if (!c.swiglu) {
    const Tensor h = activation(b, "Gelu", name + "/gelu", linear(b, name + "/fc1", x, c.ffn, c.biases));
    return linear(b, name + "/fc2", h, c.hidden, c.biases);
  }
  const Tensor gate = activation(b, "Silu", name + "/silu", linear(b, name + "/gate", x, c.ffn, c.biases));
  const Tensor up = linear(b, name + "/up", x, c.ffn, c.biases);
  const Tensor h = elementwise_binary(b, "Mul", name + "/gated", gate, up, 1);
  return linear(b, name + "/down", h, c.hidden, c.biases);
}

// Mixture of experts: a router (x W_r, E logits per token), top-k dispatch of the
// tokens to the experts (a free permutation in FLOPs, but it moves the tokens),
// E SwiGLU experts on tokens x k / E rows each, and the weighted combine.
Tensor moe(GraphBuilder& b, const GptConfig& c, const Tensor& x) {
  const double tokens = rows(x), per_expert = tokens * c.top_k / c.experts;
  const Tensor logits = dense_matmul(b, "router", x, c.experts);
  ForwardSpec route;
  route.name = "top_k";
  route.type = "TopKRouting";
  route.inputs = {logits};
  route.output_dims = {{tokens, static_cast<double>(c.top_k)}};
  route.flops = 5 * logits.elements();
  route.shape = {{"tokens", tokens}, {"experts", static_cast<double>(c.experts)}, {"k", static_cast<double>(c.top_k)}};
  route.grads = {grad("TopKRoutingGrad", "grad", 5 * logits.elements(), {0}, {0})};
  const Tensor gates = b.add1(route);
  ForwardSpec dispatch;
  dispatch.name = "dispatch";
  dispatch.type = "MoEDispatch";
  dispatch.inputs = {x, gates};
  for (int e = 0; e < c.experts; ++e) dispatch.output_dims.push_back({per_expert, c.hidden});
  dispatch.flops = 0;
  dispatch.shape = {{"tokens", tokens}, {"experts", static_cast<double>(c.experts)}, {"k", static_cast<double>(c.top_k)}};
  dispatch.grads = {grad("MoEDispatchGrad", "grad", tokens * c.top_k * c.hidden, {0}, {1})};
  const std::vector<Tensor> routed = b.add(dispatch);
  std::vector<Tensor> outputs;
  for (int e = 0; e < c.experts; ++e) outputs.push_back(mlp(b, c, "expert" + std::to_string(e), routed[e]));
  ForwardSpec combine;
  combine.name = "combine";
  combine.type = "MoECombine";
  combine.inputs = outputs;
  combine.inputs.push_back(gates);
  combine.output_dims = {{tokens, c.hidden}};
  combine.flops = 2 * tokens * c.top_k * c.hidden;
  combine.shape = dispatch.shape;
  std::vector<int> all;
  for (int e = 0; e <= c.experts; ++e) all.push_back(e);
  combine.grads = {grad("MoECombineGrad", "grad", 2 * tokens * c.top_k * c.hidden, all, all)};
  return b.add1(combine);
}

}  // namespace

void check_gpt_config(const GptConfig& c) {
  const std::string who = "gpt '" + c.name + "': ";
  if (c.layers < 1 || c.hidden < 1 || c.heads < 1 || c.kv_heads < 1 || c.ffn < 1 || c.vocab < 1 || c.seq_len < 1 ||
      c.batch < 1)
    throw ConfigError(who + "layers, hidden, heads, kv_heads, ffn, vocab, seq_len and batch must be positive");
  // hidden need not be a multiple of heads: GPT-3's published XL and 13B sizes are not
  // (2048 over 24 heads, 5140 over 40); the head width is then fractional, which
  // changes no FLOP count.
  if (c.heads % c.kv_heads != 0)
    throw ConfigError(who + "heads (" + std::to_string(c.heads) + ") must be a multiple of kv_heads (" +
                      std::to_string(c.kv_heads) + ")");
  if (c.bits != 16 && c.bits != 32)
    throw ConfigError(who + "bits must be 16 (mixed precision) or 32 (fp32), got " + std::to_string(c.bits));
  if (c.experts < 0 || c.experts > 256)
    throw ConfigError(who + "experts must lie in 0..256, got " + std::to_string(c.experts));
  if (c.experts > 0 && (c.top_k < 1 || c.top_k > c.experts))
    throw ConfigError(who + "top_k must lie in 1..experts (" + std::to_string(c.experts) + "), got " +
                      std::to_string(c.top_k));
}

OpGraph build_gpt(const GptConfig& c) {
  check_gpt_config(c);
  const ElementBytes precision(c.bits == 16 ? 2 : kFloatBytes);
  GraphBuilder b(c.name, Optimizer::kAdam);
  b.set_batch(c.batch);
  const double tokens = static_cast<double>(c.batch) * c.seq_len;

  b.set_block("input");
  const Tensor ids = b.input("token_ids", {tokens});
  const Tensor labels = b.input("labels", {tokens});
  b.set_block("embedding");
  b.set_prefix("embedding");
  const Tensor table = b.variable("token_table", {static_cast<double>(c.vocab), static_cast<double>(c.hidden)});
  Tensor x = gather(b, "token_lookup", table, ids);
  if (c.learned_positions) {
    const Tensor positions = b.variable("position_table", {static_cast<double>(c.seq_len), static_cast<double>(c.hidden)});
    const Tensor pos_ids = b.input("position_ids", {tokens});
    x = add(b, "positions", {x, gather(b, "position_lookup", positions, pos_ids)});
  }
  for (int l = 0; l < c.layers; ++l) {
    b.set_block("decoder", l);
    b.set_prefix("layer" + std::to_string(l) + "/attention");
    x = add(b, "residual", {x, attention(b, c, norm(b, c, "norm", x))});
    b.set_prefix("layer" + std::to_string(l) + (c.experts > 0 ? "/moe" : "/mlp"));
    const Tensor h = norm(b, c, "norm", x);
    x = add(b, "residual", {x, c.experts > 0 ? moe(b, c, h) : mlp(b, c, "ffn", h)});
  }
  b.set_block("softmax");
  b.set_prefix("head");
  x = norm(b, c, "final_norm", x);
  // Tied output (GPT-3, Megatron): the token table again; untied (Llama, Mixtral): its own matrix.
  const Tensor logits = c.tied_embeddings
                            ? matmul(b, "logits", x, view(table, {static_cast<double>(c.hidden), static_cast<double>(c.vocab)}))
                            : dense_matmul(b, "logits", x, c.vocab);
  return b.finish(total_loss(b, "total_loss", {softmax_cross_entropy(b, "xent", logits, labels)}));
}

double gpt_parameter_count(const GptConfig& c, bool active_only) {
  const double d = c.hidden, kv = c.kv_heads * (d / c.heads), f = c.ffn, bias = c.biases ? 1 : 0;
  const double norm = c.rms_norm ? d : 2 * d;
  const double attention = d * d + 2 * d * kv + d * d + bias * (d + 2 * kv + d);
  const double one_mlp = c.swiglu ? 3 * d * f + bias * (2 * f + d) : 2 * d * f + bias * (f + d);
  const double mlp = c.experts > 0 ? (active_only ? c.top_k : c.experts) * one_mlp + d * c.experts : one_mlp;
  const double layer = attention + mlp + 2 * norm;
  const double embeddings = c.vocab * d * (c.tied_embeddings ? 1 : 2) + (c.learned_positions ? c.seq_len * d : 0);
  return c.layers * layer + embeddings + norm;
}

}  // namespace aware::datasets_detail
