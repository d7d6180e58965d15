// The seeded graph families ("cifar10", "ptb", "nmt") and their fixed split.
// cifar10 and nmt live here; the ptb recurrent cells are in family_ptb.cc.
#include "datasets/families.h"

#include "core/errors.h"
#include "datasets/cells.h"
#include "datasets/layers.h"
#include "datasets/models.h"
#include "datasets/seeded.h"

namespace aware {
namespace datasets_detail {
namespace {

constexpr std::uint64_t kCifarStream = 0xC1FA10;
constexpr std::uint64_t kNmtStream = 0x4E4D54;

// An ENAS micro-search-space cell: B = 5 blocks, each reading two earlier states
// with an op from {identity, sep conv 3x3, sep conv 5x5, avg pool 3x3, max pool 3x3}.
CellSpec random_cell(SeededChoice& choice, bool reduction) {
  const std::vector<CellOp> ops = {CellOp::kIdentity, CellOp::kSepConv3, CellOp::kSepConv5,
                                   CellOp::kAvgPool3, CellOp::kMaxPool3};
  CellSpec spec;
  spec.reduction = reduction;
  for (int i = 0; i < 5; ++i) {
    CellBlock block;
    block.input_a = choice.below(i + 2);
    block.op_a = choice.pick(ops);
    block.input_b = choice.below(i + 2);
    block.op_b = choice.pick(ops);
    spec.blocks.push_back(block);
  }
  return spec;
}

}  // namespace

// ENAS CIFAR-10 child network: a 3x3 stem convolution, then N normal cells,
// a reduction cell, N normal cells, a reduction cell, N normal cells, pool and a
// 10-way classifier. The seed draws the two cells, N in {1, 2, 3}, the first
// stage's filters and the batch.
OpGraph build_cifar10_member(std::uint64_t seed) {
  SeededChoice choice(seed, kCifarStream);
  const CellSpec normal = random_cell(choice, false);
  const CellSpec reduction = random_cell(choice, true);
  const int cells_per_stage = 1 + choice.below(3);
  const double filters = choice.pick(std::vector<double>{20, 24, 32, 36});
  const double batch = choice.pick(std::vector<double>{32, 64, 128});

  GraphBuilder b("cifar10-" + std::to_string(seed), Optimizer::kMomentum);
  const ImageBatch in = image_classifier_inputs(b, batch, 32);
  const Tensor stem = batch_norm(b, "conv/bn", conv2d(b, "conv", in.images, 3 * filters, 3, 3, 1));
  const Tensor last = stack_cell_stages(b, normal, reduction, stem, stem, filters, cells_per_stage);
  return finish_image_classifier(b, last, in.labels, 10, /*relu_first=*/true);
}

// NMT graphs of varying size: 2-4 layers, hidden 256-1024, 10-30 steps.
OpGraph build_nmt_member(std::uint64_t seed) {
  SeededChoice choice(seed, kNmtStream);
  Seq2SeqConfig config;
  config.name = "nmt-" + std::to_string(seed);
  config.layers = 2 + choice.below(3);
  config.hidden = choice.pick(std::vector<int>{256, 512, 1024});
  config.seq_len = choice.pick(std::vector<int>{10, 15, 20, 25, 30});
  config.batch = choice.pick(std::vector<int>{64, 128});
  config.vocab = choice.pick(std::vector<int>{10000, 20000, 40000});
  config.optimizer = Optimizer::kSgd;
  return build_seq2seq(config);
}

}  // namespace datasets_detail

std::vector<std::string> family_names() { return {"cifar10", "ptb", "nmt"}; }

OpGraph build_family_graph(const std::string& family, std::uint64_t seed) {
  OpGraph graph;
  if (family == "cifar10") {
    graph = datasets_detail::build_cifar10_member(seed);
  } else if (family == "ptb") {
    graph = datasets_detail::build_ptb_member(seed);
  } else if (family == "nmt") {
    graph = datasets_detail::build_nmt_member(seed);
  } else {
    throw ConfigError("unknown graph family '" + family + "'; known families: cifar10, ptb, nmt");
  }
  graph.set_name(family + "-" + std::to_string(seed));
  graph.set_source("family:" + family + ":" + std::to_string(seed));
  return graph;
}

FamilySplit family_split(int count) {
  if (count < 0) throw ConfigError("family_split: count " + std::to_string(count) + " < 0");
  FamilySplit split;
  for (int seed = 1; seed <= count; ++seed) {
    (seed % 4 == 0 ? split.test : split.train).push_back(static_cast<std::uint64_t>(seed));
  }
  return split;
}

}  // namespace aware
