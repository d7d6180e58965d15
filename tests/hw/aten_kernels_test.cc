// ATen's kernels for the cpu executor (hw/op_kernels.h, hw/aten_kernels.cc):
// hand-computed cases first (each kernel reads the buffers its in-edges fill and
// writes its output buffer: a GEMM, its weight gradient, a ReLU, a sum of three,
// a concatenation, an SGD update), then the cpu evaluator on small zoo models
// (real kernels cover the FLOPs; each device's peak is measured and counts the
// kernels' temporaries).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "builtins/builtins.h"
#include "core/evaluator.h"
#include "datasets/load.h"
#include "hw/aten_allocator.h"
#include "hw/aten_kernels.h"
#include "hw/cpu_backend.h"
#include "hw/executor.h"
#include "hw/op_kernels.h"
#include "test_graphs.h"

namespace aware {
namespace {

Op typed(const std::string& name, const std::string& type, double out_floats, std::map<std::string, double> shape = {}) {
  Op op;
  op.name = name;
  op.type = type;
  op.flops = type == "Placeholder" || type == "VariableV2" ? 0 : 1;
  op.output_bytes = {4 * out_floats};
  op.shape = std::move(shape);
  return op;
}

// Plans `graph` on one device, gives every buffer real memory, prepares the
// kernels and hands back each buffer as floats.
struct Harness {
  OpGraph graph;
  StepPlan plan;
  std::vector<std::vector<float>> memory;
  std::unique_ptr<OpKernels> kernels;

  void prepare() {
    register_aten_kernels();
    const Cluster cluster = testing::star_cluster(1);
    plan = make_step_plan(graph, cluster, Placement(std::vector<int>(graph.num_ops(), 0)));
    std::vector<void*> addresses;
    for (const PlannedBuffer& b : plan.buffers) {
      memory.emplace_back(static_cast<size_t>(b.bytes / 4), 0.0f);
      addresses.push_back(memory.back().data());
    }
    kernels = make_cpu_kernels();
    ASSERT_NE(kernels, nullptr);
    kernels->prepare(plan, addresses);
    kernels->bind_thread(0);
  }
  std::vector<float>& output(const std::string& op) { return memory[plan.ops[graph.find(op)].outputs[0]]; }
  void run(const std::string& op) {
    ASSERT_TRUE(kernels->has(graph.find(op))) << op;
    kernels->run(graph.find(op));
  }
};

TEST(AtenKernels, EachKernelReadsItsInputsAndWritesItsOutput) {
  Harness h;
  OpGraph& g = h.graph;
  const int a = g.add_op(typed("a", "Placeholder", 6));    // A [2, 3]
  const int w = g.add_op(typed("w", "VariableV2", 6));     // B [3, 2]
  const int mm = g.add_op(typed("mm", "MatMul", 4, {{"M", 2}, {"N", 2}, {"K", 3}}));
  g.add_edge(a, mm);
  g.add_edge(w, mm);
  const int dc = g.add_op(typed("dc", "Placeholder", 4));  // dC [2, 2]
  const int gw = g.add_op(typed("gw", "MatMulGradWeight", 6, {{"M", 2}, {"N", 2}, {"K", 3}}));
  g.add_edge(a, gw);
  g.add_edge(dc, gw);
  const int relu = g.add_op(typed("relu", "Relu", 4, {{"elements", 4}}));
  g.add_edge(mm, relu);
  const int sum = g.add_op(typed("sum", "AddN", 4, {{"elements", 4}}));
  g.add_edge(mm, sum);
  g.add_edge(relu, sum);
  g.add_edge(dc, sum);
  const int cat = g.add_op(typed("cat", "ConcatV2", 10, {{"inputs", 2}, {"axis", 0}}));
  g.add_edge(a, cat);
  g.add_edge(dc, cat);
  Op update = typed("update", "ApplyGradientDescent", 0, {{"params", 6}});
  update.output_bytes = {0};
  const int up = g.add_op(update);
  g.add_edge(w, up);
  g.add_edge(gw, up);
  h.prepare();
  if (HasFatalFailure()) return;

  h.output("a") = {1, 2, 3, 4, 5, 6};
  h.output("w") = {1, -1, 0, 2, -2, 0};
  h.output("dc") = {1, 0, 0, 1};
  h.run("mm");  // [[1,2,3],[4,5,6]] x [[1,-1],[0,2],[-2,0]]
  EXPECT_EQ(h.output("mm"), (std::vector<float>{-5, 3, -8, 6}));
  h.run("gw");  // A^T dC = A^T
  EXPECT_EQ(h.output("gw"), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  h.run("relu");
  EXPECT_EQ(h.output("relu"), (std::vector<float>{0, 3, 0, 6}));
  h.run("sum");  // mm + relu + dc
  EXPECT_EQ(h.output("sum"), (std::vector<float>{-4, 6, -8, 13}));
  h.run("cat");
  EXPECT_EQ(h.output("cat"), (std::vector<float>{1, 2, 3, 4, 5, 6, 1, 0, 0, 1}));
  h.run("update");  // w -= 1e-6 * gw, in the variable's own buffer
  const std::vector<float> before = {1, -1, 0, 2, -2, 0}, grad = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(h.output("w")[i], before[i] - 1e-6f * grad[i]) << i;

  const KernelCoverage c = h.kernels->coverage();
  EXPECT_EQ(c.ops, g.num_ops());
  EXPECT_EQ(c.real_ops, g.num_ops());  // the placeholders and the variable have no work to run
  int kernels = 0;
  for (int op = 0; op < g.num_ops(); ++op) kernels += h.kernels->has(op) ? 1 : 0;
  EXPECT_EQ(kernels, 6);
  EXPECT_EQ(c.input_bytes, c.input_bytes_from_edges);  // every input from an edge
  h.kernels->release();
}

// An embedding's gradient as the graph describes it (rows x width out): the
// rows' gradients summed per distinct id, so nothing is lost or made up (the
// totals agree) and, with four rows, at most four rows are written, whatever
// the vocabulary (100,000 words here).
TEST(AtenKernels, EmbeddingGradientIsCompact) {
  Harness h;
  OpGraph& g = h.graph;
  const int grad = g.add_op(typed("grad", "Placeholder", 8));
  const int seg = g.add_op(typed("seg", "UnsortedSegmentSum", 8, {{"rows", 4}, {"vocab", 100000}, {"width", 2}}));
  g.add_edge(grad, seg);
  h.prepare();
  if (HasFatalFailure()) return;
  h.output("grad") = {1, 2, 3, 4, 5, 6, 7, 8};
  h.run("seg");
  double total = 0;
  for (float v : h.output("seg")) total += v;
  EXPECT_DOUBLE_EQ(total, 36);
  EXPECT_EQ(h.output("seg").size(), 8u);
  const KernelCoverage c = h.kernels->coverage();
  EXPECT_EQ(c.input_bytes, c.input_bytes_from_edges);  // the gradient came from its edge
  h.kernels->release();
}

TEST(AtenKernels, ConvolutionMatchesAtenOnTheSameTensors) {
  // One 3x3 convolution, stride 1, SAME: its output is what a framework computes,
  // and its input gradient has the input's shape.
  Harness h;
  OpGraph& g = h.graph;
  const std::map<std::string, double> shape = {{"batch", 1},  {"in_channels", 1}, {"height", 3},   {"width", 3},
                                                {"filters", 1}, {"kernel_h", 3},   {"kernel_w", 3}, {"stride", 1},
                                                {"out_height", 3}, {"out_width", 3}};
  const int x = g.add_op(typed("x", "Placeholder", 9));
  const int w = g.add_op(typed("w", "VariableV2", 9));
  const int conv = g.add_op(typed("conv", "Conv2D", 9, shape));
  g.add_edge(x, conv);
  g.add_edge(w, conv);
  h.prepare();
  if (HasFatalFailure()) return;
  h.output("x") = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  h.output("w") = {0, 0, 0, 0, 1, 0, 0, 0, 0};  // the identity kernel
  h.run("conv");
  EXPECT_EQ(h.output("conv"), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  h.output("w") = {1, 1, 1, 1, 1, 1, 1, 1, 1};  // sums of 3x3 windows, zero-padded
  h.run("conv");
  EXPECT_EQ(h.output("conv"), (std::vector<float>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
  h.kernels->release();
}

TEST(AtenKernels, TheCpuEvaluatorRunsZooModelsOnRealKernelsAndMeasuresTheirMemory) {
  register_builtins();
  register_aten_kernels();
  auto evaluator = EvaluatorRegistry::instance().create("cpu", {{"repeats", "1"}, {"warmup", "0"}, {"kernels", "aten"}});
  auto& hw = dynamic_cast<HardwareEvaluator&>(*evaluator);
  const Cluster cluster = testing::star_cluster(2, 1e9, 1, 8e9);
  for (const char* spec : {"resnet50:batch=1,image_size=32", "nmt2:batch=2,vocab=500,hidden=64,seq_len=4",
                           "transformer:batch=1,seq_len=16,hidden=64,layers=1,vocab=500"}) {
    SCOPED_TRACE(spec);
    const OpGraph graph = load_graph(std::string("zoo:") + spec);
    std::vector<int> split(graph.num_ops());
    for (int i = 0; i < graph.num_ops(); ++i) split[i] = i % 2;  // copies both ways
    const StepResult r = hw.evaluate(graph, cluster, Placement(split));
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    EXPECT_GT(r.step_time_us, 0);
    const Measurement& m = hw.last_measurement();
    EXPECT_EQ(m.kernels, "aten");
    EXPECT_GE(m.real_flops_share, 0.95);
    EXPECT_GT(m.real_time_share, 0.5);
    ASSERT_EQ(m.measured_peak_bytes.size(), 2u);
    for (int d = 0; d < 2; ++d) {
      EXPECT_EQ(r.peak_memory_bytes[d], m.measured_peak_bytes[d]);
      EXPECT_GT(m.measured_peak_bytes[d], 0);
    }
    bool noted = false;
    for (const std::string& note : r.notes) noted = noted || note.rfind("real kernels (aten)", 0) == 0;
    EXPECT_TRUE(noted);
  }
}

// Blocks of 1 MiB or more are kept when freed and handed to the next
// allocation of their size, so a step's large tensors (here the 2 MB gradient
// of a 2,000-row vocabulary table) do not fault their pages in again each
// step; the measured peak is of live bytes and is the same whether a block
// came from the kept ones or not.
TEST(AtenKernels, LargeBlocksAreKeptFromStepToStepAndNotCounted) {
  register_builtins();
  register_aten_kernels();
  const Cluster cluster = testing::star_cluster(1, 1e9, 1, 8e9);
  const OpGraph graph = load_graph("zoo:transformer:batch=1,seq_len=16,hidden=256,layers=1,vocab=2000");
  const Placement one(std::vector<int>(graph.num_ops(), 0));
  auto peak_of = [&](const char* repeats) {
    auto evaluator = EvaluatorRegistry::instance().create("cpu", {{"repeats", repeats}, {"warmup", "0"}, {"kernels", "aten"}});
    const StepResult r = evaluator->evaluate(graph, cluster, one);
    EXPECT_TRUE(r.feasible) << r.infeasible_reason;
    return r.peak_memory_bytes.at(0);
  };
  const long long before = cached_block_reuses();
  const double three_steps = peak_of("3");
  // Steps 2 and 3 take the blocks step 1 freed.
  EXPECT_GE(cached_block_reuses() - before, 2);
  // First come first served on one device: the same order each step, so one
  // step holds what three do at their peak; a kept block still counted as live
  // would raise the three steps' peak above the one step's.
  EXPECT_EQ(peak_of("1"), three_steps);
}

}  // namespace
}  // namespace aware
