#include "hw/cuda_work.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/errors.h"
#include "hw/cuda_check.h"
#include "hw/cuda_kernels.h"
#include "hw/executor.h"

namespace aware::cuda_detail {

void throw_cublas_error(cublasStatus_t status, const char* call, const std::string& where) {
  cudaGetLastError();
  std::string name(call);
  const size_t paren = name.find('(');
  if (paren != std::string::npos) name.resize(paren);
  throw HardwareError("cuda: " + where + ": " + name + " failed: " + cublasGetStatusName(status) + " (" +
                      cublasGetStatusString(status) + ")");
}

void launch_gemm(const WorkLaunch& on, const GemmShape& s, std::int64_t batch, const void* a, const void* b, void* c,
                 const std::string& where) {
  AWARE_CHECK(s.m <= INT_MAX && s.n <= INT_MAX && s.k <= INT_MAX && batch <= INT_MAX,
              where + ": GEMM dimensions beyond int");
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  // Keeps values of the order of the operands' (uniform in [-1, 1)) from op to op.
  const float alpha = std::sqrt(3.0f / static_cast<float>(std::max(1, k))), beta = 0.0f;
  const cudaDataType_t type = on.precision == GpuPrecision::kBf16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t compute =
      on.precision == GpuPrecision::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (batch <= 1) {
    AWARE_CUBLAS_CHECK(cublasGemmEx(on.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, type, n, a, type, k, &beta,
                                    c, type, n, compute, CUBLAS_GEMM_DEFAULT),
                       where);
  } else {
    AWARE_CUBLAS_CHECK(cublasGemmStridedBatchedEx(on.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, type, n,
                                                  s.k * s.n, a, type, k, s.m * s.k, &beta, c, type, n, s.m * s.n,
                                                  static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
                       where);
  }
}

namespace {

// A traffic or update op: its reads and writes, more than one launch takes split
// over several launches, each a share of both (the fold stays with the first).
void launch_traffic_work(const WorkLaunch& on, const GpuOpWork& w, const std::vector<void*>& buffers,
                         void* private_tensor, const std::string& where) {
  std::vector<GpuTensor> reads = w.reads;
  std::vector<void*> write_ptrs, read_ptrs;
  for (const GpuTensor& t : w.writes) write_ptrs.push_back(t.buffer >= 0 ? buffers[t.buffer] : private_tensor);
  for (const GpuTensor& t : reads) read_ptrs.push_back(buffers[t.buffer]);
  if (w.kind == GpuWorkKind::kUpdate) {  // the parameter and its slots are read too
    reads.push_back(w.writes[0]);
    read_ptrs.push_back(write_ptrs[0]);
  }
  const size_t groups = std::max<size_t>(
      1, std::max((reads.size() + kMaxTrafficReads - 1) / kMaxTrafficReads,
                  (w.writes.size() + kMaxTrafficWrites - 1) / kMaxTrafficWrites));
  for (size_t g = 0; g < groups; ++g) {
    TrafficArgs args;
    for (size_t j = g * kMaxTrafficReads; j < reads.size() && j < (g + 1) * kMaxTrafficReads; ++j) {
      args.reads[args.num_reads] = read_ptrs[j];
      args.read_counts[args.num_reads++] = static_cast<size_t>(reads[j].elements);
    }
    for (size_t k = g * kMaxTrafficWrites; k < w.writes.size() && k < (g + 1) * kMaxTrafficWrites; ++k) {
      args.writes[args.num_writes] = write_ptrs[k];
      args.write_counts[args.num_writes++] = static_cast<size_t>(w.writes[k].elements);
    }
    args.bf16 = on.precision == GpuPrecision::kBf16;
    args.fold = w.fold && g == 0;
    args.fold_acc = on.fold_acc;
    args.max_blocks = on.max_blocks;
    AWARE_CUDA_CHECK(launch_traffic(args, on.stream), where);
  }
}

}  // namespace

void launch_op_work(const WorkLaunch& on, const GpuOpWork& w, const std::vector<void*>& buffers,
                    void* private_tensor, const std::string& where) {
  const auto tensor = [&](int id, void* scratch) { return id >= 0 ? buffers[id] : scratch; };
  switch (w.kind) {
    case GpuWorkKind::kGemm: {
      const void* a = tensor(w.a_buffer, on.scratch_a);
      const void* b = tensor(w.b_buffer, on.scratch_b);
      void* c = tensor(w.c_buffer, on.scratch_c);
      for (int r = 0; r < w.reps; ++r) launch_gemm(on, w.gemm, w.batch, a, b, c, where);
      return;
    }
    case GpuWorkKind::kTraffic:
    case GpuWorkKind::kUpdate:
      launch_traffic_work(on, w, buffers, private_tensor, where);
      return;
    case GpuWorkKind::kDepthwise: {
      const DepthwiseShape& g = w.depthwise;
      DepthwiseArgs args;
      args.a = tensor(w.a_buffer, on.scratch_a);
      args.b = tensor(w.b_buffer, on.scratch_b);
      args.c = tensor(w.c_buffer, on.scratch_c);
      args.n = g.n;
      args.channels = g.c;
      args.h = g.h;
      args.w = g.w;
      args.kh = g.kh;
      args.kw = g.kw;
      args.stride = g.stride;
      args.pad_h = g.pad_h;
      args.pad_w = g.pad_w;
      args.oh = g.oh;
      args.ow = g.ow;
      args.role = static_cast<int>(g.role);
      args.bf16 = on.precision == GpuPrecision::kBf16;
      args.max_blocks = on.max_blocks;
      AWARE_CUDA_CHECK(launch_depthwise(args, on.stream), where);
      return;
    }
    case GpuWorkKind::kSynthetic:
      break;
  }
  AWARE_CHECK(false, where + ": planned as synthetic, run as real");
}

}  // namespace aware::cuda_detail
