// What each op of a step plan runs on a GPU when the CUDA backend runs real work
// (kernels=real, its default): worked out here, without CUDA, so that the choice
// of kernel, operands and scratch is tested on every machine and the CUDA
// backend only launches what this says.
//
// Three kinds of real work, each on the tensors the op's producers wrote (the
// plan's buffers: PlannedOp::inputs) and into the op's own output buffers:
//  - gemm: an op whose shape names a GEMM (MatMul M/N/K, an LSTM cell's gates,
//    a convolution's implicit GEMM) runs that GEMM through cuBLAS with tensor
//    cores, in the working precision (BF16 by default, TF32 or FP32 as options),
//    FP32 accumulation. Operands come from the op's inputs in edge order, each
//    taken as the next operand when its buffer holds enough elements; an operand
//    no input can supply, and a result no output can hold, use the device's
//    scratch. A convolution runs the GEMM of its implicit-GEMM shape with its
//    input tensor as the first operand where it is large enough, not the
//    windowed gather a convolution library does (cuDNN is not used: see
//    hw/README.md): its arithmetic and operand sizes are the convolution's, its
//    memory access pattern is a GEMM's.
//  - traffic: an op without a GEMM shape and with bytes (elementwise ops,
//    reductions, normalisation, pooling, softmax, copies of shape) reads every
//    element of every input tensor and writes every element of every output
//    tensor in the working precision: out[t] = mean of the inputs' element t;
//    where the first output is smaller than the largest input, it receives the
//    fold sum (element c sums the elements t = c mod its size), a real
//    reduction. For elementwise ops and reductions this is the op's own work;
//    for normalisation, pooling and softmax it is their memory traffic with
//    simpler arithmetic, which is what bounds them on a GPU.
//  - depthwise: a depthwise convolution (DepthwiseConv2dNative and its input and
//    filter gradients) runs a direct window kernel of its own arithmetic (one
//    FMA per tap; the filter gradient a block reduction per tap), symmetric zero
//    padding that gives the recorded output size, on its input tensors: a GEMM
//    would be the wrong kernel for it (one filter per channel).
//  - update: an optimizer update (ApplyGradientDescent, ApplyMomentum,
//    ApplyRMSProp, ApplyAdam) reads its gradient and updates a real parameter
//    tensor of the op's `params` elements plus its optimizer slots (0, 1, 1, 2),
//    held privately on the op's device.
// Everything else keeps the plan's synthetic work (a GEMM of equal FLOPs, now in
// the working precision, a streaming pass, a spin) and is counted as such.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hw/op_kernels.h"
#include "hw/step_plan.h"

namespace aware {

enum class GpuPrecision : std::uint8_t { kBf16, kTf32, kFp32 };
const char* gpu_precision_name(GpuPrecision precision);
// "bf16", "tf32" or "fp32"; throws ConfigError naming `owner` otherwise.
GpuPrecision parse_gpu_precision(const std::string& text, const std::string& owner);
// Bytes of one stored element: 2 for BF16, 4 for TF32 and FP32 (TF32 is stored as FP32).
int gpu_element_bytes(GpuPrecision precision);

enum class GpuWorkKind : std::uint8_t {
  kSynthetic,  // the plan's own kernel (KernelKind), run in the working precision
  kGemm,
  kTraffic,
  kUpdate,
  kDepthwise,
};

// A depthwise convolution's geometry (NCHW, one filter per channel) and which
// of its three computations the op is.
struct DepthwiseShape {
  enum Role : std::uint8_t { kForward, kInputGrad, kFilterGrad };
  Role role = kForward;
  std::int64_t n = 0, c = 0, h = 0, w = 0, kh = 0, kw = 0, stride = 1, pad_h = 0, pad_w = 0, oh = 0, ow = 0;
  std::int64_t input_elements() const { return n * c * h * w; }
  std::int64_t output_elements() const { return n * c * oh * ow; }
  std::int64_t filter_elements() const { return c * kh * kw; }
  double flops() const { return 2.0 * static_cast<double>(output_elements()) * static_cast<double>(kh * kw); }
};

// A tensor the work reads or writes: a plan buffer, or (buffer = -1) the
// device's scratch; `elements` in the working precision.
struct GpuTensor {
  int buffer = -1;
  std::int64_t elements = 0;
};

struct GpuOpWork {
  GpuWorkKind kind = GpuWorkKind::kSynthetic;
  std::string category;  // "gemm", "conv-gemm", "elementwise", "reduction", "update", "synthetic"
  // kGemm: row-major C (m x n) = A (m x k) B (k x n), `batch` independent
  // products (a BatchMatMul's; 1 otherwise, where a batch shares its weight and
  // is part of m), `reps` times (a backward op of twice the forward's FLOPs runs
  // its GEMM twice: the input's and the weight's gradient).
  GemmShape gemm;
  std::int64_t batch = 1;
  int reps = 0;
  int a_buffer = -1, b_buffer = -1, c_buffer = -1;  // -1: the device's GEMM scratch
  // kDepthwise: the geometry; a_buffer and b_buffer are its two inputs (forward:
  // x and the filter; input gradient: dy and the filter; filter gradient: x and
  // dy), c_buffer its result, -1 for the same scratch as a GEMM's.
  DepthwiseShape depthwise;
  // kTraffic and kUpdate: tensors read, tensors written. For kUpdate the
  // written tensor is the private parameter (plus slots), which is also read.
  std::vector<GpuTensor> reads;
  std::vector<GpuTensor> writes;
  // kTraffic: the first write is smaller than the largest read: a fold reduction
  // (it needs `writes[0].elements` floats of the device's accumulator scratch).
  bool fold = false;
  // kUpdate: elements of the private parameter tensor and its slots, and how many slots.
  std::int64_t private_elements = 0;
  int slots = 0;
};

struct GpuWorkPlan {
  GpuPrecision precision = GpuPrecision::kBf16;
  std::vector<GpuOpWork> ops;  // by op id
  // Per device, in elements of the working precision unless said: the GEMM
  // scratch (largest A, B and C any GEMM on it takes from scratch, each), the
  // private parameter tensors (summed: each update op has its own), the fold
  // accumulator (floats: the largest fold output).
  std::vector<std::int64_t> scratch_a, scratch_b, scratch_c;
  std::vector<std::int64_t> private_elements;
  std::vector<std::int64_t> fold_floats;
  // Which ops run real work (by op id), and the coverage summary: real_ops and
  // real_flops count gemm, traffic and update work; ops with no work count as real.
  std::vector<char> real;
  KernelCoverage coverage;
  // "category x count" for every category that occurs, most ops first.
  std::vector<std::string> categories;
};

// Elements a plan buffer holds (its planned bytes / 4: the graphs count FP32).
std::int64_t gpu_buffer_elements(const StepPlan& plan, int buffer);

// Plans the real work of every op of `plan`. Pure bookkeeping.
GpuWorkPlan plan_gpu_work(const StepPlan& plan, GpuPrecision precision);

}  // namespace aware
