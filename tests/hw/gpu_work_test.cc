// The CUDA backend's real work, planned without a GPU (hw/gpu_work.h): which
// kernel each op runs, on which of its tensors, and what scratch each device
// needs; hand-built ops first, then every zoo model's coverage.
#include <gtest/gtest.h>

#include <map>

#include "core/errors.h"
#include "datasets/zoo.h"
#include "hw/gpu_work.h"
#include "hw/step_plan.h"
#include "test_graphs.h"

namespace aware {
namespace {

using testing::star_cluster;
using testing::timed_op;

Op typed_op(const std::string& name, const std::string& type, double flops, double bytes,
            std::vector<double> outputs, std::map<std::string, double> shape = {}) {
  Op op;
  op.name = name;
  op.type = type;
  op.flops = flops;
  op.bytes_accessed = bytes;
  op.output_bytes = std::move(outputs);
  op.shape = std::move(shape);
  return op;
}

// x (4x2) and w (2x3) feed mm = x w (4x3); relu(mm); sum of mm's rows into 3
// elements; an Adam update of 6 parameters from a 6-element gradient.
OpGraph small_graph() {
  OpGraph g("small");
  const int x = g.add_op(typed_op("x", "Placeholder", 0, 0, {4 * 2 * 4}));
  const int w = g.add_op(typed_op("w", "VariableV2", 0, 0, {2 * 3 * 4}));
  const int mm = g.add_op(typed_op("mm", "MatMul", 2.0 * 4 * 3 * 2, 3 * 48, {4 * 3 * 4},
                                   {{"M", 4}, {"N", 3}, {"K", 2}}));
  const int relu = g.add_op(typed_op("relu", "Relu", 12, 96, {4 * 3 * 4}));
  const int sum = g.add_op(typed_op("sum", "Sum", 12, 60, {3 * 4}));
  const int grad = g.add_op(typed_op("grad", "Mul", 6, 48, {6 * 4}));
  const int adam = g.add_op(typed_op("adam", "ApplyAdam", 60, 120, {0}, {{"params", 6}}));
  const int profiled = g.add_op(timed_op("profiled", 25));
  g.add_edge(x, mm);
  g.add_edge(w, mm);
  g.add_edge(mm, relu);
  g.add_edge(mm, sum);
  g.add_edge(relu, grad);
  g.add_edge(grad, adam);
  g.add_edge(sum, profiled);
  return g;
}

TEST(GpuWork, SmallGraphKernelsOperandsAndScratch) {
  const OpGraph g = small_graph();
  const StepPlan plan = make_step_plan(g, star_cluster(1), Placement(std::vector<int>(8, 0)));
  ASSERT_TRUE(plan.feasible) << plan.infeasible_reason;
  const GpuWorkPlan work = plan_gpu_work(plan, GpuPrecision::kBf16);

  // mm: its own GEMM on x and w into its output; no scratch.
  const GpuOpWork& mm = work.ops[2];
  EXPECT_EQ(mm.kind, GpuWorkKind::kGemm);
  EXPECT_EQ(mm.category, "gemm");
  EXPECT_EQ(mm.gemm.m, 4);
  EXPECT_EQ(mm.gemm.n, 3);
  EXPECT_EQ(mm.gemm.k, 2);
  EXPECT_EQ(mm.batch, 1);
  EXPECT_EQ(mm.reps, 1);
  EXPECT_EQ(mm.a_buffer, plan.ops[0].outputs[0]);
  EXPECT_EQ(mm.b_buffer, plan.ops[1].outputs[0]);
  EXPECT_EQ(mm.c_buffer, plan.ops[2].outputs[0]);
  EXPECT_EQ(work.scratch_a[0], 0);
  EXPECT_EQ(work.scratch_b[0], 0);
  EXPECT_EQ(work.scratch_c[0], 0);

  // relu: 12 elements in, 12 out: elementwise.
  const GpuOpWork& relu = work.ops[3];
  EXPECT_EQ(relu.kind, GpuWorkKind::kTraffic);
  EXPECT_EQ(relu.category, "elementwise");
  EXPECT_FALSE(relu.fold);
  ASSERT_EQ(relu.reads.size(), 1u);
  EXPECT_EQ(relu.reads[0].buffer, plan.ops[2].outputs[0]);
  EXPECT_EQ(relu.reads[0].elements, 12);
  ASSERT_EQ(relu.writes.size(), 1u);
  EXPECT_EQ(relu.writes[0].elements, 12);

  // sum: 12 elements folded into 3: a reduction with a 3-float accumulator.
  const GpuOpWork& sum = work.ops[4];
  EXPECT_EQ(sum.category, "reduction");
  EXPECT_TRUE(sum.fold);
  EXPECT_EQ(sum.writes[0].elements, 3);
  // grad (Mul) folds relu's 12 elements into its 6: a reduction too, the larger.
  EXPECT_EQ(work.ops[5].category, "reduction");
  EXPECT_EQ(work.fold_floats[0], 6);

  // adam: reads its 6-element gradient, updates 6 parameters and 2 x 6 slots held privately.
  const GpuOpWork& adam = work.ops[6];
  EXPECT_EQ(adam.kind, GpuWorkKind::kUpdate);
  EXPECT_EQ(adam.slots, 2);
  EXPECT_EQ(adam.private_elements, 18);
  ASSERT_EQ(adam.reads.size(), 1u);
  EXPECT_EQ(adam.reads[0].buffer, plan.ops[5].outputs[0]);
  EXPECT_EQ(adam.reads[0].elements, 6);
  EXPECT_EQ(work.private_elements[0], 18);

  // The spin keeps the synthetic work; the variables and placeholder run nothing.
  EXPECT_EQ(work.ops[7].kind, GpuWorkKind::kSynthetic);
  EXPECT_FALSE(work.real[7]);
  EXPECT_TRUE(work.real[0]);
  EXPECT_EQ(work.coverage.ops, 8);
  EXPECT_EQ(work.coverage.real_ops, 7);
  ASSERT_EQ(work.coverage.synthetic_types.size(), 1u);
  EXPECT_EQ(work.coverage.synthetic_types[0], timed_op("p", 1).type + " x1");
  EXPECT_DOUBLE_EQ(work.coverage.real_flops, work.coverage.flops);
  // Bytes read in BF16: mm's A and B (8 + 6), relu 12, sum 12, grad 12, adam
  // 6 + 18 (its parameter and slots); all but adam's private 18 from in-edges.
  EXPECT_DOUBLE_EQ(work.coverage.input_bytes, 2.0 * (14 + 12 + 12 + 12 + 24));
  EXPECT_DOUBLE_EQ(work.coverage.input_bytes_from_edges, 2.0 * (14 + 12 + 12 + 12 + 6));
}

TEST(GpuWork, GemmOperandsTooSmallComeFromScratchAndCopiesFeedTheConsumer) {
  const OpGraph g = small_graph();
  // mm on device 1: x and w arrive by copies into device 1's buffers.
  const StepPlan plan = make_step_plan(g, star_cluster(2), Placement({0, 0, 1, 1, 1, 1, 1, 1}));
  const GpuWorkPlan work = plan_gpu_work(plan, GpuPrecision::kTf32);
  const GpuOpWork& mm = work.ops[2];
  ASSERT_GE(mm.a_buffer, 0);
  EXPECT_EQ(plan.buffers[mm.a_buffer].device, 1);
  EXPECT_EQ(plan.buffers[mm.b_buffer].device, 1);

  // A MatMul whose first input is smaller than its A: A from scratch, B from
  // the next input that holds K x N.
  OpGraph h("scratch");
  const int small = h.add_op(typed_op("small", "Placeholder", 0, 0, {4}));
  const int b = h.add_op(typed_op("b", "VariableV2", 0, 0, {8 * 16 * 4}));
  const int mm2 = h.add_op(typed_op("mm", "MatMul", 2.0 * 32 * 16 * 8, 1e4, {4},
                                    {{"M", 32}, {"N", 16}, {"K", 8}}));
  h.add_edge(small, mm2);
  h.add_edge(b, mm2);
  const StepPlan plan2 = make_step_plan(h, star_cluster(1), Placement({0, 0, 0}));
  const GpuWorkPlan work2 = plan_gpu_work(plan2, GpuPrecision::kBf16);
  EXPECT_EQ(work2.ops[2].a_buffer, -1);
  EXPECT_EQ(work2.ops[2].b_buffer, plan2.ops[1].outputs[0]);
  EXPECT_EQ(work2.ops[2].c_buffer, -1);  // a 1-element output cannot hold 32 x 16
  EXPECT_EQ(work2.scratch_a[0], 32 * 8);
  EXPECT_EQ(work2.scratch_b[0], 0);
  EXPECT_EQ(work2.scratch_c[0], 32 * 16);
}

TEST(GpuWork, BatchMatMulIsStridedAndConvolutionIsItsImplicitGemm) {
  OpGraph g("batched");
  // 6 independent 5x7 times 7x3 products.
  g.add_op(typed_op("scores", "BatchMatMul", 2.0 * 6 * 5 * 3 * 7, 1e3, {6 * 5 * 3 * 4},
                    {{"batch", 6}, {"M", 5}, {"N", 3}, {"K", 7}}));
  // Batch 2, 3 channels in, 8 filters of 3x3, 4x4 output.
  g.add_op(typed_op("conv", "Conv2D", 2.0 * (2 * 4 * 4) * 8 * 27, 1e3, {2 * 8 * 4 * 4 * 4},
                    {{"batch", 2}, {"in_channels", 3}, {"filters", 8}, {"kernel_h", 3}, {"kernel_w", 3},
                     {"out_height", 4}, {"out_width", 4}}));
  const StepPlan plan = make_step_plan(g, star_cluster(1), Placement({0, 0}));
  const GpuWorkPlan work = plan_gpu_work(plan, GpuPrecision::kBf16);
  EXPECT_EQ(work.ops[0].batch, 6);
  EXPECT_EQ(work.ops[0].gemm.m, 5);
  EXPECT_EQ(work.ops[0].c_buffer, plan.ops[0].outputs[0]);  // 6 x 5 x 3 elements fit
  // The convolution has no inputs here: its A (32 x 27) from scratch, the larger.
  EXPECT_EQ(work.scratch_a[0], std::max<std::int64_t>(6 * 5 * 7, 32 * 27));
  EXPECT_EQ(work.scratch_b[0], std::max<std::int64_t>(6 * 7 * 3, 8 * 27));
  EXPECT_EQ(work.ops[1].category, "conv-gemm");
  EXPECT_EQ(work.ops[1].batch, 1);
  EXPECT_EQ(work.ops[1].gemm.m, 32);
  EXPECT_EQ(work.ops[1].gemm.k, 27);
  ASSERT_EQ(work.categories.size(), 2u);
}

TEST(GpuWork, DepthwiseConvolutionRunsItsWindowOnItsTensors) {
  // Batch 2, 4 channels, 6x6 input, 3x3 taps, stride 2, 3x3 output: padding 1.
  const std::map<std::string, double> shape = {
      {"batch", 2}, {"in_channels", 4}, {"height", 6}, {"width", 6}, {"filters", 4}, {"kernel_h", 3},
      {"kernel_w", 3}, {"stride", 2}, {"out_height", 3}, {"out_width", 3}};
  const double flops = 2.0 * (2 * 4 * 3 * 3) * 9;
  OpGraph g("depthwise");
  const int x = g.add_op(typed_op("x", "Placeholder", 0, 0, {2 * 4 * 6 * 6 * 4}));
  const int f = g.add_op(typed_op("f", "VariableV2", 0, 0, {4 * 9 * 4}));
  const int y = g.add_op(typed_op("y", "DepthwiseConv2dNative", flops, 1e3, {2 * 4 * 3 * 3 * 4}, shape));
  const int dx = g.add_op(typed_op("dx", "DepthwiseConv2dNativeBackpropInput", flops, 1e3, {2 * 4 * 6 * 6 * 4}, shape));
  const int df = g.add_op(typed_op("df", "DepthwiseConv2dNativeBackpropFilter", flops, 1e3, {4 * 9 * 4}, shape));
  g.add_edge(x, y);
  g.add_edge(f, y);
  g.add_edge(y, dx);  // stands for dy
  g.add_edge(f, dx);
  g.add_edge(x, df);
  g.add_edge(y, df);
  const StepPlan plan = make_step_plan(g, star_cluster(1), Placement({0, 0, 0, 0, 0}));
  const GpuWorkPlan work = plan_gpu_work(plan, GpuPrecision::kBf16);
  const GpuOpWork& fwd = work.ops[y];
  EXPECT_EQ(fwd.kind, GpuWorkKind::kDepthwise);
  // (3 - 1) * 2 + 3 - 6 = 1 row of padding in all: none before (halved down),
  // the one after comes from the window's bounds check (TensorFlow's SAME).
  EXPECT_EQ(fwd.depthwise.pad_h, 0);
  EXPECT_EQ(fwd.depthwise.pad_w, 0);
  EXPECT_DOUBLE_EQ(fwd.depthwise.flops(), flops);
  EXPECT_EQ(fwd.a_buffer, plan.ops[x].outputs[0]);
  EXPECT_EQ(fwd.b_buffer, plan.ops[f].outputs[0]);
  EXPECT_EQ(fwd.c_buffer, plan.ops[y].outputs[0]);
  EXPECT_EQ(work.ops[dx].depthwise.role, DepthwiseShape::kInputGrad);
  EXPECT_EQ(work.ops[dx].a_buffer, plan.ops[y].outputs[0]);  // dy
  EXPECT_EQ(work.ops[dx].b_buffer, plan.ops[f].outputs[0]);
  EXPECT_EQ(work.ops[dx].c_buffer, plan.ops[dx].outputs[0]);
  EXPECT_EQ(work.ops[df].depthwise.role, DepthwiseShape::kFilterGrad);
  EXPECT_EQ(work.ops[df].a_buffer, plan.ops[x].outputs[0]);
  EXPECT_EQ(work.ops[df].b_buffer, plan.ops[y].outputs[0]);  // dy
  EXPECT_EQ(work.ops[df].c_buffer, plan.ops[df].outputs[0]);
  EXPECT_EQ(work.scratch_a[0] + work.scratch_b[0] + work.scratch_c[0], 0);
  EXPECT_DOUBLE_EQ(work.coverage.real_flops, 3 * flops);
}

TEST(GpuWork, PrecisionNamesParseAndBadOnesNameTheOwner) {
  EXPECT_EQ(parse_gpu_precision("bf16", "x"), GpuPrecision::kBf16);
  EXPECT_EQ(parse_gpu_precision("tf32", "x"), GpuPrecision::kTf32);
  EXPECT_EQ(parse_gpu_precision("fp32", "x"), GpuPrecision::kFp32);
  EXPECT_EQ(gpu_element_bytes(GpuPrecision::kBf16), 2);
  EXPECT_EQ(gpu_element_bytes(GpuPrecision::kTf32), 4);
  try {
    parse_gpu_precision("fp16", "evaluator 'cuda'");
    FAIL() << "fp16 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("evaluator 'cuda': precision must be bf16, tf32 or fp32"),
              std::string::npos)
        << e.what();
  }
}

// Every zoo model on two devices (round robin): each operand a GEMM takes from a
// buffer is on the op's device and holds what it takes; every traffic read and
// write is the op's own tensor; at least 95% of the FLOPs run real work.
TEST(GpuWork, ZooModelsRunTheirFlopsOnRealWork) {
  for (const std::string& name : zoo_model_names()) {
    SCOPED_TRACE(name);
    ModelOptions options;
    options.batch = 2;
    const OpGraph g = build_zoo_model(name, options);
    std::vector<int> devices(g.num_ops());
    for (int i = 0; i < g.num_ops(); ++i) devices[i] = i % 2;
    StepPlanOptions plan_options;
    plan_options.max_kernel_bytes = 1e12;
    const StepPlan plan = make_step_plan(g, star_cluster(2, 1e9, 1, 1e15), Placement(devices), plan_options);
    const GpuWorkPlan work = plan_gpu_work(plan, GpuPrecision::kBf16);
    for (const PlannedOp& p : plan.ops) {
      const GpuOpWork& w = work.ops[p.op];
      if (w.kind == GpuWorkKind::kGemm) {
        const std::int64_t need[3] = {w.batch * w.gemm.m * w.gemm.k, w.batch * w.gemm.k * w.gemm.n,
                                      w.batch * w.gemm.m * w.gemm.n};
        const int buffers[3] = {w.a_buffer, w.b_buffer, w.c_buffer};
        for (int i = 0; i < 3; ++i) {
          if (buffers[i] < 0) continue;
          EXPECT_EQ(plan.buffers[buffers[i]].device, p.device) << p.name;
          EXPECT_GE(gpu_buffer_elements(plan, buffers[i]), need[i]) << p.name;
        }
        // Its GEMMs are the op's FLOPs within the plan's rounding of repeats.
        const double gemm_flops = w.reps * w.gemm.flops() * w.batch;
        EXPECT_NEAR(gemm_flops / g.op(p.op).flops, 1.0, 0.5) << p.name;
      } else if (w.kind == GpuWorkKind::kTraffic) {
        for (const GpuTensor& t : w.reads) {
          EXPECT_EQ(plan.buffers[t.buffer].device, p.device) << p.name;
          EXPECT_EQ(std::count(p.inputs.begin(), p.inputs.end(), t.buffer), 1) << p.name;
        }
        for (const GpuTensor& t : w.writes)
          EXPECT_EQ(std::count(p.outputs.begin(), p.outputs.end(), t.buffer), 1) << p.name;
      }
    }
    const double share = work.coverage.flops > 0 ? work.coverage.real_flops / work.coverage.flops : 1;
    EXPECT_GE(share, 0.95) << "synthetic: " << (work.coverage.synthetic_types.empty() ? "" : work.coverage.synthetic_types[0]);
  }
}

}  // namespace
}  // namespace aware
