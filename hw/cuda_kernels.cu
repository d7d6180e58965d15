// The CUDA backend's kernels (see hw/cuda_kernels.h). Nothing else here: the
// host logic is plain C++ in hw/cuda_backend.cc.
#include <cuda_runtime.h>

#include "hw/cuda_kernels.h"

namespace aware::cuda_detail {

namespace {

// Pseudo-random values in [-1, 1): GEMMs on zeros draw less power and so run
// at higher clocks than real ones would.
__global__ void fill_kernel(float* data, size_t count, unsigned seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    data[i] = static_cast<float>(h & 0xffffu) / 32768.0f - 1.0f;
  }
}

// The streaming op: reads one half of its span and writes the other.
__global__ void stream_kernel(const float* __restrict__ src, float* __restrict__ dst,
                              size_t count) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    dst[i] = src[i] * 0.5f + 1.0f;
}

__device__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Busy for `ns` of wall time, or until the host raises `abort` (a timed-out step).
// %globaltimer rather than clock64(): SM cycles per microsecond change with the
// clock the GPU runs at (boost, power capping), wall time does not.
// The flag lives in host memory: it is read every 10 us, not on every tick.
__global__ void spin_kernel(unsigned long long ns, const volatile int* abort) {
  const unsigned long long start = global_timer_ns();
  unsigned long long now = start, checked = start;
  while (now - start < ns) {
    if (now - checked >= 10000) {
      if (*abort) return;
      checked = now;
    }
    now = global_timer_ns();
  }
}

}  // namespace

cudaError_t launch_fill(float* data, std::size_t count, unsigned seed, unsigned blocks,
                        cudaStream_t stream) {
  fill_kernel<<<blocks, kKernelThreads, 0, stream>>>(data, count, seed);
  return cudaGetLastError();
}

cudaError_t launch_stream_pass(const float* src, float* dst, std::size_t count, unsigned blocks,
                               cudaStream_t stream) {
  stream_kernel<<<blocks, kKernelThreads, 0, stream>>>(src, dst, count);
  return cudaGetLastError();
}

cudaError_t launch_spin(unsigned long long ns, const int* abort_flag, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns, abort_flag);
  return cudaGetLastError();
}

cudaError_t preload_kernels() {
  cudaFuncAttributes attributes{};
  for (const void* kernel :
       {reinterpret_cast<const void*>(fill_kernel), reinterpret_cast<const void*>(stream_kernel),
        reinterpret_cast<const void*>(spin_kernel)}) {
    const cudaError_t error = cudaFuncGetAttributes(&attributes, kernel);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace aware::cuda_detail
