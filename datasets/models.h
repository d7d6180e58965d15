// The per-family model builders behind the zoo and the families (internal to
// datasets/). Each returns a validated training-step graph; defaults and their
// sources are in datasets/README.md.
#pragma once

#include <cstdint>
#include <string>

#include "core/op_graph.h"
#include "datasets/builder.h"
#include "datasets/zoo.h"

namespace aware::datasets_detail {

OpGraph build_inception_v3(const ModelOptions& options);
// depth: 50, 101 or 152.
OpGraph build_resnet(int depth, const ModelOptions& options);
OpGraph build_nasnet(const ModelOptions& options);

// A seq2seq LSTM translation model with attention (the NMT of ColocRL /
// Hierarchical, and GNMT's variant of it).
struct Seq2SeqConfig {
  std::string name;
  int batch = 128;
  int seq_len = 40;  // source and target time steps
  int hidden = 1024;
  int layers = 2;     // per stack
  int vocab = 40000;  // source and target vocabularies (each)
  bool gnmt = false;  // bidirectional first encoder layer, residuals, bottom-layer attention
  Optimizer optimizer = Optimizer::kSgd;
};
OpGraph build_seq2seq(const Seq2SeqConfig& config);
OpGraph build_rnnlm(const ModelOptions& options);
OpGraph build_transformer(const ModelOptions& options);

// Families: member `seed`, named "<family>-<seed>".
OpGraph build_cifar10_member(std::uint64_t seed);
OpGraph build_ptb_member(std::uint64_t seed);
OpGraph build_nmt_member(std::uint64_t seed);

// Returns `value` when positive, else `fallback`.
inline int option_or(int value, int fallback) { return value > 0 ? value : fallback; }

}  // namespace aware::datasets_detail
