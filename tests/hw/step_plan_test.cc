// The step plan on hand-built graphs: which kernel stands for each op, which
// copies a placement needs, what each task waits for, and the memory check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "hw/step_plan.h"
#include "test_graphs.h"

namespace aware {
namespace {

using testing::star_cluster;
using testing::timed_op;

Op work_op(const std::string& name, double flops, double bytes,
           std::map<std::string, double> shape = {}, double out = 4096) {
  Op op;
  op.name = name;
  op.type = "Test";
  op.flops = flops;
  op.bytes_accessed = bytes;
  op.output_bytes = {out};
  op.shape = std::move(shape);
  return op;
}

TEST(StepPlan, KernelsFollowShapeFlopsAndBytes) {
  OpGraph g("kernels");
  // MatMul 64x32x16 with twice the shape's FLOPs: the shape's GEMM, twice.
  g.add_op(work_op("mm", 2 * 2.0 * 64 * 32 * 16, 1e4, {{"M", 64}, {"N", 32}, {"K", 16}}));
  // Convolution: batch 2, 8x8 output, 16 filters, 3 input channels, 3x3 kernel.
  const double conv_flops = 2.0 * (2 * 8 * 8) * 16 * (3 * 3 * 3);
  g.add_op(work_op("conv", conv_flops, 1e4,
                   {{"batch", 2}, {"in_channels", 3}, {"filters", 16}, {"kernel_h", 3},
                    {"kernel_w", 3}, {"out_height", 8}, {"out_width", 8}}));
  g.add_op(work_op("dense", 2e6, 1e3));     // 2000 FLOPs/byte, no shape: GEMM of equal FLOPs
  g.add_op(work_op("relu", 1e5, 8e5));      // memory-bound: a stream over its bytes
  g.add_op(timed_op("profiled", 250));      // only a measured cost: a spin
  Op empty;
  empty.name = "noop";
  empty.output_bytes = {0};
  g.add_op(empty);
  const StepPlan plan = make_step_plan(g, star_cluster(1), Placement(std::vector<int>(6, 0)));
  ASSERT_TRUE(plan.feasible) << plan.infeasible_reason;

  EXPECT_EQ(plan.ops[0].kind, KernelKind::kGemm);
  EXPECT_EQ(plan.ops[0].gemm.m, 64);
  EXPECT_EQ(plan.ops[0].gemm.n, 32);
  EXPECT_EQ(plan.ops[0].gemm.k, 16);
  EXPECT_EQ(plan.ops[0].gemm_reps, 2);

  EXPECT_EQ(plan.ops[1].kind, KernelKind::kGemm);
  EXPECT_EQ(plan.ops[1].gemm.m, 128);  // one row per output pixel
  EXPECT_EQ(plan.ops[1].gemm.n, 16);
  EXPECT_EQ(plan.ops[1].gemm.k, 27);
  EXPECT_EQ(plan.ops[1].gemm_reps, 1);

  EXPECT_EQ(plan.ops[2].kind, KernelKind::kGemm);
  EXPECT_EQ(plan.ops[2].gemm.m, 100);  // cbrt(2e6 / 2)
  EXPECT_EQ(plan.ops[2].gemm.n, 100);

  EXPECT_EQ(plan.ops[3].kind, KernelKind::kStream);
  EXPECT_EQ(plan.ops[3].stream_bytes, 8e5);

  EXPECT_EQ(plan.ops[4].kind, KernelKind::kSpin);
  EXPECT_EQ(plan.ops[4].spin_us, 250);

  EXPECT_EQ(plan.ops[5].kind, KernelKind::kNone);
  EXPECT_EQ(plan.ops_running_nothing, 1);
  EXPECT_EQ(plan.ops_spinning, 1);
  EXPECT_EQ(plan.ops[5].outputs, std::vector<int>({-1}));  // a 0-byte output has no buffer
}

TEST(StepPlan, ChainSplitAcrossDevicesCopiesEachCrossingOnce) {
  const OpGraph g = testing::chain_graph();  // a -> b -> c, 1000-byte tensors
  const StepPlan plan = make_step_plan(g, star_cluster(2), Placement({0, 1, 0}));
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_EQ(plan.copies[0].src_op, 0);
  EXPECT_EQ(plan.copies[0].src_device, 0);
  EXPECT_EQ(plan.copies[0].dst_device, 1);
  EXPECT_EQ(plan.copies[0].bytes, 1000);
  EXPECT_EQ(plan.copies[1].src_op, 1);
  EXPECT_EQ(plan.copies[1].dst_device, 0);
  EXPECT_EQ(plan.bytes_moved, 2000);
  EXPECT_EQ(plan.ops[1].wait_copies, std::vector<int>({0}));
  EXPECT_TRUE(plan.ops[1].wait_ops.empty());
  EXPECT_EQ(plan.ops[2].wait_copies, std::vector<int>({1}));
  // Buffers: three outputs and two received copies, each on its device.
  ASSERT_EQ(plan.buffers.size(), 5u);
  EXPECT_EQ(plan.buffers[plan.copies[0].dst_buffer].device, 1);
  EXPECT_EQ(plan.buffers[plan.copies[1].dst_buffer].device, 0);
  // Device 0 runs a, then c; device 1 receives a's output, then runs b.
  ASSERT_EQ(plan.device_tasks[0].size(), 3u);  // a, copy of b's output, c
  EXPECT_FALSE(plan.device_tasks[0][0].is_copy);
  EXPECT_TRUE(plan.device_tasks[0][1].is_copy);
  EXPECT_FALSE(plan.device_tasks[0][2].is_copy);
  ASSERT_EQ(plan.device_tasks[1].size(), 2u);
  EXPECT_TRUE(plan.device_tasks[1][0].is_copy);
}

TEST(StepPlan, OneCopyServesEveryConsumerOnADevice) {
  // fork-join: src feeds x1..x4; x1, x2 on device 1 need src's output once there.
  const OpGraph g = testing::fork_join_graph();
  const StepPlan plan = make_step_plan(g, star_cluster(2), Placement({0, 1, 1, 0, 0, 0}));
  ASSERT_EQ(plan.copies.size(), 3u);  // src -> dev1, x1 -> dev0, x2 -> dev0
  EXPECT_EQ(plan.ops[1].wait_copies, plan.ops[2].wait_copies);
  EXPECT_EQ(plan.ops[5].wait_copies.size(), 2u);
  EXPECT_EQ(plan.ops[5].wait_ops, std::vector<int>({3, 4}));
}

TEST(StepPlan, IssueOrderPutsEveryWaitFirst) {
  const OpGraph g = testing::layered_dag(120, 5);
  const Cluster c = star_cluster(3);
  const StepPlan plan = make_step_plan(g, c, round_robin_placement(g, c));
  std::vector<int> op_at(g.num_ops(), -1), copy_at(plan.copies.size(), -1);
  const auto order = plan.issue_order();
  ASSERT_EQ(order.size(), g.num_ops() + plan.copies.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i)
    (order[i].second.is_copy ? copy_at : op_at)[order[i].second.index] = i;
  for (const PlannedOp& p : plan.ops) {
    for (int o : p.wait_ops) EXPECT_LT(op_at[o], op_at[p.op]);
    for (int cp : p.wait_copies) EXPECT_LT(copy_at[cp], op_at[p.op]);
  }
  for (size_t cp = 0; cp < plan.copies.size(); ++cp)
    EXPECT_LT(op_at[plan.copies[cp].src_op], copy_at[cp]);
}

TEST(StepPlan, OverMemoryIsInfeasibleBeforeAnythingRuns) {
  OpGraph g("oom");
  g.add_op(timed_op("a", 10, 1000, 600e6));
  g.add_op(timed_op("b", 10, 1000, 600e6));
  g.add_edge(0, 1);
  const StepPlan together = make_step_plan(g, star_cluster(2), Placement({0, 0}));
  EXPECT_FALSE(together.feasible);
  EXPECT_NE(together.infeasible_reason.find("out of memory on dev0"), std::string::npos)
      << together.infeasible_reason;
  const StepPlan apart = make_step_plan(g, star_cluster(2), Placement({0, 1}));
  EXPECT_TRUE(apart.feasible) << apart.infeasible_reason;
  // 600 MB of parameters, a's 1000-byte output on dev0 (1024 bytes: buffers are
  // placed at multiples of 256); b's output and the copy it reads, live together, on dev1.
  EXPECT_EQ(apart.planned_bytes[0], 600e6 + 1024);
  EXPECT_EQ(apart.planned_bytes[1], 600e6 + 2048);
}

// a -> b -> c on one device, 1000-byte tensors: a's output lives [a, b], b's
// [b, c], c's [c, c]. c's may take a's memory: 2 x 1024 bytes, not 3 x 1024;
// no wait is added: c already waits for b, a's last reader.
TEST(StepPlan, ChainReusesTheMemoryOfATensorAfterItsLastReader) {
  const OpGraph g = testing::chain_graph();
  const StepPlan plan = make_step_plan(g, star_cluster(1), Placement({0, 0, 0}));
  const int a = plan.ops[0].outputs[0], b = plan.ops[1].outputs[0], c = plan.ops[2].outputs[0];
  EXPECT_EQ(plan.buffers[a].first, 0);
  EXPECT_EQ(plan.buffers[a].last, 1);
  EXPECT_EQ(plan.buffers[b].first, 1);
  EXPECT_EQ(plan.buffers[b].last, 2);
  EXPECT_EQ(plan.buffers[c].first, 2);
  EXPECT_EQ(plan.buffers[c].last, 2);
  EXPECT_EQ(plan.arena_bytes[0], 2048);
  EXPECT_EQ(plan.buffers[c].offset, plan.buffers[a].offset);
  EXPECT_NE(plan.buffers[b].offset, plan.buffers[a].offset);
  // (b, a's last reader, is an ancestor of c: the dependency that orders them.)

  StepPlanOptions held;
  held.reuse_memory = false;
  const StepPlan whole = make_step_plan(g, star_cluster(1), Placement({0, 0, 0}), held);
  EXPECT_EQ(whole.arena_bytes[0], 3072);
  EXPECT_TRUE(whole.buffers[a].held);
}

// x -> y and an unrelated z, 1000-byte tensors; list order x, y, z (topological
// rank, smallest id first). x's output is last read by y, y's by nothing. A
// backend that runs the list in order (a CUDA stream) may give z's output the
// memory of either; one that picks ready tasks may run z before y, and neither
// y nor x is an ancestor of z: three buffers.
TEST(StepPlan, InOrderBackendsReuseByListOrderOthersByDependencies) {
  OpGraph g("branches");
  const int x = g.add_op(timed_op("x", 10, 1000));
  const int y = g.add_op(timed_op("y", 10, 1000));
  const int z = g.add_op(timed_op("z", 10, 1000));
  g.add_edge(x, y);
  StepPlanOptions ordered;
  ordered.in_order = true;
  const StepPlan in_order = make_step_plan(g, star_cluster(1), Placement({0, 0, 0}), ordered);
  const StepPlan any_order = make_step_plan(g, star_cluster(1), Placement({0, 0, 0}));
  std::vector<int> order;
  for (const PlannedTask& t : in_order.device_tasks[0]) order.push_back(t.index);
  ASSERT_EQ(order, std::vector<int>({x, y, z}));
  EXPECT_EQ(in_order.arena_bytes[0], 2048);
  const double at_z = in_order.buffers[in_order.ops[z].outputs[0]].offset;
  EXPECT_TRUE(at_z == in_order.buffers[in_order.ops[x].outputs[0]].offset ||
              at_z == in_order.buffers[in_order.ops[y].outputs[0]].offset);
  EXPECT_EQ(any_order.arena_bytes[0], 3072);
}

// Across devices: a tensor a copy reads stays for the whole step (the other
// device's progress does not bound it); the copy's own buffer lives from the
// copy to its last reader, and a later copy may reuse it.
TEST(StepPlan, TensorsCopiedAwayAreHeldAndCopiesReuseMemory) {
  const OpGraph g = testing::chain_graph();  // a -> b -> c
  const StepPlan plan = make_step_plan(g, star_cluster(2), Placement({0, 1, 0}));
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_TRUE(plan.buffers[plan.copies[0].src_buffer].held);  // a's output, read by the copy to dev1
  EXPECT_TRUE(plan.buffers[plan.copies[1].src_buffer].held);  // b's output, read by the copy to dev0
  // dev0: a's output (held), the copy of b's output [copy, c], c's output: 3 x 1024.
  EXPECT_EQ(plan.arena_bytes[0], 3072);
  const PlannedBuffer& landed = plan.buffers[plan.copies[1].dst_buffer];
  EXPECT_FALSE(landed.held);
  EXPECT_EQ(landed.last, landed.first + 1);  // the copy, then c
}

// On seeded layered graphs over three devices: two buffers whose lifetimes
// overlap never overlap in memory; every memory wait is on an earlier task of
// the same device; each arena is at least the most bytes live at one position
// and at most all of its buffers.
TEST(StepPlan, PlacedBuffersNeverOverlapWhileBothLive) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const OpGraph g = testing::layered_dag(60, seed);
    std::vector<int> devices(g.num_ops());
    for (int i = 0; i < g.num_ops(); ++i) devices[i] = static_cast<int>((i * 7 + seed) % 3);
    const StepPlan plan = make_step_plan(g, star_cluster(3), Placement(devices));
    const auto aligned = [](double bytes) { return std::ceil(bytes / kBufferAlignment) * kBufferAlignment; };
    for (size_t x = 0; x < plan.buffers.size(); ++x)
      for (size_t y = x + 1; y < plan.buffers.size(); ++y) {
        const PlannedBuffer &a = plan.buffers[x], &b = plan.buffers[y];
        if (a.device != b.device || a.bytes <= 0 || b.bytes <= 0) continue;
        const bool live_together = !(a.last < b.first || b.last < a.first);
        const bool apart = a.offset + aligned(a.bytes) <= b.offset || b.offset + aligned(b.bytes) <= a.offset;
        EXPECT_TRUE(!live_together || apart) << "buffers " << x << " and " << y;
      }
    std::vector<int> position(g.num_ops(), -1), copy_position(plan.copies.size(), -1);
    for (const auto& tasks : plan.device_tasks)
      for (size_t i = 0; i < tasks.size(); ++i)
        (tasks[i].is_copy ? copy_position : position)[tasks[i].index] = static_cast<int>(i);
    // Two buffers on one memory: one's every reader (its writer when nothing
    // reads it) is an ancestor of the other's writer.
    const Reachability reach(g);
    std::vector<int> writer(plan.buffers.size(), -1);
    std::vector<std::vector<int>> readers(plan.buffers.size());
    for (const PlannedOp& p : plan.ops) {
      for (int b : p.outputs)
        if (b >= 0) writer[b] = p.op;
      for (int b : p.inputs)
        if (b >= 0) readers[b].push_back(p.op);
    }
    for (const PlannedCopy& c : plan.copies)
      if (c.dst_buffer >= 0) writer[c.dst_buffer] = c.src_op;
    const auto ordered = [&](size_t x, size_t y) {
      const std::vector<int>& uses = readers[x].empty() ? std::vector<int>{writer[x]} : readers[x];
      for (int r : uses)
        if (!reach.reaches(r, writer[y])) return false;
      return true;
    };
    for (size_t x = 0; x < plan.buffers.size(); ++x)
      for (size_t y = x + 1; y < plan.buffers.size(); ++y) {
        const PlannedBuffer &a = plan.buffers[x], &b = plan.buffers[y];
        if (a.device != b.device || a.bytes <= 0 || b.bytes <= 0) continue;
        const bool apart = a.offset + aligned(a.bytes) <= b.offset || b.offset + aligned(b.bytes) <= a.offset;
        if (!apart) EXPECT_TRUE(ordered(x, y) || ordered(y, x)) << "buffers " << x << " and " << y;
      }
    for (int d = 0; d < 3; ++d) {
      double most_live = 0, all = 0;
      for (int pos = 0; pos <= static_cast<int>(plan.device_tasks[d].size()); ++pos) {
        double live = 0;
        for (const PlannedBuffer& b : plan.buffers)
          if (b.device == d && b.bytes > 0 && b.first <= pos && pos <= b.last) live += aligned(b.bytes);
        most_live = std::max(most_live, live);
      }
      for (const PlannedBuffer& b : plan.buffers)
        if (b.device == d) all += aligned(b.bytes);
      EXPECT_GE(plan.arena_bytes[d], most_live);
      EXPECT_LE(plan.arena_bytes[d], all);
    }
  }
}

TEST(StepPlan, BadPlacementThrows) {
  const OpGraph g = testing::chain_graph();
  EXPECT_THROW(make_step_plan(g, star_cluster(2), Placement({0, 5, 0})), Error);
  EXPECT_THROW(make_step_plan(g, star_cluster(2), Placement({0, 1})), Error);
}

}  // namespace
}  // namespace aware
