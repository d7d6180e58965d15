// Launching an op's real work (hw/gpu_work.h) on a CUDA stream: its GEMM through
// cuBLAS in the working precision, its traffic, update or depthwise kernels
// (hw/cuda_kernels.h) on the tensors the plan gave it. Host code; internal to
// hw/ (this header names CUDA types). The backend (hw/cuda_backend.cc) owns the
// streams, handles and memory; this only launches on them.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hw/gpu_work.h"

namespace aware::cuda_detail {

// One device's means to launch: its cuBLAS handle (bound to `stream`), the
// working precision, the blocks that fill its GPU, and the scratch for GEMM
// operands no tensor supplies and for fold reductions.
struct WorkLaunch {
  cublasHandle_t blas = nullptr;
  cudaStream_t stream = nullptr;
  GpuPrecision precision = GpuPrecision::kBf16;
  unsigned max_blocks = 1;
  void* scratch_a = nullptr;
  void* scratch_b = nullptr;
  void* scratch_c = nullptr;
  float* fold_acc = nullptr;
};

// Row-major C = A B (m x k times k x n), `batch` of them strided, in the working
// precision with FP32 accumulation (as column-major C^T = B^T A^T). Throws
// HardwareError naming `where`.
void launch_gemm(const WorkLaunch& on, const GemmShape& shape, std::int64_t batch, const void* a, const void* b,
                 void* c, const std::string& where);

// Op `work`'s real work on the plan's buffers (by buffer id) and, for an update,
// its private parameter tensor. Throws HardwareError naming `where`.
void launch_op_work(const WorkLaunch& on, const GpuOpWork& work, const std::vector<void*>& buffers,
                    void* private_tensor, const std::string& where);

}  // namespace aware::cuda_detail
