// Seq2seq LSTM translation models with attention, unrolled over time steps as the
// static TensorFlow graphs of ColocRL and Hierarchical were: one LSTMBlockCell op
// per layer per step, the softmax projection per target step.
//
// NMT (ColocRL, Mirhoseini et al. 2017; Hierarchical, Mirhoseini et al. 2018):
// an L-layer encoder and L-layer decoder, Luong-style multiplicative attention on
// the top decoder layer with input feeding (the attention output of step t-1 is
// concatenated to the decoder's input at step t), encoder final states passed to
// the decoder.
//
// GNMT (Wu et al. 2016): the first encoder layer is bidirectional (its two
// directions concatenated into layer 1), residual connections from the third
// layer up in both stacks, attention queried by the bottom decoder layer and its
// context concatenated to the input of every upper decoder layer (no input
// feeding: the paper's choice that lets decoder layers pipeline).
#include "core/errors.h"
#include "datasets/layers.h"
#include "datasets/models.h"

namespace aware::datasets_detail {
namespace {

// The LSTM weights of one layer (one direction).
struct LstmLayer {
  Tensor weights;
  Tensor bias;
};

LstmLayer lstm_layer(GraphBuilder& b, const std::string& name, double in, double hidden) {
  return {b.variable(name + "/kernel", {in + hidden, 4 * hidden}),
          b.variable(name + "/bias", {4 * hidden})};
}

// Attention over the encoder memory for one decoder step; returns the context {B, H}.
Tensor attend(GraphBuilder& b, int t, const Tensor& query, const Tensor& keys, const Tensor& memory,
              double batch, double steps, double hidden) {
  const std::string step = "t" + std::to_string(t);
  const Tensor scores = batch_matmul(b, step + "/score", view(query, {batch, 1, hidden}),
                                     view(keys, {batch, steps, hidden}), batch, 1, steps, hidden);
  const Tensor align = softmax(b, step + "/align", view(scores, {batch, steps}));
  const Tensor context = batch_matmul(b, step + "/context", view(align, {batch, 1, steps}), memory,
                                      batch, 1, hidden, steps);
  return view(context, {batch, hidden});
}

}  // namespace

OpGraph build_seq2seq(const Seq2SeqConfig& config) {
  if (config.layers < 1 || config.seq_len < 1 || config.hidden < 1 || config.batch < 1 ||
      config.vocab < 1) {
    throw ConfigError(config.name + ": layers, seq_len, hidden, batch and vocab must be positive");
  }
  if (config.gnmt && config.layers < 2) {
    throw ConfigError(config.name + ": GNMT needs at least 2 layers per stack");
  }
  const double batch = config.batch, hidden = config.hidden, vocab = config.vocab;
  const int steps = config.seq_len, layers = config.layers;
  GraphBuilder b(config.name, config.optimizer);
  b.set_batch(batch);

  b.set_block("input");
  const Tensor src_ids = b.input("source_ids", {steps * batch});
  const Tensor tgt_ids = b.input("target_ids", {steps * batch});
  const Tensor tgt_labels = b.input("target_labels", {steps * batch, 1});
  const Tensor zero_state = b.input("zero_state", {batch, 2 * hidden});
  const std::vector<Tensor> labels = unstack(b, "target_labels_unstack", tgt_labels, steps);

  b.set_block("embedding");
  b.set_prefix("embedding");
  const Tensor src_table = b.variable("encoder_table", {vocab, hidden});
  const Tensor tgt_table = b.variable("decoder_table", {vocab, hidden});
  const std::vector<Tensor> src_emb = embed_steps(b, "encoder_", src_table, src_ids, steps);
  const std::vector<Tensor> tgt_emb = embed_steps(b, "decoder_", tgt_table, tgt_ids, steps);

  // ---- Encoder. inputs[t] is the input of the current layer at step t.
  std::vector<Tensor> inputs = src_emb;
  std::vector<Tensor> final_states(layers);
  for (int l = 0; l < layers; ++l) {
    b.set_block("encoder", l);
    const std::string name = "encoder/layer" + std::to_string(l);
    b.set_prefix(name);
    const double in = inputs[0].dims.back();
    std::vector<Tensor> outputs(steps);
    const LstmLayer fw = lstm_layer(b, "fw", in, hidden);
    Tensor state = zero_state;
    for (int t = 0; t < steps; ++t) {
      const LstmStep s =
          lstm_cell(b, "fw/t" + std::to_string(t), inputs[t], state, fw.weights, fw.bias);
      outputs[t] = s.h;
      state = s.state;
    }
    final_states[l] = state;
    if (config.gnmt && l == 0) {
      // The backward direction reads the sentence from its end.
      const LstmLayer bw = lstm_layer(b, "bw", in, hidden);
      std::vector<Tensor> backward(steps);
      Tensor bw_state = zero_state;
      for (int t = steps - 1; t >= 0; --t) {
        const LstmStep s =
            lstm_cell(b, "bw/t" + std::to_string(t), inputs[t], bw_state, bw.weights, bw.bias);
        backward[t] = s.h;
        bw_state = s.state;
      }
      for (int t = 0; t < steps; ++t) {
        outputs[t] = concat(b, "bi_concat/t" + std::to_string(t), {outputs[t], backward[t]}, 1);
      }
    }
    if (config.gnmt && l >= 2) {
      for (int t = 0; t < steps; ++t) {
        outputs[t] = add(b, "residual/t" + std::to_string(t), {outputs[t], inputs[t]});
      }
    }
    inputs = outputs;
  }

  // ---- Attention memory: the top encoder layer's outputs, and their keys.
  b.set_block("attention");
  b.set_prefix("attention");
  const Tensor memory = stack(b, "memory", inputs);
  const Tensor keys =
      dense_matmul(b, "memory_layer", view(memory, {batch * steps, hidden}), hidden);

  // ---- Decoder and per-step softmax.
  std::vector<LstmLayer> dec(layers);
  for (int l = 0; l < layers; ++l) {
    b.set_block("decoder", l);
    b.set_prefix("decoder/layer" + std::to_string(l));
    double in = hidden;
    if (!config.gnmt && l == 0) in = 2 * hidden;  // embedding + fed attention
    if (config.gnmt && l >= 1) in = 2 * hidden;   // previous layer + context
    dec[l] = lstm_layer(b, "cell", in, hidden);
  }
  b.set_block("attention");
  b.set_prefix("attention");
  Tensor zero_attention, attention_kernel;  // input feeding: NMT only
  if (!config.gnmt) {
    zero_attention = b.input("zero_attention", {batch, hidden});
    attention_kernel = b.variable("attention_layer/kernel", {2 * hidden, hidden});
  }
  b.set_block("softmax");
  b.set_prefix("softmax");
  const Tensor proj = b.variable("projection/kernel", {hidden, vocab});
  const Tensor proj_bias = b.variable("projection/bias", {vocab});

  std::vector<Tensor> states = final_states;
  std::vector<Tensor> losses;
  Tensor fed_attention = zero_attention;
  for (int t = 0; t < steps; ++t) {
    const std::string ts = "/t" + std::to_string(t);
    Tensor x = tgt_emb[t];
    Tensor context;
    for (int l = 0; l < layers; ++l) {
      b.set_block("decoder", l);
      b.set_prefix("decoder/layer" + std::to_string(l));
      Tensor in = x;
      if (!config.gnmt && l == 0) in = concat(b, "input_feed" + ts, {x, fed_attention}, 1);
      if (config.gnmt && l >= 1) in = concat(b, "with_context" + ts, {x, context}, 1);
      const LstmStep s = lstm_cell(b, "cell" + ts, in, states[l], dec[l].weights, dec[l].bias);
      states[l] = s.state;
      Tensor out = s.h;
      if (config.gnmt && l >= 2) out = add(b, "residual" + ts, {out, x});
      if (config.gnmt && l == 0) {
        b.set_block("attention");
        b.set_prefix("attention");
        context = attend(b, t, out, keys, memory, batch, steps, hidden);
      }
      x = out;
    }
    Tensor top = x;
    if (!config.gnmt) {
      b.set_block("attention");
      b.set_prefix("attention");
      const Tensor context_top = attend(b, t, top, keys, memory, batch, steps, hidden);
      const Tensor joined = concat(b, "t" + std::to_string(t) + "/join", {top, context_top}, 1);
      top = activation(
          b, "Tanh", "t" + std::to_string(t) + "/attention_tanh",
          matmul(b, "t" + std::to_string(t) + "/attention_layer", joined, attention_kernel));
      fed_attention = top;
    }
    b.set_block("softmax");
    b.set_prefix("softmax");
    losses.push_back(projected_xent(b, ts, top, proj, proj_bias, labels[t]));
  }
  b.set_block("softmax");
  b.set_prefix("softmax");
  const Tensor loss = total_loss(b, "total_loss", losses);
  return b.finish(loss);
}

}  // namespace aware::datasets_detail
