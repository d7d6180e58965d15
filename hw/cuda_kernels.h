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

// Fills `count` elements at `data` (BF16 when `bf16`, else FP32) with
// pseudo-random values in [-1, 1) from `seed`.
cudaError_t launch_fill_elements(void* data, std::size_t count, bool bf16, unsigned seed,
                                 unsigned blocks, cudaStream_t stream);

// The real memory-bound work of one op (hw/gpu_work.h's traffic and update):
// up to kMaxTrafficReads tensors read and kMaxTrafficWrites written, all BF16
// when `bf16`, else FP32. Over t < the largest count: v = the mean of the reads'
// element t (those that have one); every write k gets v at t < its count,
// except that with `fold` the first write, smaller than the largest read,
// receives for each of its elements c the sum of v over t = c mod its count,
// divided by the number of such t (accumulated in `fold_acc`, count floats of
// the first write, then converted). A read may alias a write (an in-place update).
constexpr int kMaxTrafficReads = 4;
constexpr int kMaxTrafficWrites = 3;
struct TrafficArgs {
  const void* reads[kMaxTrafficReads] = {};
  std::size_t read_counts[kMaxTrafficReads] = {};
  int num_reads = 0;
  void* writes[kMaxTrafficWrites] = {};
  std::size_t write_counts[kMaxTrafficWrites] = {};
  int num_writes = 0;
  bool bf16 = true;
  bool fold = false;
  float* fold_acc = nullptr;
  unsigned max_blocks = 1;  // blocks of kKernelThreads that fill the GPU
};
cudaError_t launch_traffic(const TrafficArgs& args, cudaStream_t stream);

// A depthwise convolution's three computations (hw/gpu_work.h's DepthwiseShape;
// NCHW, one filter of kh x kw per channel, taps outside the input read as zero):
// role 0: c = conv(a = x, b = filter); role 1: c = dx from a = dy, b = filter;
// role 2: c = d filter from a = x, b = dy (one block per tap, reduced in it).
struct DepthwiseArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  long long n = 0, channels = 0, h = 0, w = 0, kh = 0, kw = 0, stride = 1, pad_h = 0, pad_w = 0, oh = 0, ow = 0;
  int role = 0;
  bool bf16 = true;
  unsigned max_blocks = 1;
};
cudaError_t launch_depthwise(const DepthwiseArgs& args, cudaStream_t stream);

// Loads these kernels onto the current device now (with CUDA_MODULE_LOADING=LAZY,
// the default, a kernel is loaded at its first launch, inside whatever is timed).
cudaError_t preload_kernels();

}  // namespace aware::cuda_detail
