// PyTorch's execution-graph JSON (datasets/pytorch_eg.h) on the committed fixture,
// one training step of a two-layer MLP that Debian's python3-torch 1.13 wrote
// (tests/fixtures/pytorch-eg/make_mlp_eg.py), and on bad files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "datasets/pytorch_eg.h"

namespace aware {
namespace {

const std::string kFixture = std::string(AWARE_SOURCE_DIR) + "/tests/fixtures/pytorch-eg/mlp-eg.json";

TEST(PytorchExecutionGraph, ReadsTheMlpStep) {
  const ExecutionGraphImport eg = read_pytorch_execution_graph(kFixture);
  const OpGraph& g = eg.graph;
  EXPECT_EQ(eg.schema.rfind("1.0.", 0), 0u) << eg.schema;
  int forward = 0, backward = 0, update = 0, linear = 0;
  for (const Op& op : g.ops()) {
    forward += op.phase == Phase::kForward;
    backward += op.phase == Phase::kBackward;
    update += op.phase == Phase::kUpdate;
    if (op.type == "linear") {
      ++linear;
      // x[8,16] by W[32,16] then h[8,32] by W[4,32]: 2*8*16*32 and 2*8*32*4 FLOPs.
      EXPECT_TRUE(op.flops == 2.0 * 8 * 16 * 32 || op.flops == 2.0 * 8 * 32 * 4) << op.flops;
    }
  }
  EXPECT_EQ(linear, 2);
  EXPECT_GT(forward, 0);
  EXPECT_GT(backward, 0);
  EXPECT_GT(update, 0);
  // The first linear's output (8x32 floats, 1,024 bytes) feeds the relu.
  const int relu = [&] {
    for (int i = 0; i < g.num_ops(); ++i)
      if (g.op(i).type == "relu") return i;
    return -1;
  }();
  ASSERT_GE(relu, 0);
  ASSERT_EQ(g.in_edges(relu).size(), 1u);
  const Edge& in = g.edge(g.in_edges(relu)[0]);
  EXPECT_EQ(g.op(in.src).type, "linear");
  EXPECT_EQ(in.bytes, 8 * 32 * 4);
  // Forward before backward before update along every path: the loss reaches the update.
  const std::vector<int> order = topological_order(g);
  EXPECT_EQ(static_cast<int>(order.size()), g.num_ops());
}

TEST(PytorchExecutionGraph, BadFilesAreOneLine) {
  const std::string dir = ::testing::TempDir();
  const auto refused = [&](const std::string& name, const std::string& text, const std::string& words) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    try {
      read_pytorch_execution_graph(path);
      ADD_FAILURE() << name << " was accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(path), std::string::npos) << m;
      EXPECT_NE(m.find(words), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  };
  refused("eg-nonodes.json", R"({"schema": "1.0.1"})", "not a PyTorch execution graph");
  refused("eg-noid.json", R"({"schema": "1.0.1", "nodes": [{"name": "x", "parent": 1}]})", "no \"id\" field");
  refused("eg-empty.json", R"({"schema": "1.0.1", "nodes": [{"name": "x", "id": 1, "parent": 1}]})", "no operator calls");
  refused("eg-twice.json",
          R"({"schema": "1.0.1", "nodes": [{"name": "x", "id": 1, "parent": 1}, {"name": "y", "id": 1, "parent": 1}]})",
          "a second node with this id");
}

}  // namespace
}  // namespace aware
