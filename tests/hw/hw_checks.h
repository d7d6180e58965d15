// What the executor suites (CPU and CUDA) share: hand graphs sized for
// measurement, the check that a measured trace respects every dependency, and
// the question whether this machine's cores are free to time anything.
#pragma once

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "core/op_graph.h"
#include "core/placement.h"
#include "hw/executor.h"
#include "test_graphs.h"

namespace aware::testing {

// The hand graphs with every op `factor` times longer (10 us -> 1 ms at 100), so
// that measured times dwarf hand-offs, launches and event records.
inline OpGraph scaled(OpGraph g, double factor = 100) {
  for (int i = 0; i < g.num_ops(); ++i) g.mutable_op(i).compute_us *= factor;
  return g;
}

// A hand graph scaled for measurement, placed on two devices, with its critical
// path in microseconds computed by hand from the spins alone.
struct HandCase {
  OpGraph graph;
  Placement placement;
  double critical_us;
};

// The chain, diamond and fork-join graphs scaled() to milliseconds, each split
// over devices 0 and 1.
inline std::vector<HandCase> two_device_hand_cases() {
  return {
      {scaled(chain_graph()), Placement({0, 1, 0}), 6000},               // 1 + 2 + 3 ms
      {scaled(diamond_graph()), Placement({0, 0, 1, 0}), 4500},          // a, then c (3 ms) || b, d
      {scaled(fork_join_graph()), Placement({0, 0, 0, 1, 1, 0}), 6000},  // src, x1 x2 | x3 x4, sink
  };
}

// No op starts before its same-device inputs end or its copies land; no copy
// starts before its producer ends; ops on one device do not overlap.
inline void expect_dependencies_respected(const OpGraph& g, const Placement& p, const Trace& t) {
  ASSERT_EQ(static_cast<int>(t.ops.size()), g.num_ops());
  std::map<std::pair<int, int>, double> landed;  // (src op, dst device) -> copy end
  for (const TransferSpan& s : t.transfers) {
    EXPECT_GE(s.start_us, t.ops[s.src_op].end_us) << "copy of " << g.op(s.src_op).name;
    EXPECT_GE(s.end_us, s.start_us);
    landed[{s.src_op, s.dst_device}] = s.end_us;
  }
  for (const Edge& edge : g.edges()) {
    const OpSpan& dst = t.ops[edge.dst];
    if (p[edge.src] == p[edge.dst]) {
      EXPECT_GE(dst.start_us, t.ops[edge.src].end_us) << g.op(edge.dst).name;
    } else {
      const auto it = landed.find({edge.src, p[edge.dst]});
      ASSERT_NE(it, landed.end()) << "no copy of " << g.op(edge.src).name;
      EXPECT_GE(dst.start_us, it->second) << g.op(edge.dst).name;
    }
  }
  for (int a = 0; a < g.num_ops(); ++a) {
    for (int b = a + 1; b < g.num_ops(); ++b) {
      if (p[a] != p[b]) continue;
      EXPECT_TRUE(t.ops[a].end_us <= t.ops[b].start_us || t.ops[b].end_us <= t.ops[a].start_us)
          << g.op(a).name << " and " << g.op(b).name << " overlap";
    }
  }
}

// a(8 MB) -> b(4 MB), a -> c, b -> c: on three devices, three copies.
inline OpGraph big_tensor_graph() {
  OpGraph g("big-tensors");
  const int a = g.add_op(timed_op("a", 200, 8e6));
  const int b = g.add_op(timed_op("b", 200, 4e6));
  const int c = g.add_op(timed_op("c", 200, 1000));
  g.add_edge(a, b);
  g.add_edge(a, c);
  g.add_edge(b, c);
  return g;
}

// A size^3 GEMM -> a streaming op over its output (2 x 4 size^2 bytes) -> an op
// that runs nothing.
inline OpGraph kernel_graph(double size) {
  OpGraph g("kernels");
  Op mm;
  mm.name = "mm";
  mm.type = "MatMul";
  mm.flops = 2.0 * size * size * size;
  mm.bytes_accessed = 3 * 4 * size * size;
  mm.output_bytes = {4 * size * size};
  mm.shape = {{"M", size}, {"N", size}, {"K", size}};
  const int a = g.add_op(mm);
  Op relu;
  relu.name = "relu";
  relu.type = "Relu";
  relu.flops = size * size;
  relu.bytes_accessed = 2 * 4 * size * size;
  relu.output_bytes = {4 * size * size};
  const int b = g.add_op(relu);
  Op noop;
  noop.name = "noop";
  const int z = g.add_op(noop);
  g.add_edge(a, b);
  g.add_edge(b, z);
  return g;
}

// The steps the evaluator (a HardwareEvaluator) measured last time.
inline const Measurement& measurement_of(Evaluator& evaluator) {
  return dynamic_cast<HardwareEvaluator&>(evaluator).last_measurement();
}

// The fastest measured repeat of the evaluator's last step.
inline double fastest(Evaluator& evaluator) {
  const auto& steps = measurement_of(evaluator).step_us;
  return *std::min_element(steps.begin(), steps.end());
}

// Whether this machine can time two devices right now, judged without the
// executor: two plain threads pinned to the first two allowed cores each spin
// for 20 ms of wall time; if either got less than 80% of it as CPU time, some
// other process holds a core and measured times would show its time slices.
// True in an AddressSanitizer build (scripts/test --sanitize): instrumentation
// stretches the executor's own bookkeeping between ops 2-3x, so wall-clock bounds
// on measured times hold in the plain build only (as for the GUI's responsiveness
// check, which scripts/test --sanitize leaves out).
inline bool sanitized_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

inline bool cores_are_free() {
  std::vector<int> cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.empty()) return false;
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
  std::thread a(spin, cpus[0]);
  std::thread b(spin, cpus[cpus.size() > 1 ? 1 : 0]);
  a.join();
  b.join();
  return starved == 0;
}

}  // namespace aware::testing
