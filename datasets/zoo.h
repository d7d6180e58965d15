// The model zoo: training-step operator graphs (forward + backward + update) at
// framework-op granularity, with per-op FLOPs, bytes, output sizes, parameter and
// workspace bytes derived from layer shapes. Defaults and their sources are in
// datasets/README.md.
#pragma once

#include <string>
#include <vector>

#include "core/op_graph.h"

namespace aware {

// Overrides for a builder's defaults; a value <= 0 keeps the model's default.
struct ModelOptions {
  int batch = 0;
  int seq_len = 0;     // recurrent / attention models: time steps (tokens)
  int hidden = 0;      // recurrent / attention models: hidden size
  int layers = 0;      // NMT / GNMT / RNNLM / Transformer: layers per stack
  int vocab = 0;       // language models: vocabulary size
  int image_size = 0;  // CNNs: input height = width
  int heads = 0;       // language models (gpt): attention heads
  int kv_heads = 0;    // gpt: key/value heads (grouped-query attention when fewer than heads)
  int ffn = 0;         // gpt: the MLP's inner width (per expert)
  int experts = 0;     // gpt mixtures of experts: experts per layer
  int top_k = 0;       // gpt mixtures of experts: experts per token
  int bits = 0;        // gpt: 32 (fp32, the default) or 16 (mixed precision: bf16 tensors, fp32 optimizer state)
};

// The ModelOptions fields by name, in declaration order: "batch", "seq_len",
// "hidden", "layers", "vocab", "image_size", "heads", "kv_heads", "ffn", "experts", "top_k", "bits".
const std::vector<std::string>& model_option_keys();
// The field of `options` named `key`, or null for a name that is not a field.
int* model_option_field(ModelOptions& options, const std::string& key);
// The ModelOptions fields model `name` reads (the others it ignores), in
// declaration order. Throws ConfigError for an unknown model, as build_zoo_model.
std::vector<std::string> zoo_model_option_keys(const std::string& name);

// "inception_v3", "resnet50", "resnet101", "resnet152", "nasnet", "nmt2", "nmt4",
// "nmt8", "gnmt", "rnnlm", "transformer", "gpt": the models the suites run over.
std::vector<std::string> zoo_model_names();
// The named language-model sizes, zoo models too ("gpt3-175b", "megatron-1t",
// "llama3-405b", "mixtral-8x7b", ...: datasets/gpt_sizes.cc), kept apart because most
// are far too large for the suites that build every zoo model.
std::vector<std::string> zoo_language_model_sizes();
// Builds a validated graph named `name` with source "zoo:<name>". Throws ConfigError
// listing the known names for an unknown one, or for an option the model rejects.
OpGraph build_zoo_model(const std::string& name, const ModelOptions& options = {});

}  // namespace aware
