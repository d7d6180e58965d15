// The CPU worker's first-come-first-served order (hw/ready_queue.h) and the
// live-memory sweep over a run's times (hw/executor.h, live_peak_bytes), on
// hand-built plans: pure bookkeeping, no threads.
#include <gtest/gtest.h>

#include "hw/executor.h"
#include "hw/ready_queue.h"
#include "hw/step_plan.h"
#include "test_graphs.h"

namespace aware {
namespace {

Op sized_op(const std::string& name, double out_bytes, double param_bytes = 0) {
  Op op = testing::timed_op(name, 10);
  op.output_bytes = {out_bytes};
  op.param_bytes = param_bytes;
  return op;
}

// The position of a task in device `d`'s list.
int position_of(const StepPlan& plan, int d, bool is_copy, int index) {
  const auto& tasks = plan.device_tasks[static_cast<size_t>(d)];
  for (size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].is_copy == is_copy && tasks[i].index == index) return static_cast<int>(i);
  return -1;
}

int copy_from(const StepPlan& plan, int src_op) {
  for (size_t c = 0; c < plan.copies.size(); ++c)
    if (plan.copies[c].src_op == src_op) return static_cast<int>(c);
  return -1;
}

// A -> X and B -> Y, A and B on device 0, X and Y on device 1: device 1 runs
// the copy of A's output, the copy of B's, X and Y. When B ends first (at 5)
// its copy is ready first; Y, ready at 6 when that copy ends, runs before A's
// copy, ready only at 9, though A's copy comes earlier in the list.
TEST(FifoReadyQueue, TheFirstTaskToBecomeReadyRunsFirst) {
  OpGraph g("two-pairs");
  const int a = g.add_op(sized_op("A", 100)), b = g.add_op(sized_op("B", 100));
  const int x = g.add_op(sized_op("X", 100)), y = g.add_op(sized_op("Y", 100));
  g.add_edge(a, x);
  g.add_edge(b, y);
  const StepPlan plan = make_step_plan(g, testing::star_cluster(2), Placement({0, 0, 1, 1}));
  ASSERT_TRUE(plan.feasible) << plan.infeasible_reason;
  const int copy_a = position_of(plan, 1, true, copy_from(plan, a));
  const int copy_b = position_of(plan, 1, true, copy_from(plan, b));
  const int px = position_of(plan, 1, false, x), py = position_of(plan, 1, false, y);
  ASSERT_LT(copy_a, copy_b);  // the list's (rank) order
  ASSERT_LT(copy_a, py);

  FifoReadyQueue q(plan, 1);
  q.reset();
  EXPECT_EQ(q.waiting_copies(), 2);
  EXPECT_EQ(q.pop(), -1);  // nothing local is ready: both copies wait on device 0
  q.poll([&](int op) { return op == b; }, [](int) { return 5.0; });
  EXPECT_EQ(q.waiting_copies(), 1);
  EXPECT_EQ(q.pop(), copy_b);
  EXPECT_EQ(q.pop(), -1);
  q.finished(copy_b, 6);  // Y is ready at 6
  q.poll([](int) { return true; }, [&](int op) { return op == a ? 9.0 : 5.0; });
  EXPECT_EQ(q.waiting_copies(), 0);
  EXPECT_EQ(q.pop(), py);      // ready at 6
  EXPECT_EQ(q.pop(), copy_a);  // ready at 9
  q.finished(copy_a, 10);
  EXPECT_EQ(q.pop(), px);
  EXPECT_EQ(q.pop(), -1);

  // Device 0: A and B ready at 0, in the list's order; a second run starts afresh.
  FifoReadyQueue q0(plan, 0);
  for (int run = 0; run < 2; ++run) {
    q0.reset();
    EXPECT_EQ(q0.pop(), position_of(plan, 0, false, a));
    EXPECT_EQ(q0.pop(), position_of(plan, 0, false, b));
    EXPECT_EQ(q0.pop(), -1);
  }
}

// A diamond s -> {l, r} -> t on one device: l and r become ready together when
// s ends, so the list's order decides; t waits for both.
TEST(FifoReadyQueue, TiesGoToTheListOrderAndJoinsWaitForEveryInput) {
  OpGraph g("diamond");
  const int s = g.add_op(sized_op("s", 100)), l = g.add_op(sized_op("l", 100));
  const int r = g.add_op(sized_op("r", 100)), t = g.add_op(sized_op("t", 100));
  g.add_edge(s, l);
  g.add_edge(s, r);
  g.add_edge(l, t);
  g.add_edge(r, t);
  const StepPlan plan = make_step_plan(g, testing::star_cluster(1), Placement({0, 0, 0, 0}));
  FifoReadyQueue q(plan, 0);
  q.reset();
  EXPECT_EQ(q.size(), 4);
  const int ps = q.pop();
  EXPECT_EQ(ps, position_of(plan, 0, false, s));
  EXPECT_EQ(q.pop(), -1);
  q.finished(ps, 10);
  const int first = q.pop(), second = q.pop();
  EXPECT_LT(first, second);
  q.finished(first, 20);
  EXPECT_EQ(q.pop(), -1);  // t still waits for the other
  q.finished(second, 30);
  EXPECT_EQ(q.pop(), position_of(plan, 0, false, t));
}

// A chain a -> b -> c on one device, outputs of 100, 200 and 300 bytes (and 50
// bytes of parameters on b, which are not buffers), run over [0, 1], [1, 2],
// [2, 3]: a's output lives until b ends (2), b's until c ends (3), c's (read by
// nothing) until c ends. At 2 a's is freed before c's is taken: 200 + 300 = 500.
TEST(LivePeakBytes, HandComputedChain) {
  OpGraph g("chain");
  const int a = g.add_op(sized_op("a", 100)), b = g.add_op(sized_op("b", 200, 50)), c = g.add_op(sized_op("c", 300));
  g.add_edge(a, b);
  g.add_edge(b, c);
  const StepPlan plan = make_step_plan(g, testing::star_cluster(1), Placement({0, 0, 0}));
  RunTimes times;
  times.op_start = {0, 1, 2};
  times.op_end = {1, 2, 3};
  times.step_us = 3;
  EXPECT_EQ(live_peak_bytes(plan, times), std::vector<double>({500}));
  // c run later, after a gap: b's output stays alive until c ends, a's does not.
  times.op_start = {0, 1, 5};
  times.op_end = {1, 2, 6};
  times.step_us = 6;
  EXPECT_EQ(live_peak_bytes(plan, times), std::vector<double>({500}));
  // Two devices: a on 0, b and c on 1. a's output lives on 0 until the copy to
  // device 1 ends; the copy's buffer on 1 lives from the copy's start until b ends.
  const StepPlan split = make_step_plan(g, testing::star_cluster(2), Placement({0, 1, 1}));
  ASSERT_EQ(split.copies.size(), 1u);
  RunTimes t2;
  t2.op_start = {0, 2, 3};
  t2.op_end = {1, 3, 4};
  t2.copy_start = {1};
  t2.copy_end = {2};
  t2.step_us = 4;
  // Device 0: a's 100 over [0, 2]. Device 1: the copy's 100 over [1, 3], b's
  // 200 over [2, 4], c's 300 over [3, 4]: at 3 the copy's is freed, 200 + 300.
  EXPECT_EQ(live_peak_bytes(split, t2), std::vector<double>({100, 500}));
}

// The host-issue note: medians of the runs' issue and step times, per task; no
// note where any run did not measure it (the CPU backend) or there are no tasks.
TEST(IssueNote, MediansPerTaskAndShareOfTheStep) {
  std::vector<RunTimes> runs(3);
  const double issue[3] = {900, 1000, 5000}, step[3] = {1300, 1250, 2000};
  for (int i = 0; i < 3; ++i) {
    runs[i].issue_us = issue[i];
    runs[i].step_us = step[i];
  }
  // Medians 1000 and 1300: 10.00 us a task over 100 tasks, 0.77 of the step.
  EXPECT_EQ(issue_note(runs, 100),
            "host issue: 1000 us for 100 tasks (10.00 us a task), 0.77 of the step's 1300 us (medians of 3 runs)");
  EXPECT_EQ(issue_note(runs, 0), "");
  EXPECT_EQ(issue_note({}, 100), "");
  runs[1].issue_us = -1;  // not measured
  EXPECT_EQ(issue_note(runs, 100), "");
}

}  // namespace
}  // namespace aware
