// The CUDA executor on hand-built graphs, with two or three logical devices as
// streams of GPU 0 (what every machine with a GPU has): the measured trace
// respects every dependency, copies carry the producer's bytes (same-GPU and
// host-staged), warm-up and repeats are honoured, a stalled step ends at its
// timeout, and nothing is left on the GPU. Without a GPU every test skips with
// the driver's one-line reason, except the one that checks that reason is what
// creating the evaluator throws. Times are compared with generous margins: these
// are measurements on a shared machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "hw/cuda_backend.h"
#include "hw/executor.h"
#include "tests/expect_error.h"
#include "tests/hw/hw_checks.h"

namespace aware {
namespace {

using testing::big_tensor_graph;
using testing::expect_dependencies_respected;
using testing::measurement_of;
using testing::scaled;
using testing::timed_op;

#define SKIP_WITHOUT_GPU() \
  if (cuda_device_count() == 0) GTEST_SKIP() << cuda_unavailable_reason()

// `n` logical devices, all on GPU 0.
Cluster on_gpu0(int n) { return cuda_host_cluster(n, {0}); }

std::unique_ptr<Evaluator> cuda_evaluator(Options options = {}) {
  register_builtins();
  options.emplace("verify", "1");
  options.emplace("gpus", "0");
  return EvaluatorRegistry::instance().create("cuda", options);
}

TEST(CudaExecutor, WithoutAGpuCreatingItThrowsOneLine) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  register_builtins();
  const std::string reason = cuda_unavailable_reason();
  EXPECT_NE(reason.find("no CUDA device"), std::string::npos) << reason;
  EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  EXPECT_EQ(testing::expect_error<HardwareError>(
                [] { EvaluatorRegistry::instance().create("cuda"); }, {}),
            reason);
  EXPECT_THROW(make_cluster_preset("cuda-host"), HardwareError);
  EXPECT_THROW(make_cuda_backend({}), HardwareError);
  // A bad option is the same mistake on every machine: refused before the GPU is asked for.
  EXPECT_THROW(EvaluatorRegistry::instance().create("cuda", {{"gpus", "0,x"}}), ConfigError);
  EXPECT_THROW(EvaluatorRegistry::instance().create("cuda", {{"verify", "maybe"}}), ConfigError);
}

TEST(CudaExecutor, IsRegisteredWithItsPresetAndTraits) {
  register_builtins();
  const RegistryInfo info = EvaluatorRegistry::instance().info("cuda");
  EXPECT_EQ(info.traits.at("needs"), "gpu");
  EXPECT_EQ(info.traits.at("measured"), "1");
  EXPECT_EQ(info.traits.at("deterministic"), "0");
  const auto presets = cluster_preset_names();
  for (const char* name : {"cuda-host", "cuda-host:2", "cuda-host:4", "cuda-host:8"})
    EXPECT_NE(std::find(presets.begin(), presets.end(), name), presets.end()) << name;
}

TEST(CudaExecutor, CudaHostPresetDescribesTheGpus) {
  SKIP_WITHOUT_GPU();
  register_builtins();
  const Cluster c = make_cluster_preset("cuda-host");
  ASSERT_EQ(c.num_devices(), cuda_device_count());
  EXPECT_EQ(c.source(), "preset:cuda-host");
  for (const Device& d : c.devices()) {
    EXPECT_FALSE(d.kind.empty());
    EXPECT_GT(d.peak_flops, 1e12) << d.kind;
    EXPECT_GT(d.memory_bytes, 1e9) << d.kind;
    EXPECT_GT(d.memory_Bps, 1e11) << d.kind;
  }
  EXPECT_EQ(load_cluster("preset:cuda-host:4").num_devices(), 4);
  const Cluster two = on_gpu0(2);
  ASSERT_EQ(two.num_devices(), 2);
  EXPECT_EQ(two.device(0).kind, c.device(0).kind);
  EXPECT_DOUBLE_EQ(two.device(0).memory_bytes, c.device(0).memory_bytes / 2);  // they share it
  EXPECT_DOUBLE_EQ(two.route_bandwidth_Bps(0, 1), c.device(0).memory_Bps / 2);
}

TEST(CudaExecutor, ChainDiamondForkJoinRespectDependenciesOnTwoStreamsOfOneGpu) {
  SKIP_WITHOUT_GPU();
  auto cuda = cuda_evaluator({{"repeats", "3"}});
  const Cluster c = on_gpu0(2);
  for (const testing::HandCase& k : testing::two_device_hand_cases()) {
    SCOPED_TRACE(k.graph.name());
    Trace trace;
    const StepResult r = cuda->evaluate(k.graph, c, k.placement, &trace);
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    expect_dependencies_respected(k.graph, k.placement, trace);
    // A spin ends on the GPU's wall clock, which ticks in up to 1 us steps.
    for (int op = 0; op < k.graph.num_ops(); ++op)
      EXPECT_GE(trace.ops[op].end_us - trace.ops[op].start_us, k.graph.op(op).compute_us - 2)
          << k.graph.op(op).name;
    EXPECT_GE(r.step_time_us, k.critical_us - 2);
    EXPECT_LT(r.step_time_us, 1.5 * k.critical_us + 2000);  // launches cost us, not ms
    EXPECT_EQ(r.evaluator, "cuda");
  }
  EXPECT_NE(measurement_of(*cuda).mapping.find("share GPU 0"), std::string::npos)
      << measurement_of(*cuda).mapping;
}

TEST(CudaExecutor, CopiesCarryTheProducersBytesOnOneGpuAndStagedThroughTheHost) {
  SKIP_WITHOUT_GPU();
  // verify=1 makes every run check each received buffer byte by byte.
  const OpGraph g = big_tensor_graph();
  const Cluster c = on_gpu0(3);
  ExecutorOptions executor;
  executor.repeats = 2;
  for (bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staged through pinned host memory" : "device to device");
    CudaBackendOptions options;
    options.gpus = {0};
    options.verify = true;
    options.stage_copies = staged;
    auto cuda = make_cuda_evaluator(executor, options);
    Trace trace;
    const Placement p({0, 1, 2});
    const StepResult r = cuda->evaluate(g, c, p, &trace);
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    EXPECT_EQ(r.transfers, 3);  // a -> cuda1, a -> cuda2, b -> cuda2
    EXPECT_EQ(r.bytes_moved, 8e6 + 8e6 + 4e6);
    ASSERT_EQ(trace.transfers.size(), 3u);
    expect_dependencies_respected(g, p, trace);
    for (const TransferSpan& s : trace.transfers) EXPECT_GT(s.end_us, s.start_us);
    EXPECT_EQ(measurement_of(*cuda).mapping.find("staged") != std::string::npos, staged)
        << measurement_of(*cuda).mapping;
  }
}

TEST(CudaExecutor, CopiesBetweenTwoGpusArrive) {
  SKIP_WITHOUT_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs two GPUs";
  const OpGraph g = big_tensor_graph();
  const Cluster c = cuda_host_cluster(3, {0, 1});  // cuda0, cuda2 on GPU 0; cuda1 on GPU 1
  ExecutorOptions executor;
  executor.repeats = 2;
  for (bool staged : {false, true}) {
    SCOPED_TRACE(staged ? "staged" : "peer to peer where the GPUs allow it");
    CudaBackendOptions options;
    options.gpus = {0, 1};
    options.verify = true;
    options.stage_copies = staged;
    auto cuda = make_cuda_evaluator(executor, options);
    Trace trace;
    const StepResult r = cuda->evaluate(g, c, Placement({0, 1, 2}), &trace);
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    ASSERT_EQ(trace.transfers.size(), 3u);
    // Across GPUs the times have two origins a few us apart: no exact ordering check.
    for (const TransferSpan& s : trace.transfers) EXPECT_GE(s.end_us, s.start_us);
  }
}

TEST(CudaExecutor, WarmupAndRepeatsAreHonoured) {
  SKIP_WITHOUT_GPU();
  const OpGraph g = scaled(testing::chain_graph(), 10);
  auto cuda = cuda_evaluator({{"repeats", "4"}, {"warmup", "2"}});
  const StepResult r = cuda->evaluate(g, on_gpu0(2), Placement({0, 1, 0}));
  const Measurement& m = measurement_of(*cuda);
  ASSERT_EQ(m.step_us.size(), 4u);
  EXPECT_EQ(r.step_time_us, median_of(m.step_us));
  for (double s : m.step_us) EXPECT_GE(s, 600 - 2);
  EXPECT_GE(m.iqr_us, 0);
}

TEST(CudaExecutor, RealKernelsRunAndOverMemoryIsRefusedFirst) {
  SKIP_WITHOUT_GPU();
  const OpGraph g = testing::kernel_graph(512);
  auto cuda = cuda_evaluator({{"repeats", "3"}});
  Trace trace;
  const StepResult r = cuda->evaluate(g, on_gpu0(2), Placement({0, 1, 1}), &trace);
  ASSERT_TRUE(r.feasible) << r.infeasible_reason;
  EXPECT_GT(trace.ops[0].end_us - trace.ops[0].start_us, 0);  // the GEMM
  EXPECT_GT(trace.ops[1].end_us - trace.ops[1].start_us, 0);  // the streaming pass
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("noop"), std::string::npos);

  Cluster tiny = testing::star_cluster(2, 1e9, 1, 1e5);  // 100 KB per device
  const StepResult refused = cuda->evaluate(g, tiny, Placement({0, 0, 0}));
  EXPECT_FALSE(refused.feasible);
  EXPECT_NE(refused.infeasible_reason.find("out of memory"), std::string::npos);
  EXPECT_TRUE(measurement_of(*cuda).step_us.empty());
}

TEST(CudaExecutor, NothingIsLeftOnTheGpu) {
  SKIP_WITHOUT_GPU();
  const OpGraph g = testing::kernel_graph(512);
  const Cluster c = on_gpu0(2);
  const Placement p({0, 1, 1});
  auto cuda = cuda_evaluator({{"repeats", "2"}});
  cuda->evaluate(g, c, p);  // loads cuBLAS's and our kernels: they stay loaded
  const std::size_t before = cuda_memory_used_bytes(0);

  const StepPlan plan = make_step_plan(g, c, p);
  auto backend = make_cuda_backend({{0}, true, false});
  backend->prepare(plan, c);
  EXPECT_GT(backend->live_bytes(), 0);
  EXPECT_GT(backend->run(plan, 10000).step_us, 0);
  backend->release();
  EXPECT_EQ(backend->live_bytes(), 0);
  backend->release();  // twice is fine
  backend.reset();
  cuda->evaluate(g, c, p);

  const std::size_t after = cuda_memory_used_bytes(0);
  const double drift = std::abs(static_cast<double>(after) - static_cast<double>(before));
  EXPECT_LT(drift, 8.0 * (1 << 20)) << before << " bytes in use before, " << after << " after";
}

TEST(CudaExecutor, StalledStepEndsAtItsTimeoutAndFreesTheGpu) {
  SKIP_WITHOUT_GPU();
  OpGraph g("stall");
  g.add_op(timed_op("long", 30e6));  // 30 s
  auto cuda = cuda_evaluator({{"repeats", "1"}, {"warmup", "0"}, {"timeout_ms", "200"}});
  const auto started = std::chrono::steady_clock::now();
  testing::expect_error<HardwareError>([&] { cuda->evaluate(g, on_gpu0(1), Placement({0})); },
                                       {"did not finish within", "'long'"});
  // The abort flag ended the spin: no waiting out its 30 s.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  // The GPU is usable afterwards.
  auto again = cuda_evaluator({{"repeats", "1"}});
  EXPECT_TRUE(again->evaluate(scaled(testing::chain_graph(), 1), on_gpu0(2), Placement({0, 1, 0}))
                  .feasible);
}

// Millisecond spins on two streams of one GPU: the contention simulator's
// schedule is what the GPU does, within 10%.
TEST(CudaExecutor, AgreesWithTheAnalyticSimulatorOnMillisecondSpins) {
  SKIP_WITHOUT_GPU();
  auto cuda = cuda_evaluator({{"repeats", "3"}});
  auto analytic = EvaluatorRegistry::instance().create("analytic");
  const Cluster c = on_gpu0(2);
  const std::vector<std::pair<OpGraph, std::vector<int>>> cases = {
      {scaled(testing::chain_graph()), {0, 1, 0}},
      {scaled(testing::diamond_graph()), {0, 0, 1, 0}},
      {scaled(testing::fork_join_graph()), {0, 0, 0, 1, 1, 0}},
  };
  for (const auto& [g, devices] : cases) {
    const double measured = cuda->evaluate(g, c, Placement(devices)).step_time_us;
    const double simulated = analytic->evaluate(g, c, Placement(devices)).step_time_us;
    EXPECT_NEAR(measured, simulated, 0.10 * simulated) << g.name();
  }
}

TEST(CudaExecutor, BadOptionsAndPlacementsAreErrors) {
  SKIP_WITHOUT_GPU();
  register_builtins();
  auto& registry = EvaluatorRegistry::instance();
  EXPECT_THROW(registry.create("cuda", {{"repeats", "0"}}), ConfigError);
  EXPECT_THROW(registry.create("cuda", {{"gpus", "4000"}}), ConfigError);
  EXPECT_THROW(registry.create("cuda", {{"gpus", std::to_string(cuda_device_count())}}),
               ConfigError);
  EXPECT_THROW(cuda_host_cluster(-1), ConfigError);
  auto cuda = cuda_evaluator();
  EXPECT_THROW(cuda->evaluate(testing::chain_graph(), on_gpu0(2), Placement({0, 3, 0})), Error);
}

}  // namespace
}  // namespace aware
