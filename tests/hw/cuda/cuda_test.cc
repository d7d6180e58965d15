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
#include "hw/cuda_kernels.h"
#include "hw/gpu_work.h"
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
  EXPECT_THROW(EvaluatorRegistry::instance().create("cuda", {{"kernels", "aten"}}), ConfigError);
  EXPECT_THROW(EvaluatorRegistry::instance().create("cuda", {{"precision", "fp16"}}), ConfigError);
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

TEST(CudaExecutor, SyntheticKernelsRunAndOverMemoryIsRefusedFirst) {
  SKIP_WITHOUT_GPU();
  const OpGraph g = testing::kernel_graph(512);
  // The synthetic stand-ins (a GEMM of the op's shape, a streaming pass); real work is tested below.
  auto cuda = cuda_evaluator({{"repeats", "3"}, {"kernels", "synthetic"}});
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

// Real work (hw/gpu_work.h): every op of a graph with a GEMM, a strided batch
// of GEMMs, elementwise ops, reductions, a depthwise convolution and its two
// gradients and an Adam update runs its own kernel on its tensors, over two
// streams with copies between them (verify=1: each copy equals its producer's
// bytes), in every precision; the note says 100% of the FLOPs ran real work and
// each device's measured bytes hold at least its buffers.
OpGraph real_work_graph() {
  OpGraph g("real-work");
  const auto add = [&](const std::string& name, const std::string& type, double flops, double bytes,
                       std::vector<double> outputs, std::map<std::string, double> shape = {}) {
    Op op;
    op.name = name;
    op.type = type;
    op.flops = flops;
    op.bytes_accessed = bytes;
    op.output_bytes = std::move(outputs);
    op.shape = std::move(shape);
    return g.add_op(op);
  };
  const double n = 256;
  const int x = add("x", "Placeholder", 0, 0, {4 * n * n});
  const int w = add("w", "VariableV2", 0, 0, {4 * n * n});
  const int mm = add("mm", "MatMul", 2 * n * n * n, 12 * n * n, {4 * n * n}, {{"M", n}, {"N", n}, {"K", n}});
  const int relu = add("relu", "Relu", n * n, 8 * n * n, {4 * n * n});
  const int bmm = add("bmm", "BatchMatMul", 2 * 16 * 16.0 * 16 * 256, 1e5, {4 * 16 * 16 * 256},
                      {{"batch", 256}, {"M", 16}, {"N", 16}, {"K", 16}});
  const int sum = add("sum", "Sum", n * n, 4 * n * n, {4});
  const int bias = add("bias_grad", "BiasAddGrad", n * n, 4 * n * n, {4 * n});
  const std::map<std::string, double> dw = {{"batch", 4},  {"in_channels", 16}, {"height", 32},   {"width", 32},
                                            {"filters", 16}, {"kernel_h", 3},    {"kernel_w", 3},  {"stride", 2},
                                            {"out_height", 16}, {"out_width", 16}};
  const double dw_flops = 2.0 * 4 * 16 * 16 * 16 * 9;
  const int img = add("img", "Placeholder", 0, 0, {4 * 4 * 16 * 32 * 32});
  const int taps = add("taps", "VariableV2", 0, 0, {4 * 16 * 9});
  const int conv = add("dwconv", "DepthwiseConv2dNative", dw_flops, 1e5, {4 * 4 * 16 * 16 * 16}, dw);
  const int dx = add("dwconv_dx", "DepthwiseConv2dNativeBackpropInput", dw_flops, 1e5, {4 * 4 * 16 * 32 * 32}, dw);
  const int df = add("dwconv_df", "DepthwiseConv2dNativeBackpropFilter", dw_flops, 1e5, {4 * 16 * 9}, dw);
  const int adam = add("adam", "ApplyAdam", 10 * n * n, 16 * n * n, {0}, {{"params", n * n}});
  g.add_edge(x, mm);
  g.add_edge(w, mm);
  g.add_edge(mm, relu);
  g.add_edge(relu, bmm);
  g.add_edge(mm, bmm);
  g.add_edge(bmm, sum);
  g.add_edge(relu, bias);
  g.add_edge(img, conv);
  g.add_edge(taps, conv);
  g.add_edge(conv, dx);
  g.add_edge(taps, dx);
  g.add_edge(img, df);
  g.add_edge(conv, df);
  g.add_edge(relu, adam);
  return g;
}

TEST(CudaExecutor, RealWorkRunsEveryOpOnItsTensorsInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  const OpGraph g = real_work_graph();
  const Cluster c = on_gpu0(2);
  std::vector<int> devices(g.num_ops());
  for (int i = 0; i < g.num_ops(); ++i) devices[i] = i % 2;
  const Placement p(devices);
  for (const char* precision : {"bf16", "tf32", "fp32"}) {
    SCOPED_TRACE(precision);
    auto cuda = cuda_evaluator({{"repeats", "2"}, {"precision", precision}});
    Trace trace;
    const StepResult r = cuda->evaluate(g, c, p, &trace);
    ASSERT_TRUE(r.feasible) << r.infeasible_reason;
    expect_dependencies_respected(g, p, trace);
    const Measurement& m = measurement_of(*cuda);
    EXPECT_EQ(m.kernels.rfind(std::string("cublas-") + precision, 0), 0u) << m.kernels;
    EXPECT_DOUBLE_EQ(m.real_flops_share, 1.0);
    bool noted = false;
    for (const std::string& note : r.notes) noted = noted || note.find("100.0% of the FLOPs") != std::string::npos;
    EXPECT_TRUE(noted);
    for (const char* op : {"mm", "bmm", "sum", "dwconv", "dwconv_df", "adam"}) {
      const int id = g.find(op);
      ASSERT_GE(id, 0) << op;
      EXPECT_GT(trace.ops[id].end_us - trace.ops[id].start_us, 0) << op;
    }
    const StepPlan plan = make_step_plan(g, c, p);
    ASSERT_EQ(m.measured_peak_bytes.size(), 2u);
    for (int d = 0; d < 2; ++d) {
      double buffers = 0;
      for (const PlannedBuffer& b : plan.buffers)
        if (b.device == d) buffers += b.bytes;
      EXPECT_GE(m.measured_peak_bytes[d], buffers) << "device " << d;
      EXPECT_EQ(r.peak_memory_bytes[d], m.measured_peak_bytes[d]);
    }
  }
}

// The bytes measured per device add up to what the GPU's memory grew by while
// the backend held the step (the driver's view, cudaMemGetInfo), and each
// device's figure holds at least what was allocated for it (its buffers).
TEST(CudaExecutor, MeasuredBytesAreWhatTheGpuGrewBy) {
  SKIP_WITHOUT_GPU();
  const OpGraph g = real_work_graph();
  const Cluster c = on_gpu0(2);
  std::vector<int> devices(g.num_ops());
  for (int i = 0; i < g.num_ops(); ++i) devices[i] = i % 2;
  const Placement p(devices);
  cuda_evaluator({{"repeats", "1"}})->evaluate(g, c, p);  // loads the kernels and cuBLAS
  const StepPlan plan = make_step_plan(g, c, p);
  CudaBackendOptions options;
  options.gpus = {0};
  auto backend = make_cuda_backend(options);
  const double before = static_cast<double>(cuda_memory_used_bytes(0));
  backend->prepare(plan, c);
  backend->run(plan, 10000);
  const double held = static_cast<double>(cuda_memory_used_bytes(0)) - before;
  const std::vector<double> measured = backend->measured_peak_bytes();
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_NEAR(measured[0] + measured[1], held, 4.0 * (1 << 20));
  for (int d = 0; d < 2; ++d) {
    double buffers = 0;
    for (const PlannedBuffer& b : plan.buffers)
      if (b.device == d) buffers += b.bytes;
    EXPECT_GE(measured[d], buffers) << "device " << d;
  }
  backend->release();
}

// The traffic and depthwise kernels compute what hw/gpu_work.h says, in FP32,
// against plain loops: the fold through each of its three paths (a register per
// thread with a warp fold, a register per thread, an atomic per element).
namespace kernels {

std::vector<float> values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>((i * 37) % 101) - 50) / 50.0f;
  return v;
}

struct DeviceFloats {
  float* ptr = nullptr;
  explicit DeviceFloats(const std::vector<float>& host) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&ptr), std::max<size_t>(1, host.size()) * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  }
  explicit DeviceFloats(size_t n) : DeviceFloats(std::vector<float>(n, 0.0f)) {}
  ~DeviceFloats() { cudaFree(ptr); }
  std::vector<float> get(size_t n) const {
    std::vector<float> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), ptr, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
};

}  // namespace kernels

TEST(CudaKernels, TrafficMapsAndFoldsAsSpecified) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const size_t big = 12000, small = 5000;
  const std::vector<float> a = kernels::values(big, 1.0f), b = kernels::values(small, 0.5f);
  kernels::DeviceFloats da(a), db(b);
  // Fold outputs of 1 and 4 (warp folds), 10 (a register per thread), 3000 with
  // 2 blocks (512 threads: an atomic per element).
  for (const auto& [c0, max_blocks] : std::vector<std::pair<size_t, unsigned>>{{1, 64}, {4, 64}, {10, 64}, {3000, 2}}) {
    SCOPED_TRACE("fold into " + std::to_string(c0));
    kernels::DeviceFloats out(c0), side(small), acc(c0);
    cuda_detail::TrafficArgs args;
    args.reads[0] = da.ptr;
    args.read_counts[0] = big;
    args.reads[1] = db.ptr;
    args.read_counts[1] = small;
    args.num_reads = 2;
    args.writes[0] = out.ptr;
    args.write_counts[0] = c0;
    args.writes[1] = side.ptr;
    args.write_counts[1] = small;
    args.num_writes = 2;
    args.bf16 = false;
    args.fold = true;
    args.fold_acc = acc.ptr;
    args.max_blocks = max_blocks;
    ASSERT_EQ(cuda_detail::launch_traffic(args, nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<double> want(c0, 0);
    std::vector<float> want_side(small);
    for (size_t t = 0; t < big; ++t) {
      const double v = 0.5 * (a[t] + (t < small ? b[t] : 0.0f));
      want[t % c0] += v;
      if (t < small) want_side[t] = static_cast<float>(v);
    }
    const double rows = static_cast<double>((big + c0 - 1) / c0);
    const std::vector<float> got = out.get(c0), got_side = side.get(small);
    for (size_t i = 0; i < c0; ++i) ASSERT_NEAR(got[i], want[i] / rows, 1e-3) << i;
    for (size_t i = 0; i < small; ++i) ASSERT_FLOAT_EQ(got_side[i], want_side[i]) << i;
  }
  // A map: out[t] = the mean of the reads that have element t.
  kernels::DeviceFloats out(big);
  cuda_detail::TrafficArgs args;
  args.reads[0] = da.ptr;
  args.read_counts[0] = big;
  args.reads[1] = db.ptr;
  args.read_counts[1] = small;
  args.num_reads = 2;
  args.writes[0] = out.ptr;
  args.write_counts[0] = big;
  args.num_writes = 1;
  args.bf16 = false;
  args.max_blocks = 8;
  ASSERT_EQ(cuda_detail::launch_traffic(args, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> got = out.get(big);
  for (size_t t = 0; t < big; ++t) ASSERT_FLOAT_EQ(got[t], 0.5f * (a[t] + (t < small ? b[t] : 0.0f))) << t;
}

TEST(CudaKernels, DepthwiseConvolutionAndItsGradientsMatchLoops) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  // Batch 2, 3 channels, 7x6 input, 3x3 taps, stride 2, 4x3 output: padding 1 before.
  cuda_detail::DepthwiseArgs g;
  g.n = 2, g.channels = 3, g.h = 7, g.w = 6, g.kh = 3, g.kw = 3, g.stride = 2, g.pad_h = 1, g.pad_w = 1, g.oh = 4,
  g.ow = 3;
  g.bf16 = false;
  g.max_blocks = 4;
  const size_t nx = 2 * 3 * 7 * 6, ny = 2 * 3 * 4 * 3, nf = 3 * 9;
  const std::vector<float> x = kernels::values(nx, 1.0f), f = kernels::values(nf, 0.7f), dy = kernels::values(ny, 0.3f);
  // The loops: y = conv(x, f); dx = the adjoint of x -> y applied to dy; df = d<y, dy>/df.
  std::vector<double> y(ny, 0), dx(nx, 0), df(nf, 0);
  for (long long n = 0; n < g.n; ++n)
    for (long long c = 0; c < g.channels; ++c)
      for (long long oy = 0; oy < g.oh; ++oy)
        for (long long ox = 0; ox < g.ow; ++ox)
          for (long long i = 0; i < g.kh; ++i)
            for (long long j = 0; j < g.kw; ++j) {
              const long long iy = oy * g.stride + i - g.pad_h, ix = ox * g.stride + j - g.pad_w;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              const size_t xi = ((n * g.channels + c) * g.h + iy) * g.w + ix, fi = (c * g.kh + i) * g.kw + j,
                           yi = ((n * g.channels + c) * g.oh + oy) * g.ow + ox;
              y[yi] += x[xi] * f[fi];
              dx[xi] += dy[yi] * f[fi];
              df[fi] += x[xi] * dy[yi];
            }
  kernels::DeviceFloats dx_in(x), df_in(f), ddy(dy), out_y(ny), out_dx(nx), out_df(nf);
  const float window = 1.0f / 9, positions = 1.0f / (2 * 4 * 3);
  g.role = 0, g.a = dx_in.ptr, g.b = df_in.ptr, g.c = out_y.ptr;
  ASSERT_EQ(cuda_detail::launch_depthwise(g, nullptr), cudaSuccess);
  g.role = 1, g.a = ddy.ptr, g.b = df_in.ptr, g.c = out_dx.ptr;
  ASSERT_EQ(cuda_detail::launch_depthwise(g, nullptr), cudaSuccess);
  g.role = 2, g.a = dx_in.ptr, g.b = ddy.ptr, g.c = out_df.ptr;
  ASSERT_EQ(cuda_detail::launch_depthwise(g, nullptr), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> gy = out_y.get(ny), gdx = out_dx.get(nx), gdf = out_df.get(nf);
  for (size_t i = 0; i < ny; ++i) ASSERT_NEAR(gy[i], y[i] * window, 1e-5) << "y " << i;
  for (size_t i = 0; i < nx; ++i) ASSERT_NEAR(gdx[i], dx[i] * window, 1e-5) << "dx " << i;
  for (size_t i = 0; i < nf; ++i) ASSERT_NEAR(gdf[i], df[i] * positions, 1e-5) << "df " << i;
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
  EXPECT_THROW(registry.create("cuda", {{"kernels", "aten"}}), ConfigError);
  EXPECT_THROW(registry.create("cuda", {{"precision", "fp16"}}), ConfigError);
  auto cuda = cuda_evaluator();
  EXPECT_THROW(cuda->evaluate(testing::chain_graph(), on_gpu0(2), Placement({0, 3, 0})), Error);
}

}  // namespace
}  // namespace aware
