// The CPU backend: each cluster device is a worker thread pinned to a core.
//
// A worker runs its device's task list, always the task that became ready first
// (ties, and `order=rank`: the first in the list, by topological rank): its real kernel (ATen's, where linked: hw/op_kernels.h) reading the
// buffers its producers wrote, or else GEMMs through single-threaded OpenBLAS on per-device scratch, streaming
// ops as a read-and-write pass over memory, incoming copies as a memcpy from the
// producer's output buffer into a buffer of its own (the consumer's core does the
// copy: a CPU has no copy engine). Every op then writes its outputs, so a copy
// moves bytes that were just produced. Workers wait by spinning on flags (one
// per core, so waiting costs no one else) and yield when devices share a core.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "hw/executor.h"

namespace aware {

struct CpuBackendOptions {
  // Core of device i: cores[i % cores.size()]; empty = the CPUs this process may
  // use, in order.
  std::vector<int> cores;
  bool pin = true;
  // Before each op runs, check that every tensor it reads holds what its writer
  // left this run (a copy: its producer's bytes; a synthetic producer's output:
  // its signature), so that a copy that did not arrive or memory reused too
  // early is an error (for tests; costs a pass over the inputs, between ops).
  bool verify = false;
  // "aten": every op with a real kernel (hw/op_kernels.h) runs it, the rest the
  // plan's synthetic work; "synthetic": every op the synthetic work; "auto": aten
  // where real kernels are linked (aware_hw_torch), else synthetic.
  std::string kernels = "auto";
  // Which ready task a worker runs next: "fifo", the one whose last input landed
  // first (ties by topological rank), as the analytic simulator queues ready ops
  // (sim/analytic/contention.cc: by ready time, then rank) and as Placeto's
  // simulator does; "rank", the lowest topological rank among the ready ones.
  // The order decides which tensors are alive together, so with "rank" the
  // measured memory is not the schedule the simulator predicts.
  std::string order = "fifo";
};

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options);

// The CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

// The `cpu` evaluator with these options (what the registry builds).
std::unique_ptr<Evaluator> make_cpu_evaluator(const ExecutorOptions& executor,
                                              const CpuBackendOptions& cpu);

// Threads of this process right now (from /proc/self/task), for leak checks.
int process_thread_count();

}  // namespace aware
