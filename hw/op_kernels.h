// Real kernels for the ops of a step plan: what a backend runs in place of the
// synthetic stand-ins (hw/step_plan.h's GEMM of equal FLOPs, streaming pass or
// spin) when a library that has them is linked. The CPU's are ATen's, through
// LibTorch (hw/aten_kernels.cc, in aware_hw_torch); this header is torch-free,
// so the backends and their tests build without LibTorch and fall back to the
// synthetic work.
//
// A kernel reads the plan's buffers its op reads (PlannedOp::inputs: producers'
// outputs and delivered copies) as tensors of the op's shapes and writes its
// results into the op's output buffers; what it needs and no edge carries (a
// weight no variable op feeds, an optimizer's slots, saved statistics) it holds
// privately, allocated at prepare().
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/step_plan.h"

namespace aware {

// What ran on real kernels, over the ops of one plan.
struct KernelCoverage {
  int ops = 0;               // ops of the graph
  int real_ops = 0;          // ops with a real kernel (ops with no work count as real)
  double flops = 0;          // the graph's FLOPs
  double real_flops = 0;     // FLOPs of ops with a real kernel
  double input_bytes = 0;            // bytes real kernels read as inputs
  double input_bytes_from_edges = 0; // of which from the buffers their in-edges fill
  std::vector<std::string> synthetic_types;  // op types that fell back, "Type x count"
};

class OpKernels {
 public:
  virtual ~OpKernels() = default;
  // "aten", for descriptions.
  virtual std::string name() const = 0;
  // Builds a kernel for every op of `plan` it knows; `buffers` are the plan's
  // buffers' addresses (by buffer id, nullptr for an empty one) as the backend
  // allocated them, valid until release(). Throws HardwareError naming the op.
  virtual void prepare(const StepPlan& plan, const std::vector<void*>& buffers) = 0;
  virtual bool has(int op) const = 0;
  // Runs op's kernel on the calling thread. Throws HardwareError naming the op.
  virtual void run(int op) = 0;
  // Called once by each worker thread before it runs kernels (thread settings:
  // one intra-op thread, denormals flushed), with the device it runs.
  virtual void bind_thread(int device) = 0;
  virtual KernelCoverage coverage() const = 0;
  // Bytes the kernels hold privately on each device (weights no edge feeds,
  // optimizer slots, saved statistics), and the most each device held at once
  // beyond the plan's buffers during the runs since prepare() (private tensors
  // plus the kernels' temporaries): measured by a counting allocator.
  virtual std::vector<double> peak_bytes() const = 0;
  // Frees what prepare() allocated. Safe to call twice.
  virtual void release() = 0;
};

using OpKernelsFactory = std::function<std::unique_ptr<OpKernels>()>;

// Installs the factory of real kernels for CPU devices (register_aten_kernels()
// does, where LibTorch is built). Not thread-safe: call at start-up.
void set_cpu_kernels_factory(OpKernelsFactory factory);
// Whether one is installed, and a new set of kernels from it (nullptr when none).
bool have_cpu_kernels();
std::unique_ptr<OpKernels> make_cpu_kernels();

}  // namespace aware
