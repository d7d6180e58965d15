// recompute=full|selective: which ops run again, what they read, when they
// run, and what that costs and saves; by hand on a one-layer step, then on the
// language models' attention and through a pipeline.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "datasets/load.h"
#include "tests/strategies/strategy_test_support.h"

namespace aware {
namespace {

using namespace strategy_tests;
using testing::timed_op;

// One layer (block "enc", layer 0) of two forward ops and a loss:
//   x, w -> a (10 us, 1 MB out) -> r (5 us, 1 KB) -> loss (1 us)
//   loss -> g (1 us, the loss gradient) ; g, a -> br (10 us) ; br, x, w -> ba (20 us; dx, dw)
//   w, ba:1 -> u (2 us)
// br reads a's output: the layer's activation, kept from forward to backward.
OpGraph one_layer() {
  OpGraph g("one-layer");
  g.set_batch(4);
  auto op = [&](const std::string& name, const std::string& type, Phase phase, double us,
                std::vector<double> out, const std::string& block = "", int layer = -1) {
    Op o = timed_op(name, us, 0);
    o.output_bytes = std::move(out);
    o.type = type;
    o.phase = phase;
    o.block = block;
    o.layer = layer;
    return g.add_op(o);
  };
  const int x = op("x", "Placeholder", Phase::kForward, 0, {1000});
  const int w = op("w", "VariableV2", Phase::kForward, 0, {1000});
  g.mutable_op(w).param_bytes = 1000;
  const int a = op("a", "MatMul", Phase::kForward, 10, {1e6}, "enc", 0);
  const int r = op("r", "Relu", Phase::kForward, 5, {1000}, "enc", 0);
  const int loss = op("loss", "Mean", Phase::kForward, 1, {4}, "loss");
  const int gl = op("g", "MeanGrad", Phase::kBackward, 1, {1000}, "loss");
  const int br = op("br", "ReluGrad", Phase::kBackward, 10, {1e6}, "enc", 0);
  const int ba = op("ba", "MatMulGrad", Phase::kBackward, 20, {1000, 1000}, "enc", 0);
  const int u = op("u", "ApplyGradientDescent", Phase::kUpdate, 2, {0});
  g.mutable_op(br).forward_of = r;
  g.mutable_op(ba).forward_of = a;
  g.mutable_op(u).forward_of = w;
  g.add_edge(x, a);
  g.add_edge(w, a);
  g.add_edge(a, r);
  g.add_edge(r, loss);
  g.add_edge(loss, gl);
  g.add_edge(gl, br);
  g.add_edge(a, br);
  g.add_edge(br, ba);
  g.add_edge(x, ba);
  g.add_edge(w, ba);
  g.add_edge(w, u);
  g.add_edge(ba, u, 1);
  g.validate();
  return g;
}

TEST(Recompute, FullRecomputesTheLayerAfterTheGradientArrives) {
  const OpGraph g = one_layer();
  const Cluster c = free_star(1);
  const StrategyResult plain = apply_strategy(g, c, "single");
  const StrategyResult full = apply_strategy(g, c, "single,recompute=full");
  EXPECT_EQ(full.spec, "single:0,recompute=full");
  // The layer's two ops run again (the loss's segment, read by its gradient, too).
  const int ra = full.graph.find("recompute/a"), rr = full.graph.find("recompute/r"),
            rl = full.graph.find("recompute/loss");
  ASSERT_GE(ra, 0);
  ASSERT_GE(rr, 0);
  ASSERT_GE(rl, 0);
  EXPECT_EQ(full.graph.num_ops(), g.num_ops() + 3);
  EXPECT_EQ(full.graph.op(ra).phase, Phase::kBackward);
  // br reads the recomputed a; recompute/a reads the kept x and w; recompute/r reads recompute/a.
  const auto reads = [&](int dst, int src) {
    for (int e : full.graph.in_edges(dst))
      if (full.graph.edge(e).src == src) return true;
    return false;
  };
  EXPECT_TRUE(reads(full.graph.find("br"), ra));
  EXPECT_FALSE(reads(full.graph.find("br"), full.graph.find("a")));
  EXPECT_TRUE(reads(ra, full.graph.find("x")));
  EXPECT_TRUE(reads(ra, full.graph.find("w")));
  EXPECT_TRUE(reads(rr, ra));
  // ... and waits for the loss gradient g, the backward op that feeds br.
  EXPECT_TRUE(reads(ra, full.graph.find("g")));
  // One device runs everything in turn: the step grows by exactly the recomputed
  // 10 + 5 + 1 us. (One layer saves no memory: a's 1 MB is back for br, the
  // peak; the language-model test below sees layers' activations go.)
  auto sim = EvaluatorRegistry::instance().create("analytic");
  Trace trace;
  const StepResult before = sim->evaluate(plain.graph, c, plain.placement);
  const StepResult after = sim->evaluate(full.graph, c, full.placement, &trace);
  EXPECT_DOUBLE_EQ(after.step_time_us, before.step_time_us + 16);
  EXPECT_GE(trace.ops[ra].start_us, trace.ops[full.graph.find("g")].end_us);
  EXPECT_DOUBLE_EQ(after.peak_memory_bytes[0], before.peak_memory_bytes[0]);
  const auto flops = [](const OpGraph& graph) {
    double sum = 0;
    for (const Op& op : graph.ops()) sum += op.flops;
    return sum;
  };
  EXPECT_DOUBLE_EQ(flops(full.graph), flops(g) + g.op(2).flops + g.op(3).flops + g.op(4).flops);
}

// A two-layer language model on one device: selective recomputation runs only
// the attention core again (three ops a layer: the scores, the softmax, the
// product with V), full runs every forward op of the layers again; the step and
// the peak memory order as Korthikanti et al. report (full slowest and smallest).
TEST(Recompute, SelectiveRunsOnlyTheAttentionCore) {
  const OpGraph g = load_graph("zoo:gpt:layers=2,hidden=256,heads=4,ffn=1024,vocab=500,seq_len=128,batch=4");
  const Cluster c = load_cluster("preset:dgx-a100");
  auto sim = EvaluatorRegistry::instance().create("analytic");
  double step[3], peak[3];
  int recomputed[3];
  const char* modes[] = {"none", "selective", "full"};
  for (int i = 0; i < 3; ++i) {
    const StrategyResult r = apply_strategy(g, c, std::string("single,recompute=") + modes[i]);
    const StepResult s = sim->evaluate(r.graph, c, r.placement);
    ASSERT_TRUE(s.feasible) << s.infeasible_reason;
    step[i] = s.step_time_us;
    peak[i] = s.peak_memory_bytes[0];
    recomputed[i] = r.graph.num_ops() - g.num_ops();
    if (i == 1) {
      for (const Op& op : r.graph.ops()) {
        if (op.name.rfind("recompute/", 0) != 0) continue;
        const std::string last = op.name.substr(op.name.rfind('/') + 1);
        EXPECT_TRUE(last == "scores" || last == "softmax" || last == "context") << op.name;
      }
    }
  }
  EXPECT_EQ(recomputed[0], 0);
  EXPECT_EQ(recomputed[1], 2 * 3);
  EXPECT_GT(recomputed[2], recomputed[1]);
  EXPECT_LT(step[0], step[1]);
  EXPECT_LT(step[1], step[2]);
  EXPECT_GT(peak[0], peak[1]);
  EXPECT_GT(peak[1], peak[2]);
}

// Through a pipeline: every micro-batch's layers recompute on their own stage,
// the rewritten step is a valid graph, and it costs more than the plain one.
TEST(Recompute, PipelineStagesRecomputeTheirOwnMicroBatches) {
  const OpGraph g = load_graph("zoo:gpt:layers=4,hidden=128,heads=4,ffn=512,vocab=500,seq_len=64,batch=8");
  const Cluster c = fast_star(2);
  const StrategyResult plain = apply_strategy(g, c, "pipeline:2,micro=4,schedule=1f1b");
  const StrategyResult full = apply_strategy(g, c, "pipeline:2,micro=4,schedule=1f1b,recompute=full");
  EXPECT_EQ(full.spec, plain.spec + ",recompute=full");
  for (int id = plain.graph.num_ops(); id < full.graph.num_ops(); ++id) {
    const Op& op = full.graph.op(id);
    ASSERT_EQ(op.name.rfind("recompute/m", 0), 0u) << "op " << op.name;
    EXPECT_EQ(full.placement[id], full.placement[op.forward_of]) << op.name;
  }
  EXPECT_GT(step_us(full, c), step_us(plain, c));
}

// With tensor parallelism a layer's forward all-reduces run again with it, as
// Megatron-LM's checkpointed forward re-runs them: two layers x two forward
// all-reduces (after the attention's and the MLP's row-parallel projections),
// each a ring step and a sum per rank. The recomputation moves their bytes again
// (b*s*h floats per all-reduce: each of 2 ranks sends half of it, twice) and the
// backward reads the recomputed sums, so the kept tensors shrink.
TEST(Recompute, FullRecomputationReRunsTheLayersTensorParallelAllReduces) {
  const OpGraph g = load_graph("zoo:gpt:layers=2,hidden=64,heads=4,ffn=256,vocab=500,seq_len=16,batch=4");
  const Cluster c = load_cluster("preset:dgx-a100");
  const StrategyResult plain = apply_strategy(g, c, "tp:2");
  const StrategyResult full = apply_strategy(g, c, "tp:2,recompute=full");
  int sums = 0;
  for (int id = plain.graph.num_ops(); id < full.graph.num_ops(); ++id) {
    const std::string& name = full.graph.op(id).name;
    if (name.rfind("recompute/tp/allreduce/layer", 0) == 0 && name.find("/sum/t") != std::string::npos) ++sums;
    // None of the backward all-reduces nor the embedding's and the loss's.
    EXPECT_EQ(name.find("grad_input"), std::string::npos) << name;
    EXPECT_EQ(name.find("recompute/tp/allreduce/embedding"), std::string::npos) << name;
    EXPECT_EQ(name.find("recompute/tp/allreduce/head"), std::string::npos) << name;
  }
  EXPECT_EQ(sums, 2 * 2 * 2);  // layers x all-reduces x ranks
  auto sim = EvaluatorRegistry::instance().create("analytic");
  const StepResult a = sim->evaluate(plain.graph, c, plain.placement);
  const StepResult b = sim->evaluate(full.graph, c, full.placement);
  // Four all-reduces of 4 x 16 x 64 floats: each rank sends its 4 KB half once in
  // the reduce-scatter and once in the all-gather, 2 ranks: 16 KB each, 64 KB in all.
  EXPECT_DOUBLE_EQ(b.bytes_moved - a.bytes_moved, 4 * 2 * 2 * (4.0 * 16 * 64 * 4 / 2));
  EXPECT_LT(b.peak_memory_bytes[0], a.peak_memory_bytes[0]);
}

TEST(Recompute, BadInputIsRefusedInOneLine) {
  const OpGraph g = one_layer();
  const Cluster c = free_star(2);
  EXPECT_NE(strategy_error(g, c, "dp:2,recompute=partial").find("recompute must be full, selective or none, got 'partial'"),
            std::string::npos);
  EXPECT_THROW(check_strategy_spec("dp:2,recompute=sometimes"), ConfigError);
  EXPECT_THROW(check_strategy_spec("mapreduce:2,recompute=full"), ConfigError);
  EXPECT_NO_THROW(check_strategy_spec("tp:2,recompute=selective"));
  EXPECT_NO_THROW(check_strategy_spec("zero:3,recompute=full"));
}

}  // namespace
}  // namespace aware
