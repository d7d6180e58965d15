// The CUDA backend's kernels, behind plain host functions that launch them, so
// that only hw/cuda_kernels.cu goes through nvcc (internal to hw/: this header
// names CUDA types). Each launcher returns cudaGetLastError() after its launch:
// check it with AWARE_CUDA_CHECK. All run on the current device's `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace aware::cuda_detail {

// Threads per block of the grid-stride kernels.
constexpr int kKernelThreads = 256;

// Fills `count` floats at `data` with pseudo-random values in [-1, 1) from `seed`.
cudaError_t launch_fill(float* data, std::size_t count, unsigned seed, unsigned blocks,
                        cudaStream_t stream);

// The streaming op: dst[i] = src[i] * 0.5 + 1 for `count` floats (reads
// 4 * count bytes, writes as many).
cudaError_t launch_stream_pass(const float* src, float* dst, std::size_t count, unsigned blocks,
                               cudaStream_t stream);

// One thread busy for `ns` of wall time (the GPU's %globaltimer), or until
// `*abort_flag` (mapped host memory, read every 10 us) becomes non-zero.
cudaError_t launch_spin(unsigned long long ns, const int* abort_flag, cudaStream_t stream);

// Loads these kernels onto the current device now (with CUDA_MODULE_LOADING=LAZY,
// the default, a kernel is loaded at its first launch, inside whatever is timed).
cudaError_t preload_kernels();

}  // namespace aware::cuda_detail
