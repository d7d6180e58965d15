// The CUDA backend's kernels (see hw/cuda_kernels.h). Nothing else here: the
// host logic is plain C++ in hw/cuda_backend.cc.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>

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

__device__ float to_float(float x) { return x; }
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ T from_float(float x);
template <>
__device__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16(x);
}

template <typename T>
__global__ void fill_elements_kernel(T* data, size_t count, unsigned seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    data[i] = from_float<T>(static_cast<float>(h & 0xffffu) / 32768.0f - 1.0f);
  }
}

// The pointers and counts of one traffic op, passed by value (kernel parameters).
template <typename T>
struct TrafficView {
  const T* reads[kMaxTrafficReads];
  size_t read_counts[kMaxTrafficReads];
  int num_reads;
  T* writes[kMaxTrafficWrites];
  size_t write_counts[kMaxTrafficWrites];
  int num_writes;
  size_t total;  // the largest count of all
  float scale;   // 1 / number of reads
};

template <typename T>
__device__ float traffic_value(const TrafficView<T>& v, size_t t) {
  float sum = 0;
  for (int j = 0; j < v.num_reads; ++j)
    if (t < v.read_counts[j]) sum += to_float(v.reads[j][t]);
  return sum * v.scale;
}

// Elementwise: every write k gets v(t) at t < its count (first_write = 0), or
// every write but the first (first_write = 1, the fold kernel's companions).
template <typename T>
__global__ void map_kernel(TrafficView<T> v, int first_write) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t t = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < v.total;
       t += stride) {
    const float x = traffic_value(v, t);
    for (int k = first_write; k < v.num_writes; ++k)
      if (t < v.write_counts[k]) v.writes[k][t] = from_float<T>(x);
  }
}

// The fold reduction into the first write (count c0 < total): thread g < width
// visits t = g, g + width, g + 2 width, ... When width is a multiple of c0
// (`per_thread_column`) every t a thread visits folds onto element g mod c0, so
// it sums in a register and adds once; when c0 is moreover a power of two up to
// 32 (width then a multiple of 32), the lanes of a warp that share an element
// first add among themselves. Otherwise each t is added on its own (c0 is then
// large: few collisions). The other writes are written on the way.
template <typename T>
__global__ void fold_kernel(TrafficView<T> v, float* acc, size_t width, bool per_thread_column) {
  const size_t c0 = v.write_counts[0];
  const size_t g = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float sum = 0;
  if (g < width) {
    for (size_t t = g; t < v.total; t += width) {
      const float x = traffic_value(v, t);
      for (int k = 1; k < v.num_writes; ++k)
        if (t < v.write_counts[k]) v.writes[k][t] = from_float<T>(x);
      if (per_thread_column)
        sum += x;
      else
        atomicAdd(&acc[t % c0], x);
    }
  }
  if (!per_thread_column) return;
  if (c0 <= 32 && (c0 & (c0 - 1)) == 0) {
    for (unsigned offset = 16; offset >= c0; offset >>= 1)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if ((threadIdx.x & 31u) >= c0) return;
  }
  if (g < width) atomicAdd(&acc[g % c0], sum);
}

template <typename T>
__global__ void fold_finish_kernel(const float* acc, T* out, size_t count, float scale) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
    out[i] = from_float<T>(acc[i] * scale);
}

template <typename T>
cudaError_t run_traffic(const TrafficArgs& a, cudaStream_t stream) {
  TrafficView<T> v{};
  v.num_reads = std::min(a.num_reads, kMaxTrafficReads);
  v.num_writes = std::min(a.num_writes, kMaxTrafficWrites);
  v.total = 0;
  for (int j = 0; j < v.num_reads; ++j) {
    v.reads[j] = static_cast<const T*>(a.reads[j]);
    v.read_counts[j] = a.read_counts[j];
    v.total = std::max(v.total, a.read_counts[j]);
  }
  for (int k = 0; k < v.num_writes; ++k) {
    v.writes[k] = static_cast<T*>(a.writes[k]);
    v.write_counts[k] = a.write_counts[k];
    v.total = std::max(v.total, a.write_counts[k]);
  }
  v.scale = 1.0f / static_cast<float>(std::max(1, v.num_reads));
  if (v.total == 0) return cudaSuccess;
  const size_t threads = kKernelThreads;
  const size_t wanted = (v.total + threads - 1) / threads;
  const size_t full = std::max<size_t>(1, std::min<size_t>(wanted, a.max_blocks));
  if (!a.fold || v.num_writes == 0 || v.write_counts[0] == 0 || v.write_counts[0] >= v.total) {
    map_kernel<T><<<static_cast<unsigned>(full), kKernelThreads, 0, stream>>>(v, 0);
    return cudaGetLastError();
  }
  const size_t c0 = v.write_counts[0];
  cudaError_t error = cudaMemsetAsync(a.fold_acc, 0, c0 * sizeof(float), stream);
  if (error != cudaSuccess) return error;
  // `width` threads. Where the output is small enough, a multiple of c0 (each
  // thread one column); small outputs that are not a power of two up to 32 get
  // at most 4096 threads per column, so that the atomics per element stay in the
  // thousands.
  const size_t most = full * threads;
  size_t width = most;
  bool per_thread_column = false;
  if (c0 <= most) {
    size_t per_column = most / c0;
    const bool warp_folds = c0 <= 32 && (c0 & (c0 - 1)) == 0;
    if (!warp_folds) per_column = std::min<size_t>(per_column, 4096);
    width = c0 * per_column;  // a power of two c0 <= 32 divides most, a multiple of 32
    per_thread_column = true;
  }
  const size_t blocks = (width + threads - 1) / threads;
  fold_kernel<T><<<static_cast<unsigned>(blocks), kKernelThreads, 0, stream>>>(
      v, a.fold_acc, width, per_thread_column);
  error = cudaGetLastError();
  if (error != cudaSuccess) return error;
  const float rows = static_cast<float>((v.total + c0 - 1) / c0);
  const size_t finish = std::max<size_t>(1, std::min<size_t>((c0 + threads - 1) / threads, a.max_blocks));
  fold_finish_kernel<T><<<static_cast<unsigned>(finish), kKernelThreads, 0, stream>>>(
      a.fold_acc, static_cast<T*>(v.writes[0]), c0, 1.0f / rows);
  return cudaGetLastError();
}

// Depthwise convolution, forward: one thread per output element.
template <typename T>
__global__ void depthwise_forward_kernel(const T* x, const T* f, T* y, DepthwiseArgs g, float scale) {
  const size_t total = static_cast<size_t>(g.n * g.channels * g.oh * g.ow);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t idx = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const long long ox = idx % g.ow, oy = (idx / g.ow) % g.oh, nc = idx / (g.ow * g.oh), c = nc % g.channels;
    const T* plane = x + nc * g.h * g.w;
    const T* taps = f + c * g.kh * g.kw;
    float acc = 0;
    for (long long i = 0; i < g.kh; ++i) {
      const long long iy = oy * g.stride + i - g.pad_h;
      if (iy < 0 || iy >= g.h) continue;
      for (long long j = 0; j < g.kw; ++j) {
        const long long ix = ox * g.stride + j - g.pad_w;
        if (ix < 0 || ix >= g.w) continue;
        acc += to_float(plane[iy * g.w + ix]) * to_float(taps[i * g.kw + j]);
      }
    }
    y[idx] = from_float<T>(acc * scale);
  }
}

// Its input gradient: one thread per input element, gathering the outputs whose
// window covers it.
template <typename T>
__global__ void depthwise_input_grad_kernel(const T* dy, const T* f, T* dx, DepthwiseArgs g, float scale) {
  const size_t total = static_cast<size_t>(g.n * g.channels * g.h * g.w);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t idx = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < total; idx += stride) {
    const long long ix = idx % g.w, iy = (idx / g.w) % g.h, nc = idx / (g.w * g.h), c = nc % g.channels;
    const T* plane = dy + nc * g.oh * g.ow;
    const T* taps = f + c * g.kh * g.kw;
    float acc = 0;
    for (long long i = 0; i < g.kh; ++i) {
      const long long ty = iy + g.pad_h - i;
      if (ty < 0 || ty % g.stride != 0 || ty / g.stride >= g.oh) continue;
      for (long long j = 0; j < g.kw; ++j) {
        const long long tx = ix + g.pad_w - j;
        if (tx < 0 || tx % g.stride != 0 || tx / g.stride >= g.ow) continue;
        acc += to_float(plane[(ty / g.stride) * g.ow + tx / g.stride]) * to_float(taps[i * g.kw + j]);
      }
    }
    dx[idx] = from_float<T>(acc * scale);
  }
}

// Its filter gradient: one block per (channel, tap), summing x * dy over the
// batch and the output positions, reduced in shared memory.
template <typename T>
__global__ void depthwise_filter_grad_kernel(const T* x, const T* dy, T* df, DepthwiseArgs g, float scale) {
  __shared__ float partial[kKernelThreads];
  const long long taps = g.kh * g.kw;
  for (long long tap = blockIdx.x; tap < g.channels * taps; tap += gridDim.x) {
    const long long c = tap / taps, i = (tap % taps) / g.kw, j = tap % g.kw;
    const long long per_image = g.oh * g.ow;
    float acc = 0;
    for (long long t = threadIdx.x; t < g.n * per_image; t += blockDim.x) {
      const long long nn = t / per_image, oy = (t % per_image) / g.ow, ox = t % g.ow;
      const long long iy = oy * g.stride + i - g.pad_h, ix = ox * g.stride + j - g.pad_w;
      if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
      const long long nc = nn * g.channels + c;
      acc += to_float(x[(nc * g.h + iy) * g.w + ix]) * to_float(dy[nc * per_image + oy * g.ow + ox]);
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half >>= 1) {
      if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) df[tap] = from_float<T>(partial[0] * scale);
    __syncthreads();
  }
}

template <typename T>
cudaError_t run_depthwise(const DepthwiseArgs& g, cudaStream_t stream) {
  const size_t threads = kKernelThreads;
  const auto blocks_for = [&](long long count) {
    const size_t wanted = (static_cast<size_t>(count) + threads - 1) / threads;
    return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(wanted, g.max_blocks)));
  };
  const auto* a = static_cast<const T*>(g.a);
  const auto* b = static_cast<const T*>(g.b);
  auto* c = static_cast<T*>(g.c);
  const float window = 1.0f / static_cast<float>(std::max(1LL, g.kh * g.kw));
  if (g.role == 0) {
    depthwise_forward_kernel<T><<<blocks_for(g.n * g.channels * g.oh * g.ow), kKernelThreads, 0, stream>>>(
        a, b, c, g, window);
  } else if (g.role == 1) {
    depthwise_input_grad_kernel<T><<<blocks_for(g.n * g.channels * g.h * g.w), kKernelThreads, 0, stream>>>(
        a, b, c, g, window);
  } else {
    const long long taps = g.channels * g.kh * g.kw;
    const unsigned blocks = static_cast<unsigned>(std::max<long long>(1, std::min<long long>(taps, 1LL << 20)));
    depthwise_filter_grad_kernel<T><<<blocks, kKernelThreads, 0, stream>>>(
        a, b, c, g, 1.0f / static_cast<float>(std::max(1LL, g.n * g.oh * g.ow)));
  }
  return cudaGetLastError();
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

cudaError_t launch_fill_elements(void* data, std::size_t count, bool bf16, unsigned seed,
                                 unsigned blocks, cudaStream_t stream) {
  if (bf16)
    fill_elements_kernel<__nv_bfloat16>
        <<<blocks, kKernelThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed);
  else
    fill_elements_kernel<float><<<blocks, kKernelThreads, 0, stream>>>(static_cast<float*>(data), count, seed);
  return cudaGetLastError();
}

cudaError_t launch_traffic(const TrafficArgs& args, cudaStream_t stream) {
  return args.bf16 ? run_traffic<__nv_bfloat16>(args, stream) : run_traffic<float>(args, stream);
}

cudaError_t launch_depthwise(const DepthwiseArgs& args, cudaStream_t stream) {
  return args.bf16 ? run_depthwise<__nv_bfloat16>(args, stream) : run_depthwise<float>(args, stream);
}

cudaError_t launch_spin(unsigned long long ns, const int* abort_flag, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns, abort_flag);
  return cudaGetLastError();
}

cudaError_t preload_kernels() {
  cudaFuncAttributes attributes{};
  for (const void* kernel :
       {reinterpret_cast<const void*>(fill_kernel), reinterpret_cast<const void*>(stream_kernel),
        reinterpret_cast<const void*>(spin_kernel),
        reinterpret_cast<const void*>(fill_elements_kernel<float>),
        reinterpret_cast<const void*>(fill_elements_kernel<__nv_bfloat16>),
        reinterpret_cast<const void*>(map_kernel<float>),
        reinterpret_cast<const void*>(map_kernel<__nv_bfloat16>),
        reinterpret_cast<const void*>(fold_kernel<float>),
        reinterpret_cast<const void*>(fold_kernel<__nv_bfloat16>),
        reinterpret_cast<const void*>(fold_finish_kernel<float>),
        reinterpret_cast<const void*>(fold_finish_kernel<__nv_bfloat16>),
        reinterpret_cast<const void*>(depthwise_forward_kernel<float>),
        reinterpret_cast<const void*>(depthwise_forward_kernel<__nv_bfloat16>),
        reinterpret_cast<const void*>(depthwise_input_grad_kernel<float>),
        reinterpret_cast<const void*>(depthwise_input_grad_kernel<__nv_bfloat16>),
        reinterpret_cast<const void*>(depthwise_filter_grad_kernel<float>),
        reinterpret_cast<const void*>(depthwise_filter_grad_kernel<__nv_bfloat16>)}) {
    const cudaError_t error = cudaFuncGetAttributes(&attributes, kernel);
    if (error != cudaSuccess) return error;
  }
  return cudaSuccess;
}

}  // namespace aware::cuda_detail
