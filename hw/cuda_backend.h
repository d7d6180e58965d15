// The CUDA backend: each cluster device is a CUDA stream on a GPU of this machine.
//
// Several logical devices may share one physical GPU (device i runs on
// gpus[i mod gpus.size()]); they are then separate streams on the same SMs and
// memory, so they interfere the way two jobs on one GPU do. A step is issued in
// the plan's global issue order: an op's stream waits on the end events of what
// it depends on, records a start event, runs its kernel and records an end
// event. By default (real work, hw/gpu_work.h) an op runs its own GEMM through
// cuBLAS's tensor cores in BF16 (TF32 or FP32 as options) on its producers'
// tensors, or an elementwise, reduction or optimizer-update kernel over its real
// input and output tensors; the rest, and every op with real work off, run the
// plan's synthetic stand-ins (a GEMM of equal FLOPs, a streaming pass, a timed
// spin) and write a signature into their output buffers. A copy runs on the consumer's stream after its producer's end event:
// device to device on one GPU, peer to peer between GPUs that allow it, staged
// through pinned host memory otherwise. Times come from the events.
//
// This header names no CUDA type: it is included by code built without nvcc.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/registry.h"
#include "hw/executor.h"
#include "hw/gpu_work.h"

namespace aware {

struct CudaBackendOptions {
  // Physical GPU of device i: gpus[i % gpus.size()]; empty = every visible GPU in order.
  std::vector<int> gpus;
  // After each run, copy every received buffer back to the host and check that it
  // holds its producer's signature of that run (for tests; untimed, costs a pass).
  bool verify = false;
  // Every copy between two devices goes down to pinned host memory and up again,
  // even on one GPU or where peer access exists: to exercise that path on any
  // machine, or to stand for a host-staged link.
  bool stage_copies = false;
  // Real work (hw/gpu_work.h) rather than the plan's synthetic stand-ins, and
  // the precision it runs in (synthetic GEMMs run in it too).
  bool real_work = true;
  GpuPrecision precision = GpuPrecision::kBf16;
};

// Visible CUDA devices; 0 (never throws) without a driver or a GPU. Cached after
// the first call. Thread-safe.
int cuda_device_count();

// Why cuda_device_count() is 0, in one line ("no CUDA device: cudaGetDeviceCount
// returned ..."); empty when a GPU is present. Thread-safe.
std::string cuda_unavailable_reason();

// Bytes of `gpu`'s memory in use by anyone (total - free, cudaMemGetInfo), for
// leak checks. Throws HardwareError when the query fails or `gpu` does not exist.
std::size_t cuda_memory_used_bytes(int gpu);

// A backend on this machine's GPUs. Throws HardwareError with
// cuda_unavailable_reason() when there is no GPU, and ConfigError when `options`
// names a GPU that does not exist. Not thread-safe: one evaluation at a time.
std::unique_ptr<Backend> make_cuda_backend(const CudaBackendOptions& options);

// The `cuda` evaluator with these options (what the registry builds). Throws what
// make_cuda_backend throws for these options.
std::unique_ptr<Evaluator> make_cuda_evaluator(const ExecutorOptions& executor,
                                               const CudaBackendOptions& cuda);

// This machine's GPUs as a cluster, finalized: `logical_devices` devices named
// cuda0, cuda1, ... (0 = one per GPU), device i on GPU gpus[i mod n] (empty gpus =
// every visible GPU). Device figures come from what the driver reports: kind = the
// GPU's name, FP32 peak from SMs x clock x FP32 lanes, memory size (split evenly
// between the logical devices of one GPU) and bandwidth from the memory clock and
// bus width. Links join every pair of devices; see the .cc for the (estimated)
// rates. Throws HardwareError with cuda_unavailable_reason() without a GPU, and
// ConfigError for a bad count or GPU number.
Cluster cuda_host_cluster(int logical_devices = 0, const std::vector<int>& gpus = {});

// Registers the evaluator "cuda" (options: `executor_specs` + gpus + verify;
// traits deterministic=0, measured=1, needs=gpu) and the cluster presets
// "cuda-host" (cuda_host_cluster()) and "cuda-host:2", ":4", ":8" (that many
// logical devices over the GPUs, round robin). Always registers, GPU or not:
// without one, creating the evaluator or building a preset throws HardwareError
// with the one-line reason. Called by register_hw_evaluators() (hw/register.cc).
void register_cuda_evaluator(std::vector<OptionSpec> executor_specs);

}  // namespace aware
