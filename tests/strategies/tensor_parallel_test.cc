// tp:N (strategies/tensor_parallel.cc) on small language models: the four
// all-reduces per layer and the vocabulary split's three, the parameters each rank holds counted by hand, the
// split work, the refusals, and a simulated step against one device.
#include <gtest/gtest.h>

#include <string>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "datasets/load.h"
#include "strategies/strategy.h"

namespace aware {
namespace {

const char* kTiny = "zoo:gpt:layers=2,hidden=64,heads=4,ffn=256,vocab=500,seq_len=16,batch=4";

double forward_params(const OpGraph& g, const std::string& prefix) {
  double bytes = 0;
  for (const Op& op : g.ops())
    if (op.phase == Phase::kForward && op.name.rfind(prefix, 0) == 0) bytes += op.param_bytes;
  return bytes / 4;
}

int count_named(const OpGraph& g, const std::string& tail) {
  int n = 0;
  for (const Op& op : g.ops())
    if (op.name.size() >= tail.size() && op.name.compare(op.name.size() - tail.size(), tail.size(), tail) == 0) ++n;
  return n;
}

TEST(TensorParallel, FourAllReducesPerLayerAndHandCountedShards) {
  const OpGraph g = load_graph(kTiny);
  const Cluster c = load_cluster("preset:dgx-a100");
  const StrategyResult r = apply_strategy(g, c, "tp:2");
  EXPECT_EQ(r.spec, "tp:2");
  EXPECT_EQ(r.devices_used, 2);
  // Two layers: attention output and fc2 forward, the two input gradients backward
  // (8); the vocabulary split adds the token lookup's and the per-token losses'
  // in the forward pass and the output layer's input gradient in the backward (3).
  EXPECT_EQ(count_named(r.graph, "/sum/t0"), 11);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("6 all-reduces in the forward pass and 5 in the backward pass"), std::string::npos) << r.notes[0];
  // The embedding's all-reduce carries b*s*h floats, the loss's b*s.
  const auto out_bytes = [&](const std::string& name) {
    const int id = r.graph.find(name);
    return id < 0 ? -1.0 : r.graph.op(id).output_bytes[0];
  };
  EXPECT_DOUBLE_EQ(out_bytes("tp/allreduce/embedding/token_lookup/sum/t0"), 4.0 * 16 * 64 * 4);
  EXPECT_DOUBLE_EQ(out_bytes("tp/allreduce/head/xent/sum/t1"), 4.0 * 16 * 4);
  EXPECT_DOUBLE_EQ(out_bytes("tp/allreduce/head/logits/grad_input/sum/t0"), 4.0 * 16 * 64 * 4);
  // Per layer the split weights are q, k, v, o (4 x 64^2), the q, k, v biases (3 x 64),
  // fc1 and fc2 (2 x 64 x 256) and fc1's bias (256): 49,600; with the token table
  // (500 x 64, tied to the output layer) each rank holds half.
  const double total = forward_params(g, "");
  EXPECT_DOUBLE_EQ(forward_params(r.graph, "t0/"), total - (2 * 49600 + 500 * 64) / 2.0);
  // The output layer's logits and the cross-entropy's work are halved too.
  EXPECT_DOUBLE_EQ(r.graph.op(r.graph.find("t1/head/logits")).flops, g.op(g.find("head/logits")).flops / 2);
  EXPECT_DOUBLE_EQ(r.graph.op(r.graph.find("t0/head/logits")).output_bytes[0],
                   g.op(g.find("head/logits")).output_bytes[0] / 2);
  EXPECT_DOUBLE_EQ(forward_params(r.graph, "t1/"), forward_params(r.graph, "t0/"));
  // A column projection's work is halved on each rank; a norm's is whole.
  const auto flops_of = [](const OpGraph& graph, const std::string& name) {
    return graph.op(graph.find(name)).flops;
  };
  EXPECT_DOUBLE_EQ(flops_of(r.graph, "t0/layer0/attention/query"), flops_of(g, "layer0/attention/query") / 2);
  EXPECT_DOUBLE_EQ(flops_of(r.graph, "t1/layer1/mlp/ffn/fc2"), flops_of(g, "layer1/mlp/ffn/fc2") / 2);
  EXPECT_DOUBLE_EQ(flops_of(r.graph, "t0/layer0/attention/norm"), flops_of(g, "layer0/attention/norm"));
  // Every op of rank r on device r.
  for (int id = 0; id < r.graph.num_ops(); ++id) {
    const std::string& name = r.graph.op(id).name;
    if (name.rfind("t1/", 0) == 0) EXPECT_EQ(r.placement[id], 1) << name;
  }
}

// Sequence parallelism (Korthikanti et al. 2022) on two layers. Reduce-scatters: 2
// per layer each way (after the row-parallel projections; the column projections'
// input gradients), 8. All-gathers: 5 forward (each layer's two norm outputs into
// the column projections, the last output into the replicated final norm) and 9
// backward (the four norm outputs again for the weight gradients, three residual
// gradients into the row projections' gradients (the last layer's comes whole from
// the final norm), the last output for the final norm's gradient, the first layer's
// input gradient into the replicated embedding), 14. The norms' and the row-parallel
// biases' parameter gradients, partial over the sequence, are all-reduced: 8, all
// backward, and the output layer's input gradient (the vocabulary split) 1 more;
// the forward pass keeps the vocabulary split's two (the token lookup's, the
// per-token losses'), outside the layers. The norms hold half the sequence.
TEST(TensorParallel, SequenceParallelSplitsTheNormsAndTradesAllReduces) {
  const OpGraph g = load_graph(kTiny);
  const Cluster c = load_cluster("preset:dgx-a100");
  const StrategyResult r = apply_strategy(g, c, "tp:2,sp=on");
  EXPECT_EQ(r.spec, "tp:2,sp=on");
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("8 reduce-scatters and 14 all-gathers"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes[0].find("2 all-reduces in the forward pass and 9 in the backward pass"), std::string::npos)
      << r.notes[0];
  const auto out_bytes = [](const OpGraph& graph, const std::string& name) {
    return graph.op(graph.find(name)).output_bytes[0];
  };
  EXPECT_DOUBLE_EQ(out_bytes(r.graph, "t0/layer0/attention/norm"), out_bytes(g, "layer0/attention/norm") / 2);
  // The activations' traffic is the all-reduces' (a reduce-scatter plus an all-gather
  // each) plus the backward re-gathers: more bytes than tp alone.
  auto ev = EvaluatorRegistry::instance().create("analytic");
  const StepResult with_sp = ev->evaluate(r.graph, c, r.placement);
  const StrategyResult plain = apply_strategy(g, c, "tp:2");
  const StepResult without = ev->evaluate(plain.graph, c, plain.placement);
  EXPECT_TRUE(with_sp.feasible);
  EXPECT_GT(with_sp.bytes_moved, without.bytes_moved);
}

TEST(TensorParallel, RefusesWhatItCannotSplit) {
  const Cluster c = load_cluster("preset:k40x2");
  EXPECT_THROW(apply_strategy(load_graph("zoo:resnet50:batch=4,image_size=32"), c, "tp:2"), ConfigError);
  EXPECT_THROW(apply_strategy(load_graph(kTiny), c, "tp:4"), ConfigError);
  EXPECT_THROW(check_strategy_spec("tp:0"), ConfigError);
  EXPECT_THROW(check_strategy_spec("tp:two"), ConfigError);
  EXPECT_THROW(check_strategy_spec("tp:2,sp=maybe"), ConfigError);
}

TEST(TensorParallel, SplittingABigEnoughModelOnNvSwitchBeatsOneDevice) {
  // hidden 2048, 2048 tokens: each layer's GEMMs take milliseconds on an A100, its
  // all-reduces of 16 MB tens of microseconds at 300 GB/s.
  const OpGraph g = load_graph("zoo:gpt:layers=2,hidden=2048,heads=16,vocab=1000,seq_len=512,batch=4");
  const Cluster c = load_cluster("preset:dgx-a100");
  auto ev = EvaluatorRegistry::instance().create("analytic");
  const double one = ev->evaluate(g, c, single_device_placement(g, 0)).step_time_us;
  const StrategyResult t2 = apply_strategy(g, c, "tp:2");
  const StrategyResult t4 = apply_strategy(g, c, "tp:4");
  const double s2 = ev->evaluate(t2.graph, c, t2.placement).step_time_us;
  const double s4 = ev->evaluate(t4.graph, c, t4.placement).step_time_us;
  EXPECT_LT(s2, one);
  EXPECT_LT(s4, s2);
  EXPECT_GT(s2, one / 2);  // replicated work and the all-reduces: less than a 2x speed-up
}

}  // namespace
}  // namespace aware
