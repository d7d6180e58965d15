// The zoo's language models (datasets/gpt.h): every named size's parameter count
// against its source's published figure, the graph's own count against the
// formula, a hand-counted tiny model, and the options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "datasets/gpt.h"
#include "datasets/load.h"
#include "datasets/zoo.h"

namespace aware {
namespace {

using datasets_detail::GptConfig;
using datasets_detail::gpt_parameter_count;
using datasets_detail::gpt_sizes;

// What the graph holds: the forward ops' parameter bytes (fp32).
double graph_params(const OpGraph& g) {
  double bytes = 0;
  for (const Op& op : g.ops())
    if (op.phase == Phase::kForward) bytes += op.param_bytes;
  return bytes / 4;
}

// Half a unit in the last digit the source prints: "1.7B" -> 0.05e9, "175.0B" ->
// 0.05e9, "350M" -> 5e6, "47B" -> 0.5e9.
double half_unit(double published) {
  const double magnitude = published >= 1e9 ? 1e9 : 1e6;
  const double value = published / magnitude;
  // The printed decimals: the tables print one (GPT-3 13.0/175.0, Megatron 18.4...)
  // or none (350M, 47B, 8B) or one for the small GPT-3/Megatron sizes (1.3, 2.7, 1.7).
  const bool whole = std::fabs(value - std::round(value)) < 1e-9 && value >= 8;
  return (whole ? 0.5 : 0.05) * magnitude;
}

TEST(Gpt, EveryNamedSizeMatchesItsPublishedParameterCount) {
  for (const auto& size : gpt_sizes()) {
    const double ours = gpt_parameter_count(size.config);
    if (size.config.name == "gpt3-350m") {
      // The one miss: Table 2.1's own architecture (24 layers of 1024, 2048 positions,
      // 50,257 tokens) holds 355.9M parameters, 1.7% above its "350M" label, which is
      // looser than the table's printed rounding. Held to the count by hand instead:
      // 12*24*1024^2 + 13*24*1024 + 50257*1024 + 2048*1024 + 2*1024.
      EXPECT_EQ(ours, 12.0 * 24 * 1024 * 1024 + 13.0 * 24 * 1024 + 50257.0 * 1024 + 2048.0 * 1024 + 2.0 * 1024);
      continue;
    }
    const double off = std::fabs(ours - size.published_params);
    // Within 1%, or within the rounding of the figure as printed (GPT-3's 350M,
    // 1.3B and 2.7B and Megatron's 1.7B and 3.6B are rounded labels: their own
    // architectures give 355.9M, 1.316B, 2.652B, 1.652B and 3.562B).
    EXPECT_TRUE(off <= 0.01 * size.published_params || off <= half_unit(size.published_params))
        << size.config.name << ": " << ours << " against " << size.published_params << " (" << size.source << ")";
    if (size.published_active > 0) {
      const double active = gpt_parameter_count(size.config, true);
      EXPECT_LE(std::fabs(active - size.published_active), 0.01 * size.published_active) << size.config.name;
    }
  }
}

TEST(Gpt, MegatronCountsFollowThePapersFormula) {
  // P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)), plus our final norm's 2h.
  for (const auto& size : gpt_sizes()) {
    if (size.config.name.rfind("megatron", 0) != 0) continue;
    const double l = size.config.layers, h = size.config.hidden, V = size.config.vocab, s = size.config.seq_len;
    const double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    EXPECT_DOUBLE_EQ(gpt_parameter_count(size.config), formula + 2 * h) << size.config.name;
  }
}

TEST(Gpt, TheGraphHoldsTheArchitecturesParameters) {
  // Small models built for real: the graph's variables against the formula.
  for (const char* spec : {"zoo:gpt3-125m:batch=2,seq_len=64", "zoo:llama3-8b:layers=2,batch=1,seq_len=32",
                           "zoo:mixtral-8x7b:layers=1,batch=1,seq_len=16"}) {
    const OpGraph g = load_graph(spec);
    for (const auto& size : gpt_sizes()) {
      if (std::string(spec).find(size.config.name + ":") == std::string::npos) continue;
      GptConfig c = size.config;
      if (c.name == "llama3-8b") c.layers = 2;
      if (c.name == "mixtral-8x7b") c.layers = 1;
      c.seq_len = c.learned_positions ? 64 : c.seq_len;  // learned positions: seq_len x hidden parameters
      EXPECT_DOUBLE_EQ(graph_params(g), gpt_parameter_count(c)) << spec;
    }
  }
}

TEST(Gpt, ATinyModelCountedByHand) {
  // 1 layer, hidden 8, 2 heads, ffn 32, vocab 10, seq 4, GPT style:
  // attention 4*64 + 4*8 biases = 288; MLP 2*8*32 + 32 + 8 = 552; two LayerNorms 32;
  // token table 80, positions 32, final LayerNorm 16: 1000.
  const OpGraph g = load_graph("zoo:gpt:layers=1,hidden=8,heads=2,ffn=32,vocab=10,seq_len=4,batch=2");
  EXPECT_DOUBLE_EQ(graph_params(g), 1000);
  EXPECT_GT(g.num_ops(), 40);
  for (const Op& op : g.ops()) EXPECT_GE(op.flops, 0);
}

TEST(Gpt, OptionsAndBadSizes) {
  EXPECT_THROW(load_graph("zoo:gpt:heads=3,kv_heads=2"), ConfigError);
  EXPECT_THROW(load_graph("zoo:mixtral-8x7b:layers=1,top_k=9"), ConfigError);
  EXPECT_THROW(load_graph("zoo:gpt:experts=2"), ConfigError);  // only the mixtures take experts
  EXPECT_THROW(load_graph("zoo:gpt:image_size=96"), ConfigError);
  const OpGraph g = load_graph("zoo:gpt:layers=2,batch=4,seq_len=128");
  EXPECT_EQ(g.batch(), 4);
  // The zoo knows every named size.
  auto names = zoo_model_names();
  for (const std::string& n : zoo_language_model_sizes()) names.push_back(n);
  for (const char* n : {"gpt", "gpt3-175b", "megatron-1t", "llama3-405b", "mixtral-8x7b"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(Gpt, EveryNamedSizeBuilds) {
  // One layer of each at a small batch: GPT-3's XL and 13B have a width that their
  // head count does not divide, and must build all the same.
  for (const auto& size : gpt_sizes()) {
    const std::string spec = "zoo:" + size.config.name + ":layers=1,batch=2,seq_len=64";
    EXPECT_NO_THROW(load_graph(spec)) << spec;
  }
  // The context product's FLOPs either way: 2 x sequences x s^2 x hidden, whether as 24
  // heads of 2048 / 24 (one product per sequence) or 16 heads of 128 (per head).
  const OpGraph a = load_graph("zoo:gpt:layers=1,hidden=2048,heads=24,ffn=8192,batch=2,seq_len=64");
  const OpGraph b = load_graph("zoo:gpt:layers=1,hidden=2048,heads=16,ffn=8192,batch=2,seq_len=64");
  const auto context = [](const OpGraph& g) { return g.op(g.find("layer0/attention/context")).flops; };
  EXPECT_DOUBLE_EQ(context(a), 2.0 * 2 * 64 * 64 * 2048);
  EXPECT_DOUBLE_EQ(context(b), context(a));
}

TEST(Gpt, LargestSizesBuildAtOpGranularity) {
  // GPT-3 175B and Llama 3 405B as whole graphs: thousands of ops, the right FLOPs.
  const OpGraph g = load_graph("zoo:gpt3-175b");
  EXPECT_GT(g.num_ops(), 5000);
  EXPECT_LT(g.num_ops(), 20000);
  // Forward FLOPs ~ 2 x params x tokens (+ attention): 2 * 174.6e9 * 1536 * 2048 = 1.10e18.
  double forward = 0;
  for (const Op& op : g.ops())
    if (op.phase == Phase::kForward) forward += op.flops;
  EXPECT_GT(forward, 1.0e18);
  EXPECT_LT(forward, 1.4e18);
}

}  // namespace
}  // namespace aware
