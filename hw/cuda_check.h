// The checking macros every CUDA runtime and cuBLAS call of the CUDA backend goes
// through (internal to hw/: this header names CUDA types).
//
//   AWARE_CUDA_CHECK(cudaMalloc(&p, n), "prepare: a buffer on " + label);
//
// On failure it throws HardwareError "cuda: WHERE: CALL failed: NAME (TEXT)",
// where CALL is the function's name and WHERE is evaluated only then (so it may
// build a string). Non-sticky errors are cleared first, so the next call does
// not report them again.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

namespace aware::cuda_detail {

// Throws HardwareError for `error` returned by `call` (the call's source text).
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const std::string& where);

// "cudaErrorMemoryAllocation (out of memory)".
std::string cuda_error_text(cudaError_t error);

// Throws HardwareError "cuda: WHERE: CALL failed: STATUS (TEXT)" for a cuBLAS `status`.
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const std::string& where);

}  // namespace aware::cuda_detail

#define AWARE_CUDA_CHECK(call, where)                                             \
  do {                                                                            \
    const cudaError_t aware_cuda_status_ = (call);                                \
    if (aware_cuda_status_ != cudaSuccess)                                        \
      ::aware::cuda_detail::throw_cuda_error(aware_cuda_status_, #call, (where)); \
  } while (0)

// The same for cuBLAS calls.
#define AWARE_CUBLAS_CHECK(call, where)                                                \
  do {                                                                                 \
    const cublasStatus_t aware_cublas_status_ = (call);                                \
    if (aware_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                 \
      ::aware::cuda_detail::throw_cublas_error(aware_cublas_status_, #call, (where));   \
  } while (0)
