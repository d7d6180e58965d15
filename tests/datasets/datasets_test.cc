// Conformance of every zoo model and family member (valid training steps with
// forward, backward and update ops), FLOP counts of known models against their
// published figures, determinism of the seeded families, and layer metadata.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "core/errors.h"
#include "datasets/families.h"
#include "datasets/load.h"
#include "datasets/zoo.h"

namespace aware {
namespace {

double forward_flops(const OpGraph& graph) {
  double total = 0;
  for (const Op& op : graph.ops()) {
    if (op.phase == Phase::kForward) total += op.flops;
  }
  return total;
}

// What every training-step graph must satisfy.
void expect_training_step(const OpGraph& graph) {
  ASSERT_NO_THROW(graph.validate());
  std::map<Phase, int> per_phase;
  std::set<int> updated;  // forward ops that have an update op
  for (int id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    ++per_phase[op.phase];
    EXPECT_FALSE(op.output_bytes.empty()) << op.name;
    if (op.phase == Phase::kForward) {
      EXPECT_EQ(op.forward_of, -1) << op.name;
      continue;
    }
    ASSERT_GE(op.forward_of, 0) << op.name;
    ASSERT_LT(op.forward_of, graph.num_ops()) << op.name;
    const Op& fwd = graph.op(op.forward_of);
    EXPECT_EQ(fwd.phase, Phase::kForward) << op.name;
    EXPECT_EQ(op.block, fwd.block) << op.name;
    EXPECT_EQ(op.layer, fwd.layer) << op.name;
    if (op.phase == Phase::kUpdate) updated.insert(op.forward_of);
  }
  EXPECT_GT(per_phase[Phase::kForward], 0);
  EXPECT_GT(per_phase[Phase::kBackward], 0);
  EXPECT_GT(per_phase[Phase::kUpdate], 0);
  for (int id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    if (op.phase == Phase::kForward && op.param_bytes > 0) {
      EXPECT_TRUE(updated.count(id)) << op.name << " has parameters but no update op";
    }
  }
  EXPECT_GT(graph.total_flops(), 0);
  EXPECT_GT(graph.total_param_bytes(), 0);
  EXPECT_LT(graph.num_ops(), 10000) << graph.name();
}

class ZooModel : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooModel, IsAValidTrainingStep) {
  const OpGraph graph = build_zoo_model(GetParam());
  EXPECT_EQ(graph.name(), GetParam());
  EXPECT_EQ(graph.source(), "zoo:" + GetParam());
  expect_training_step(graph);
}

INSTANTIATE_TEST_SUITE_P(AllModels, ZooModel, ::testing::ValuesIn(zoo_model_names()),
                         [](const auto& info) { return info.param; });

TEST(Zoo, UnknownModelIsAConfigErrorListingTheNames) {
  try {
    build_zoo_model("alexnet");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos);
  }
}

// The forward FLOPs of one image through the zoo's `model` lie within `factor`
// of the paper's `paper_flops` (both ways).
void expect_image_flops_near(const std::string& model, double paper_flops, double factor) {
  ModelOptions options;
  options.batch = 1;
  const double flops = forward_flops(build_zoo_model(model, options));
  EXPECT_GT(flops, paper_flops / factor) << model;
  EXPECT_LT(flops, paper_flops * factor) << model;
}

// ResNet-50: ~4.1 G multiply-adds per 224x224 image (He et al. 2016), ~8.2 GFLOP.
TEST(Zoo, ResNet50ForwardFlopsMatchThePaper) { expect_image_flops_near("resnet50", 8.2e9, 1.5); }

// Inception-V3: ~5.7 G multiply-adds per 299x299 image (Szegedy et al. 2016).
TEST(Zoo, InceptionV3ForwardFlopsMatchThePaper) {
  expect_image_flops_near("inception_v3", 11.4e9, 1.5);
}

// NASNet-A 4@1056 (mobile): 564 M multiply-adds per 224x224 image (Zoph et al. 2018).
TEST(Zoo, NasNetForwardFlopsMatchThePaper) { expect_image_flops_near("nasnet", 1.13e9, 2); }

// Parameters: ResNet-50 has ~25.6 M weights (He et al.), Transformer base ~65 M.
TEST(Zoo, ParameterCountsMatchThePapers) {
  auto weights = [](const OpGraph& g) {
    double n = 0;
    for (const Op& op : g.ops()) {
      if (op.type == "VariableV2") n += op.param_bytes / 4;
    }
    return n;
  };
  const double resnet = weights(build_zoo_model("resnet50"));
  EXPECT_NEAR(resnet, 25.6e6, 2e6);
  const double transformer = weights(build_zoo_model("transformer"));
  EXPECT_GT(transformer, 50e6);
  EXPECT_LT(transformer, 100e6);
}

TEST(Zoo, TrainingStepCostsAboutThreeForwardPasses) {
  const OpGraph graph = build_zoo_model("resnet50");
  const double ratio = graph.total_flops() / forward_flops(graph);
  EXPECT_GT(ratio, 2.5);
  EXPECT_LT(ratio, 3.5);
}

TEST(Zoo, DeeperResNetsAreBigger) {
  const OpGraph r50 = build_zoo_model("resnet50");
  const OpGraph r101 = build_zoo_model("resnet101");
  const OpGraph r152 = build_zoo_model("resnet152");
  EXPECT_LT(r50.num_ops(), r101.num_ops());
  EXPECT_LT(r101.num_ops(), r152.num_ops());
  EXPECT_LT(r50.total_flops(), r101.total_flops());
  EXPECT_LT(r101.total_flops(), r152.total_flops());
}

TEST(Zoo, OptionsOverrideDefaults) {
  ModelOptions options;
  options.batch = 64;
  const OpGraph big = build_zoo_model("resnet50", options);
  const OpGraph normal = build_zoo_model("resnet50");
  EXPECT_NEAR(forward_flops(big) / forward_flops(normal), 2.0, 0.01);
  ModelOptions layers;
  layers.layers = 3;
  const OpGraph nmt = build_zoo_model("nmt2", layers);
  int max_layer = -1;
  for (const Op& op : nmt.ops()) {
    if (op.block == "encoder") max_layer = std::max(max_layer, op.layer);
  }
  EXPECT_EQ(max_layer, 2);
}

TEST(Zoo, ImpossibleOptionsAreConfigErrors) {
  ModelOptions tiny;
  tiny.image_size = 32;
  EXPECT_THROW(build_zoo_model("inception_v3", tiny), ConfigError);
  ModelOptions one_layer;
  one_layer.layers = 1;
  EXPECT_THROW(build_zoo_model("gnmt", one_layer), ConfigError);
  // Smaller images that the architectures accept still build valid graphs.
  ModelOptions small;
  for (int size : {75, 96, 150}) {
    small.image_size = size;
    for (const char* name : {"inception_v3", "resnet50", "nasnet"}) {
      EXPECT_NO_THROW(build_zoo_model(name, small).validate()) << name << " at " << size;
    }
  }
}

TEST(Zoo, Nmt4StaysAFewThousandOps) { EXPECT_LT(build_zoo_model("nmt4").num_ops(), 5000); }

// The expert placer needs encoder and decoder layers 0..L-1 and the other blocks.
TEST(Zoo, SequenceModelsRecordLayers) {
  for (const auto& [name, layers] : std::vector<std::pair<std::string, int>>{
           {"nmt2", 2}, {"nmt4", 4}, {"nmt8", 8}, {"gnmt", 8}, {"transformer", 6}}) {
    const OpGraph graph = build_zoo_model(name);
    std::map<std::string, std::set<int>> layers_of;
    for (const Op& op : graph.ops()) layers_of[op.block].insert(op.layer);
    std::set<int> expected;
    for (int l = 0; l < layers; ++l) expected.insert(l);
    EXPECT_EQ(layers_of["encoder"], expected) << name;
    EXPECT_EQ(layers_of["decoder"], expected) << name;
    EXPECT_EQ(layers_of["embedding"], std::set<int>{-1}) << name;
    EXPECT_EQ(layers_of["softmax"], std::set<int>{-1}) << name;
    if (name != "transformer") {
      EXPECT_EQ(layers_of["attention"], std::set<int>{-1}) << name;
    }
  }
  const OpGraph rnnlm = build_zoo_model("rnnlm");
  std::set<int> lstm_layers;
  for (const Op& op : rnnlm.ops()) {
    if (op.block == "encoder") lstm_layers.insert(op.layer);
  }
  EXPECT_EQ(lstm_layers, (std::set<int>{0, 1}));
}

TEST(Zoo, OpsRecordShapes) {
  const OpGraph graph = build_zoo_model("resnet50");
  bool saw_conv = false;
  for (const Op& op : graph.ops()) {
    if (op.type != "Conv2D") continue;
    saw_conv = true;
    for (const char* key :
         {"batch", "in_channels", "height", "width", "filters", "kernel_h", "kernel_w", "stride"}) {
      EXPECT_TRUE(op.shape.count(key)) << op.name << " lacks " << key;
    }
  }
  EXPECT_TRUE(saw_conv);
  const OpGraph nmt = build_zoo_model("nmt2");
  for (const Op& op : nmt.ops()) {
    if (op.type == "MatMul") {
      EXPECT_TRUE(op.shape.count("M") && op.shape.count("N") && op.shape.count("K"));
    }
    if (op.type == "LSTMBlockCell") {
      EXPECT_TRUE(op.shape.count("batch") && op.shape.count("hidden"));
    }
  }
}

// ---- Families.

void expect_identical(const OpGraph& a, const OpGraph& b) {
  ASSERT_EQ(a.num_ops(), b.num_ops());
  ASSERT_EQ(a.num_edges(), b.num_edges());
  for (int i = 0; i < a.num_ops(); ++i) {
    const Op& x = a.op(i);
    const Op& y = b.op(i);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.flops, y.flops);
    EXPECT_EQ(x.bytes_accessed, y.bytes_accessed);
    EXPECT_EQ(x.output_bytes, y.output_bytes);
    EXPECT_EQ(x.param_bytes, y.param_bytes);
    EXPECT_EQ(x.shape, y.shape);
  }
  for (int i = 0; i < a.num_edges(); ++i) {
    EXPECT_EQ(a.edge(i).src, b.edge(i).src);
    EXPECT_EQ(a.edge(i).dst, b.edge(i).dst);
    EXPECT_EQ(a.edge(i).src_output, b.edge(i).src_output);
    EXPECT_EQ(a.edge(i).bytes, b.edge(i).bytes);
  }
}

bool same_structure(const OpGraph& a, const OpGraph& b) {
  if (a.num_ops() != b.num_ops() || a.num_edges() != b.num_edges()) return false;
  for (int i = 0; i < a.num_ops(); ++i) {
    if (a.op(i).name != b.op(i).name || a.op(i).flops != b.op(i).flops) return false;
  }
  return true;
}

class Family : public ::testing::TestWithParam<std::string> {};

TEST_P(Family, MembersAreValidTrainingSteps) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const OpGraph graph = build_family_graph(GetParam(), seed);
    EXPECT_EQ(graph.name(), GetParam() + "-" + std::to_string(seed));
    expect_training_step(graph);
  }
}

TEST_P(Family, SameSeedSameGraph) {
  expect_identical(build_family_graph(GetParam(), 7), build_family_graph(GetParam(), 7));
}

TEST_P(Family, SeedsDiffer) {
  const OpGraph first = build_family_graph(GetParam(), 1);
  int differing = 0;
  for (std::uint64_t seed = 2; seed <= 6; ++seed) {
    if (!same_structure(first, build_family_graph(GetParam(), seed))) ++differing;
  }
  EXPECT_GE(differing, 4);
}

// Seeds 36 and 44 of cifar10 once drew a normal cell that ignores its previous
// cell, leaving that cell's weights without a gradient ("does not reach the loss").
TEST_P(Family, EverySeedBuilds) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    EXPECT_NO_THROW(build_family_graph(GetParam(), seed)) << GetParam() << " seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(AllFamilies, Family, ::testing::ValuesIn(family_names()),
                         [](const auto& info) { return info.param; });

TEST(Families, PtbGraphsStayInTheirSizeRange) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const int ops = build_family_graph("ptb", seed).num_ops();
    EXPECT_GT(ops, 800) << seed;
    EXPECT_LT(ops, 3500) << seed;
  }
}

TEST(Families, CifarSeedsThatIgnoreAPreviousCellStillTrainEveryWeight) {
  for (std::uint64_t seed : {36, 44}) {
    const OpGraph graph = build_family_graph("cifar10", seed);
    expect_training_step(graph);
  }
}

// Committed results were computed on these members: the fix for the seeds above
// must leave the graphs of seeds that always built as they were.
TEST(Families, CifarSeedsThatAlwaysBuiltKeepTheirSize) {
  const std::map<std::uint64_t, std::pair<int, int>> ops_and_edges = {
      {35, {947, 1597}}, {37, {1007, 1709}}, {43, {546, 894}}};
  for (const auto& [seed, expected] : ops_and_edges) {
    const OpGraph graph = build_family_graph("cifar10", seed);
    EXPECT_EQ(graph.num_ops(), expected.first) << seed;
    EXPECT_EQ(graph.num_edges(), expected.second) << seed;
  }
}

TEST(Families, UnknownFamilyIsAConfigError) {
  EXPECT_THROW(build_family_graph("imagenet", 1), ConfigError);
}

TEST(Families, SplitHoldsOutEveryFourthSeed) {
  const FamilySplit split = family_split(32);
  EXPECT_EQ(split.train.size(), 24u);
  EXPECT_EQ(split.test.size(), 8u);
  for (std::uint64_t seed : split.test) EXPECT_EQ(seed % 4, 0u);
  for (std::uint64_t seed : split.train) EXPECT_NE(seed % 4, 0u);
  EXPECT_EQ(split.test.front(), 4u);
  EXPECT_EQ(split.train.front(), 1u);
  const FamilySplit again = family_split(32);
  EXPECT_EQ(split.train, again.train);
  EXPECT_EQ(split.test, again.test);
  EXPECT_TRUE(family_split(0).train.empty());
}

// ---- Loading.

TEST(Load, ZooAndFamilySpecs) {
  const OpGraph zoo = load_graph("zoo:resnet50");
  EXPECT_EQ(zoo.source(), "zoo:resnet50");
  const OpGraph member = load_graph("family:cifar10:3");
  EXPECT_EQ(member.name(), "cifar10-3");
  EXPECT_EQ(member.source(), "family:cifar10:3");
  expect_identical(member, build_family_graph("cifar10", 3));
}

TEST(Load, BadSpecsThrowWorkbenchErrors) {
  EXPECT_THROW(load_graph("zoo:nope"), ConfigError);
  EXPECT_THROW(load_graph("family:ptb"), ConfigError);
  EXPECT_THROW(load_graph("family:ptb:x1"), ConfigError);
  EXPECT_THROW(load_graph("family:nope:1"), ConfigError);
  EXPECT_THROW(load_graph("/nonexistent/graph.json"), Error);
}

}  // namespace
}  // namespace aware
