// The zoo's named language-model sizes, as their sources publish them. Each row's
// published parameter count is the source's own (rounded) figure; the test holds
// the architecture's count to it (tests/datasets/gpt_test.cc).
//
// - GPT-3 (Brown et al. 2020, Table 2.1): layers, d_model, heads; d_ff = 4 d_model;
//   context 2048; GPT-2's BPE vocabulary of 50,257; learned positions, biases,
//   LayerNorm, tied output. Batch: the table's tokens per batch (0.5M, 1M, 2M,
//   3.2M) read as 256, 512, 1024 and 1536 sequences of 2048.
// - Megatron-LM weak scaling (Narayanan et al. 2021, Table 1): layers, hidden,
//   heads and batch as the table gives them; d_ff = 4 h, seq 2048, vocab 51,200,
//   the GPT architecture (its parameter formula is 12lh^2(1 + 13/(12h) + (V+s)/(12lh))).
// - Llama 3 (Dubey et al. 2024, Table 3): layers, model dimension, FFN dimension,
//   heads, 8 KV heads, vocabulary 128K (the released tokenizer's 128,256);
//   RMSNorm, rotary positions, SwiGLU, no biases, untied output; sequence 8,192 as
//   trained at the end. Batch: 16M tokens (2,048 x 8,192) for 405B as the paper
//   states; we use the same for 8B and 70B (not given there).
// - Mixtral 8x7B (Jiang et al. 2024, Table 1 and Section 1): dim 4096, 32 layers,
//   32 heads, 8 KV heads, hidden 14,336, vocabulary 32,000, 8 experts, top-2; "47B"
//   parameters, "13B" active. Sequence 4,096 and batch 1,024 are ours (the paper
//   gives a 32,768 context, not the training batch).
#include "datasets/gpt.h"

namespace aware::datasets_detail {
namespace {

GptConfig gpt3(const std::string& name, int layers, int hidden, int heads, int batch) {
  GptConfig c;
  c.name = name;
  c.layers = layers;
  c.hidden = hidden;
  c.heads = heads;
  c.kv_heads = heads;
  c.ffn = 4 * hidden;
  c.vocab = 50257;
  c.seq_len = 2048;
  c.batch = batch;
  return c;
}

GptConfig megatron(const std::string& name, int layers, int hidden, int heads, int batch) {
  GptConfig c = gpt3(name, layers, hidden, heads, batch);
  c.vocab = 51200;
  return c;
}

GptConfig llama(const std::string& name, int layers, int hidden, int ffn, int heads, int kv_heads) {
  GptConfig c;
  c.name = name;
  c.layers = layers;
  c.hidden = hidden;
  c.ffn = ffn;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.vocab = 128256;
  c.seq_len = 8192;
  c.batch = 2048;
  c.biases = false;
  c.learned_positions = false;
  c.rotary = true;
  c.rms_norm = true;
  c.swiglu = true;
  c.tied_embeddings = false;
  return c;
}

}  // namespace

const std::vector<GptSize>& gpt_sizes() {
  static const std::vector<GptSize> sizes = [] {
    const std::string g3 = "GPT-3, Brown et al. 2020, Table 2.1";
    const std::string mg = "Megatron-LM, Narayanan et al. 2021, Table 1";
    const std::string l3 = "Llama 3, Dubey et al. 2024, Table 3";
    std::vector<GptSize> out = {
        {gpt3("gpt3-125m", 12, 768, 12, 256), 125e6, 0, g3},
        {gpt3("gpt3-350m", 24, 1024, 16, 256), 350e6, 0, g3},
        {gpt3("gpt3-760m", 24, 1536, 16, 256), 760e6, 0, g3},
        {gpt3("gpt3-1.3b", 24, 2048, 24, 512), 1.3e9, 0, g3},
        {gpt3("gpt3-2.7b", 32, 2560, 32, 512), 2.7e9, 0, g3},
        {gpt3("gpt3-6.7b", 32, 4096, 32, 1024), 6.7e9, 0, g3},
        {gpt3("gpt3-13b", 40, 5140, 40, 1024), 13.0e9, 0, g3},
        {gpt3("gpt3-175b", 96, 12288, 96, 1536), 175.0e9, 0, g3},
        {megatron("megatron-1.7b", 24, 2304, 24, 512), 1.7e9, 0, mg},
        {megatron("megatron-3.6b", 30, 3072, 32, 512), 3.6e9, 0, mg},
        {megatron("megatron-7.5b", 36, 4096, 32, 512), 7.5e9, 0, mg},
        {megatron("megatron-18b", 40, 6144, 48, 1024), 18.4e9, 0, mg},
        {megatron("megatron-39b", 48, 8192, 64, 1536), 39.1e9, 0, mg},
        {megatron("megatron-76b", 60, 10240, 80, 1792), 76.1e9, 0, mg},
        {megatron("megatron-145b", 80, 12288, 96, 2304), 145.6e9, 0, mg},
        {megatron("megatron-310b", 96, 16384, 128, 2160), 310.1e9, 0, mg},
        {megatron("megatron-530b", 105, 20480, 128, 2520), 529.6e9, 0, mg},
        {megatron("megatron-1t", 128, 25600, 160, 3072), 1008.0e9, 0, mg},
        {llama("llama3-8b", 32, 4096, 14336, 32, 8), 8e9, 0, l3},
        {llama("llama3-70b", 80, 8192, 28672, 64, 8), 70e9, 0, l3},
        {llama("llama3-405b", 126, 16384, 53248, 128, 8), 405e9, 0, l3},
    };
    GptConfig mixtral = llama("mixtral-8x7b", 32, 4096, 14336, 32, 8);
    mixtral.vocab = 32000;
    mixtral.seq_len = 4096;
    mixtral.batch = 1024;
    mixtral.experts = 8;
    mixtral.top_k = 2;
    out.push_back({mixtral, 47e9, 13e9, "Mixtral of Experts, Jiang et al. 2024, Table 1 and Section 1"});
    return out;
  }();
  return sizes;
}

}  // namespace aware::datasets_detail
