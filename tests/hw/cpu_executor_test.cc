// The CPU executor on hand-built graphs whose ops spin for known times: the
// measured trace respects every dependency, copies carry the producer's bytes,
// warm-up and repeats are honoured, a stalled step ends at its timeout, and
// nothing (threads, memory) is left behind. Times are compared with generous
// margins: these are measurements on a shared machine.
#include <gtest/gtest.h>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "hw/cpu_backend.h"
#include "hw/executor.h"
#include "test_graphs.h"

namespace aware {
namespace {

using testing::star_cluster;
using testing::timed_op;

// The hand graphs with every op 100x longer (10 us -> 1 ms), so that measured
// times dwarf thread hand-offs.
OpGraph scaled(OpGraph g, double factor = 100) {
  for (int i = 0; i < g.num_ops(); ++i) g.mutable_op(i).compute_us *= factor;
  return g;
}

// Whether this machine can time two devices right now, judged without the
// executor: two plain threads pinned to the first two allowed cores each spin
// for 20 ms of wall time; if either got less than 80% of it as CPU time, some
// other process holds a core and measured schedules would show its time slices.
bool cores_are_free() {
  const std::vector<int> cpus = allowed_cpus();
  std::atomic<int> starved{0};
  auto spin = [&](int core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    timespec cpu0{}, cpu1{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < end) {
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
    const double cpu_ms = (cpu1.tv_sec - cpu0.tv_sec) * 1e3 + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e6;
    if (cpu_ms < 16) ++starved;
  };
  std::thread a(spin, cpus.at(0));
  std::thread b(spin, cpus.at(cpus.size() > 1 ? 1 : 0));
  a.join();
  b.join();
  return starved == 0;
}

// The fastest measured repeat of the evaluator's last step.
double fastest(Evaluator& evaluator) {
  const auto& steps = dynamic_cast<HardwareEvaluator&>(evaluator).last_measurement().step_us;
  return *std::min_element(steps.begin(), steps.end());
}

std::unique_ptr<Evaluator> cpu_evaluator(Options options = {}) {
  register_builtins();
  options.emplace("verify", "1");
  return EvaluatorRegistry::instance().create("cpu", options);
}

// No op starts before its same-device inputs end or its copies land; no copy
// starts before its producer ends; ops on one device do not overlap.
void expect_dependencies_respected(const OpGraph& g, const Placement& p, const Trace& t) {
  ASSERT_EQ(static_cast<int>(t.ops.size()), g.num_ops());
  std::map<std::pair<int, int>, double> landed;  // (src op, dst device) -> copy end
  for (const TransferSpan& s : t.transfers) {
    EXPECT_GE(s.start_us, t.ops[s.src_op].end_us) << "copy of " << g.op(s.src_op).name;
    EXPECT_GE(s.end_us, s.start_us);
    landed[{s.src_op, s.dst_device}] = s.end_us;
  }
  for (int e = 0; e < g.num_edges(); ++e) {
    const Edge& edge = g.edge(e);
    const OpSpan& dst = t.ops[edge.dst];
    if (p[edge.src] == p[edge.dst]) {
      EXPECT_GE(dst.start_us, t.ops[edge.src].end_us) << g.op(edge.dst).name;
    } else {
      const auto it = landed.find({edge.src, p[edge.dst]});
      ASSERT_NE(it, landed.end()) << "no copy of " << g.op(edge.src).name;
      EXPECT_GE(dst.start_us, it->second) << g.op(edge.dst).name;
    }
  }
  for (int a = 0; a < g.num_ops(); ++a)
    for (int b = a + 1; b < g.num_ops(); ++b)
      if (p[a] == p[b])
        EXPECT_TRUE(t.ops[a].end_us <= t.ops[b].start_us || t.ops[b].end_us <= t.ops[a].start_us)
            << g.op(a).name << " and " << g.op(b).name << " overlap";
}

TEST(CpuExecutor, ChainDiamondForkJoinRespectDependenciesAndTakeTheirSpinTimes) {
  auto cpu = cpu_evaluator({{"repeats", "3"}});
  const Cluster c = star_cluster(2);
  struct Case {
    OpGraph graph;
    std::vector<int> devices;
    double critical_us;  // hand-computed from the spins alone (copies are ~us here)
  };
  const std::vector<Case> cases = {
      {scaled(testing::chain_graph()), {0, 1, 0}, 6000},            // 1 + 2 + 3 ms
      {scaled(testing::diamond_graph()), {0, 0, 1, 0}, 4500},       // a, then c (3 ms) || b, d
      {scaled(testing::fork_join_graph()), {0, 0, 0, 1, 1, 0}, 6000},  // src, x1 x2 | x3 x4, sink
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.graph.name());
    Trace trace;
    const Placement p(k.devices);
    const StepResult r = cpu->evaluate(k.graph, c, p, &trace);
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    expect_dependencies_respected(k.graph, p, trace);
    for (int op = 0; op < k.graph.num_ops(); ++op)
      EXPECT_GE(trace.ops[op].end_us - trace.ops[op].start_us, k.graph.op(op).compute_us);
    EXPECT_GE(r.step_time_us, k.critical_us);
    // Hand-offs cost µs, not ms (checked where the cores are free: another busy
    // process delays a spin by whole time slices).
    if (cores_are_free()) EXPECT_LT(fastest(*cpu), 1.5 * k.critical_us + 2000);
    EXPECT_EQ(r.evaluator, "cpu");
  }
}

TEST(CpuExecutor, CopiesCarryTheProducersBytes) {
  // verify=1 makes every run check each received buffer byte by byte; a graph
  // whose tensors are large enough to take a visible time.
  OpGraph g("big-tensors");
  const int a = g.add_op(timed_op("a", 200, 8e6));
  const int b = g.add_op(timed_op("b", 200, 4e6));
  const int c = g.add_op(timed_op("c", 200, 1000));
  g.add_edge(a, b);
  g.add_edge(a, c);
  g.add_edge(b, c);
  auto cpu = cpu_evaluator({{"repeats", "2"}});
  Trace trace;
  const StepResult r = cpu->evaluate(g, star_cluster(3), Placement({0, 1, 2}), &trace);
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.transfers, 3);          // a -> dev1, a -> dev2, b -> dev2
  EXPECT_EQ(r.bytes_moved, 8e6 + 8e6 + 4e6);
  ASSERT_EQ(trace.transfers.size(), 3u);
  for (const TransferSpan& s : trace.transfers) EXPECT_GT(s.end_us, s.start_us);
}

TEST(CpuExecutor, WarmupAndRepeatsAreHonoured) {
  const OpGraph g = scaled(testing::chain_graph(), 10);
  auto cpu = cpu_evaluator({{"repeats", "4"}, {"warmup", "2"}});
  const StepResult r = cpu->evaluate(g, star_cluster(2), Placement({0, 0, 0}));
  const auto& m = dynamic_cast<HardwareEvaluator&>(*cpu).last_measurement();
  ASSERT_EQ(m.step_us.size(), 4u);
  EXPECT_EQ(r.step_time_us, median_of(m.step_us));
  for (double s : m.step_us) EXPECT_GE(s, 600);
  EXPECT_GE(m.iqr_us, 0);
  EXPECT_FALSE(m.mapping.empty());
}

TEST(CpuExecutor, StalledStepEndsAtItsTimeoutAndLeavesNothingBehind) {
  OpGraph g("stall");
  g.add_op(timed_op("long", 30e6));  // 30 s
  const int threads_before = process_thread_count();
  auto cpu = cpu_evaluator({{"repeats", "1"}, {"warmup", "0"}, {"timeout_ms", "200"}});
  try {
    cpu->evaluate(g, star_cluster(1), Placement({0}));
    FAIL() << "a 30 s op finished under a 200 ms timeout";
  } catch (const HardwareError& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish within"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'long'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(process_thread_count(), threads_before);
}

TEST(CpuExecutor, BackendFreesEverythingItAllocated) {
  const OpGraph g = scaled(testing::fork_join_graph(), 1);
  const Cluster c = star_cluster(2);
  const StepPlan plan = make_step_plan(g, c, Placement({0, 0, 1, 1, 0, 0}));
  CpuBackendOptions options;
  options.verify = true;
  auto backend = make_cpu_backend(options);
  const int threads_before = process_thread_count();
  backend->prepare(plan, c);
  EXPECT_GT(backend->live_bytes(), 0);
  const RunTimes t = backend->run(plan, 10000);
  EXPECT_GT(t.step_us, 0);
  EXPECT_EQ(process_thread_count(), threads_before);  // workers live for one run only
  backend->release();
  EXPECT_EQ(backend->live_bytes(), 0);
  backend->release();  // twice is fine
}

TEST(CpuExecutor, RealKernelsRunAndOverMemoryIsRefusedFirst) {
  OpGraph g("kernels");
  Op mm;
  mm.name = "mm";
  mm.type = "MatMul";
  mm.flops = 2.0 * 256 * 256 * 256;
  mm.bytes_accessed = 3 * 4 * 256 * 256;
  mm.output_bytes = {4 * 256 * 256};
  mm.shape = {{"M", 256}, {"N", 256}, {"K", 256}};
  const int a = g.add_op(mm);
  Op relu;
  relu.name = "relu";
  relu.type = "Relu";
  relu.flops = 256 * 256;
  relu.bytes_accessed = 2 * 4 * 256 * 256;
  relu.output_bytes = {4 * 256 * 256};
  const int b = g.add_op(relu);
  Op noop;
  noop.name = "noop";
  const int z = g.add_op(noop);
  g.add_edge(a, b);
  g.add_edge(b, z);
  auto cpu = cpu_evaluator({{"repeats", "3"}});
  Trace trace;
  const StepResult r = cpu->evaluate(g, star_cluster(2), Placement({0, 1, 1}), &trace);
  ASSERT_TRUE(r.feasible) << r.infeasible_reason;
  EXPECT_GT(trace.ops[a].end_us - trace.ops[a].start_us, 0);
  ASSERT_EQ(r.notes.size(), 1u);  // the no-op says it ran nothing
  EXPECT_NE(r.notes[0].find("ran nothing"), std::string::npos);
  EXPECT_NE(r.notes[0].find("noop"), std::string::npos);

  // The same graph on a device of 100 KB: refused as a result, before running.
  Cluster tiny = star_cluster(2, 1e9, 1, 1e5);
  const StepResult refused = cpu->evaluate(g, tiny, Placement({0, 0, 0}));
  EXPECT_FALSE(refused.feasible);
  EXPECT_NE(refused.infeasible_reason.find("out of memory"), std::string::npos);
  EXPECT_TRUE(dynamic_cast<HardwareEvaluator&>(*cpu).last_measurement().step_us.empty());
}

// Where every op is a spin of a few ms, the contention simulator's schedule is
// what the cores do: measured and simulated step times agree within 10%.
TEST(CpuExecutor, AgreesWithTheAnalyticSimulatorOnMillisecondSpins) {
  if (!cores_are_free())
    GTEST_SKIP() << "another process holds a core: two devices cannot be timed now";
  auto cpu = cpu_evaluator({{"repeats", "5"}});
  auto analytic = EvaluatorRegistry::instance().create("analytic");
  const Cluster c = star_cluster(2, 1e10, 1);
  // Tensors of 1000 bytes: this compares schedules, not the cost of copies (a CPU
  // copy runs on the consumer's core, which the simulator does not model).
  const OpGraph big = scaled(testing::layered_dag(30, 4), 20);
  OpGraph layered_graph(big.name());
  for (Op op : big.ops()) {
    op.output_bytes = {1000};
    layered_graph.add_op(op);
  }
  for (const Edge& e : big.edges()) layered_graph.add_edge(e.src, e.dst, 0, 1000);
  const std::vector<std::pair<OpGraph, std::vector<int>>> cases = {
      {scaled(testing::chain_graph()), {0, 1, 0}},
      {scaled(testing::diamond_graph()), {0, 0, 1, 0}},
      {scaled(testing::fork_join_graph()), {0, 0, 0, 1, 1, 0}},
      {layered_graph, round_robin_placement(layered_graph, c).device_of_op},
  };
  for (const auto& [g, devices] : cases) {
    cpu->evaluate(g, c, Placement(devices));
    const double measured = fastest(*cpu);  // see above: robust to a passing disturbance
    const double simulated = analytic->evaluate(g, c, Placement(devices)).step_time_us;
    EXPECT_NEAR(measured, simulated, 0.10 * simulated) << g.name();
  }
}

TEST(CpuExecutor, BadOptionsAndPlacementsAreErrors) {
  register_builtins();
  auto& registry = EvaluatorRegistry::instance();
  EXPECT_THROW(registry.create("cpu", {{"repeats", "0"}}), ConfigError);
  EXPECT_THROW(registry.create("cpu", {{"cores", "0,x"}}), ConfigError);
  EXPECT_THROW(registry.create("cpu", {{"cores", "4000"}}), ConfigError);
  EXPECT_THROW(registry.create("cpu", {{"verify", "maybe"}}), ConfigError);
  auto cpu = cpu_evaluator();
  EXPECT_THROW(cpu->evaluate(testing::chain_graph(), star_cluster(2), Placement({0, 3, 0})), Error);
}

}  // namespace
}  // namespace aware
