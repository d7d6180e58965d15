// The step plan: what running one placed training step on real devices means,
// worked out once and shared by every backend (CPU threads, CUDA streams).
//
// For each op it fixes the kernel that stands for the op's work (a GEMM, a
// streaming pass over memory, a timed spin for a cost that was measured
// elsewhere, or nothing), the buffers it writes, and what it waits for. Each
// tensor that crosses devices becomes one copy per (producer output, consumer
// device), run on the consumer's device into a buffer of its own. Every device
// runs its tasks (ops and incoming copies) from one list in priority order: a
// backend that can pick dynamically runs the first ready task of the list, one
// that cannot (a CUDA stream) issues the list in order; tasks of all devices in
// key order are a valid global issue order (every wait is on a smaller key).
//
// No threads, no allocation of device memory: pure bookkeeping, tested on its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

class Cluster;

enum class KernelKind : std::uint8_t {
  kNone,    // zero-cost op: runs nothing
  kGemm,    // `gemm_reps` GEMMs of m x k times k x n (single precision)
  kStream,  // reads `stream_bytes` / 2 and writes `stream_bytes` / 2
  kSpin,    // a measured cost and no work description: busy for `spin_us`
};
const char* kernel_kind_name(KernelKind kind);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                                static_cast<double>(k); }
  double bytes() const {  // A, B and C in single precision
    return 4.0 * (static_cast<double>(m) * static_cast<double>(k) +
                  static_cast<double>(k) * static_cast<double>(n) +
                  static_cast<double>(m) * static_cast<double>(n));
  }
};

struct StepPlanOptions {
  // An op without a GEMM shape runs a GEMM of equal FLOPs when flops / bytes_accessed
  // is at least this (compute-bound); otherwise a streaming pass over its bytes.
  double gemm_intensity = 4.0;
  // Largest buffer any one kernel may touch, bytes (a guard against absurd shapes).
  double max_kernel_bytes = 2e9;
  // Buffers share memory when the step's dependencies order one's uses before the
  // other's writer, as a framework's allocator reuses a tensor's memory after its
  // last use. Off: every
  // buffer is held for the whole step (what verify modes need: they check buffers
  // after the step).
  bool reuse_memory = true;
  // The backend runs each device's list in order (a CUDA stream): a tensor's
  // memory is then free for any writer later in the list than its last reader.
  // Otherwise (the CPU backend picks ready tasks) only for a writer the step's
  // dependencies order after every reader.
  bool in_order = false;
};

// One op as a device runs it.
struct PlannedOp {
  int op = -1;
  std::string name;             // the op's name, for messages
  int device = -1;
  KernelKind kind = KernelKind::kNone;
  GemmShape gemm;
  int gemm_reps = 0;
  double stream_bytes = 0;
  double spin_us = 0;
  std::vector<int> outputs;     // buffer id per output index (-1 for a 0-byte output)
  // The buffer the op reads for each of its in-edges, in the graph's in-edge
  // order: the producer's output buffer on this device, or the buffer a copy
  // delivered here; -1 for an edge that carries nothing. Real kernels
  // (hw/op_kernels.h) read these.
  std::vector<int> inputs;
  std::vector<int> wait_ops;    // ops on the same device that must finish first
  std::vector<int> wait_copies; // copies into this device that must land first
  std::string why;              // for kNone / kSpin / a changed shape: what the op runs and why
};

// One tensor moved from its producer's device into a buffer on `dst_device`.
struct PlannedCopy {
  int src_op = -1;
  int src_output = 0;
  int src_device = -1;
  int dst_device = -1;
  double bytes = 0;
  int src_buffer = -1;
  int dst_buffer = -1;
};

struct PlannedBuffer {
  int device = -1;
  double bytes = 0;
  // Where it lives in its device's arena (StepPlan::arena_bytes), bytes, and
  // its lifetime as positions in its device's task list (first: its writer;
  // last: its last reader there). `held`: for the whole step (read by a copy to
  // another device, whose progress the device's own order does not bound).
  double offset = 0;
  int first = -1, last = -1;
  bool held = false;
};

// A unit of work in a device's list: an op or an incoming copy.
struct PlannedTask {
  bool is_copy = false;
  int index = -1;       // into ops (op id) or copies
  double key = 0;       // global issue order: an op's topological rank; a copy, its producer's + 0.5
};

struct StepPlan {
  // The graph planned (not owned): valid while the graph that was evaluated lives,
  // which is the whole of an evaluation. Real kernels read its ops' types and shapes.
  const OpGraph* graph = nullptr;
  std::vector<PlannedOp> ops;          // by op id
  std::vector<PlannedCopy> copies;
  std::vector<PlannedBuffer> buffers;
  std::vector<std::vector<PlannedTask>> device_tasks;  // per device, ascending key
  // Per device: the largest GEMM operands and streaming span any of its ops needs
  // (scratch a backend allocates once per device).
  std::vector<GemmShape> gemm_scratch;     // m*k, k*n, m*n maxima (not one shape)
  std::vector<double> stream_scratch_bytes;
  // Per device: the arena its buffers are placed in (their largest offset +
  // size; every buffer's size rounded up to kBufferAlignment), and parameters
  // (counted, not allocated) + that arena + scratch + the largest op workspace.
  std::vector<double> arena_bytes;
  std::vector<double> planned_bytes;
  double bytes_moved = 0;
  int ops_running_nothing = 0;
  int ops_spinning = 0;
  bool feasible = true;
  std::string infeasible_reason;

  // All tasks of all devices in ascending key (ties: copies after ops, then device).
  std::vector<std::pair<int, PlannedTask>> issue_order() const;
};

// Buffers are placed at multiples of this in their device's arena.
constexpr double kBufferAlignment = 256;

// The GEMM the op's shape describes (MatMul M/N/K with an optional batch folded
// into M; a convolution as an implicit GEMM; an LSTM cell's gate GEMM), or an
// all-zero shape when the shape names none.
GemmShape gemm_from_shape(const Op& op);

// A square-ish GEMM of `flops` (m = n = k = cbrt(flops / 2), at least 1).
GemmShape gemm_of_flops(double flops);

// Plans one step. Throws what check_placement throws on a bad placement. A
// placement whose planned bytes exceed a device's memory comes back with
// feasible = false and an "out of memory" reason naming the device.
// With reuse_memory, a buffer may take the memory of another whose every use comes
// first: in list order when the backend runs its lists in order (in_order), else
// by the step's dependencies (each reader of the other is an ancestor of its
// writer); greedy by size, first fit. Reuse so adds no wait. Without in_order,
// graphs over 40,000 ops hold every buffer (the ancestry table costs n^2 / 8 bytes).
StepPlan make_step_plan(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                        const StepPlanOptions& options = {});

}  // namespace aware
