// Decoder-only language models for the zoo (internal to datasets/): the builder,
// the parameter count its architecture implies, and the named sizes from the
// published tables (GPT-3, Megatron-LM's weak-scaling models, Llama 3, Mixtral).
#pragma once

#include <string>
#include <vector>

#include "core/op_graph.h"

namespace aware::datasets_detail {

struct GptConfig {
  std::string name = "gpt";
  int layers = 12;
  int hidden = 768;
  int heads = 12;
  int kv_heads = 12;       // < heads: grouped-query attention
  int ffn = 3072;          // the MLP's inner width (per expert)
  int vocab = 50257;
  int seq_len = 2048;
  int batch = 256;         // sequences per step (the global batch)
  bool biases = true;      // GPT-3 / Megatron: every projection has a bias
  bool learned_positions = true;  // else rotary (no parameters)
  bool rms_norm = false;   // else LayerNorm (scale and shift)
  bool swiglu = false;     // else GELU with two matrices
  bool rotary = false;
  bool tied_embeddings = true;  // the output projection is the token table
  int experts = 0;         // > 0: every MLP is a mixture of `experts`, `top_k` per token
  int top_k = 0;
  int bits = 32;           // 16: mixed precision (bf16 tensors, fp32 optimizer state), as Megatron-LM trains
};

// A named size: the configuration, the parameter count its source publishes (in
// the source's own rounding), what that source is, and, for a mixture of experts,
// the published active count.
struct GptSize {
  GptConfig config;
  double published_params = 0;
  double published_active = 0;  // 0 when not a mixture of experts
  std::string source;
};
const std::vector<GptSize>& gpt_sizes();

// ConfigError naming the model and the field for sizes that cannot build.
void check_gpt_config(const GptConfig& config);
OpGraph build_gpt(const GptConfig& config);
// Trainable parameters of the architecture (embeddings, every layer, the final
// norm, and the output matrix when untied); with `active_only`, a mixture of
// experts counts top_k experts per layer instead of all.
double gpt_parameter_count(const GptConfig& config, bool active_only = false);

}  // namespace aware::datasets_detail
