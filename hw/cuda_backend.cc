// The CUDA backend (see hw/cuda_backend.h): streams, events, cuBLAS, copies.
// Host code only; the kernels are in hw/cuda_kernels.cu.
//
// A CUDA stream cannot pick its next task dynamically, so each device's stream
// receives its tasks in the plan's global issue order; every cross-stream wait
// is then on an event that was already recorded in this run (the plan puts every
// wait on a smaller key), which run() checks as it issues.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <thread>

#include "core/cluster.h"
#include "core/errors.h"
#include "hw/cuda_backend.h"
#include "hw/cuda_check.h"
#include "hw/cuda_kernels.h"
#include "hw/cuda_work.h"

namespace aware {

namespace {

using Clock = std::chrono::steady_clock;

unsigned char signature(int op, std::uint32_t run) {
  return static_cast<unsigned char>((static_cast<std::uint32_t>(op) * 31u + run) % 251u + 1u);
}

// Restores the calling thread's current device however a member function leaves.
class CurrentDeviceGuard {
 public:
  CurrentDeviceGuard() {
    if (cudaGetDevice(&device_) != cudaSuccess) {
      cudaGetLastError();
      device_ = -1;
    }
  }
  ~CurrentDeviceGuard() {
    if (device_ >= 0 && cudaSetDevice(device_) != cudaSuccess) cudaGetLastError();
  }
  CurrentDeviceGuard(const CurrentDeviceGuard&) = delete;
  CurrentDeviceGuard& operator=(const CurrentDeviceGuard&) = delete;

 private:
  int device_ = -1;
};

enum class CopyRoute : std::uint8_t { kNone, kSameGpu, kPeer, kStaged };

struct GpuInfo {
  std::string name;
  int sms = 1;
  int major = 0;
};

// One allocation, device or pinned host, freed by release().
struct Allocation {
  void* ptr = nullptr;
  size_t bytes = 0;
  int gpu = -1;  // -1: pinned host memory
};

// What one cluster device owns.
struct Lane {
  int gpu = -1;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  float* gemm_a = nullptr;
  float* gemm_b = nullptr;
  float* gemm_c = nullptr;
  float* stream_span = nullptr;  // two halves of stream_scratch_bytes / 2 each
  // Real work (hw/gpu_work.h): GEMM operands no input supplies, in the working
  // precision; the fold reductions' accumulator; the private parameter tensors.
  void* real_a = nullptr;
  void* real_b = nullptr;
  void* real_c = nullptr;
  float* fold_acc = nullptr;
  char* private_base = nullptr;
};

// A stream on a copy's source GPU, for the device-to-host half of a staged copy.
struct HelperStream {
  int gpu = -1;
  cudaStream_t stream = nullptr;
};

constexpr size_t kAlignment = 256;
constexpr int kThreads = cuda_detail::kKernelThreads;
constexpr auto kDrainGrace = std::chrono::seconds(10);

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(CudaBackendOptions options) : options_(std::move(options)) {
    const int count = cuda_device_count();
    if (count == 0) throw HardwareError(cuda_unavailable_reason());
    if (options_.gpus.empty())
      for (int g = 0; g < count; ++g) options_.gpus.push_back(g);
    for (int g : options_.gpus) {
      if (g < 0 || g >= count)
        throw ConfigError("cuda: GPU " + std::to_string(g) + " does not exist (this machine has " +
                          std::to_string(count) + ")");
      if (info_.count(g)) continue;
      cudaDeviceProp prop{};
      AWARE_CUDA_CHECK(cudaGetDeviceProperties(&prop, g), "describing GPU " + std::to_string(g));
      info_[g] = GpuInfo{prop.name, std::max(1, prop.multiProcessorCount), prop.major};
    }
  }
  ~CudaBackend() override { release(); }

  std::string describe_mapping(const Cluster& cluster) const override {
    std::map<int, std::vector<std::string>> on_gpu;
    std::vector<int> order;
    for (int d = 0; d < cluster.num_devices(); ++d) {
      const int g = gpu_of(d);
      if (!on_gpu.count(g)) order.push_back(g);
      on_gpu[g].push_back(cluster.device(d).name);
    }
    std::string text;
    bool shared = false;
    for (size_t i = 0; i < order.size(); ++i) {
      if (i == 4) {
        text += "; ...";
        break;
      }
      const auto& names = on_gpu[order[i]];
      std::string list;
      for (size_t k = 0; k < names.size() && k < 4; ++k) list += (k ? ", " : "") + names[k];
      if (names.size() > 4) list += ", ...";
      const std::string gpu =
          "GPU " + std::to_string(order[i]) + " (" + info_.at(order[i]).name + ")";
      text += i ? "; " : "";
      if (names.size() == 1) {
        text += list + " on " + gpu;
      } else {
        text += list + " share " + gpu + " as " + std::to_string(names.size()) + " streams";
        shared = true;
      }
    }
    if (shared) text += " (streams of one GPU share its SMs and memory)";
    if (options_.stage_copies) {
      text += "; every copy staged through pinned host memory";
    } else if (order.size() > 1) {
      bool all_peer = true;
      for (int a : order)
        for (int b : order)
          if (a != b) {
            int can = 0;
            if (cudaDeviceCanAccessPeer(&can, a, b) != cudaSuccess) cudaGetLastError();
            all_peer = all_peer && can;
          }
      text += all_peer ? "; copies between GPUs peer to peer"
                       : "; copies between GPUs without peer access staged through host memory";
    }
    return text;
  }

  void prepare(const StepPlan& plan, const Cluster& cluster) override {
    release();
    CurrentDeviceGuard restore;
    current_gpu_ = -1;  // the guard restores the caller's device between calls
    const int num_devices = cluster.num_devices();
    AWARE_CHECK(static_cast<int>(plan.device_tasks.size()) == num_devices,
                "the plan is for another cluster");
    for (int d = 0; d < num_devices; ++d) device_names_.push_back(cluster.device(d).name);
    device_bytes_.assign(num_devices, 0);
    real_ = options_.real_work;
    if (real_) work_ = plan_gpu_work(plan, options_.precision);
    element_bytes_ = gpu_element_bytes(options_.precision);
    lanes_.resize(num_devices);
    for (int d = 0; d < num_devices; ++d) lanes_[d].gpu = gpu_of(d);
    for (const Lane& lane : lanes_)
      if (std::find(gpus_used_.begin(), gpus_used_.end(), lane.gpu) == gpus_used_.end())
        gpus_used_.push_back(lane.gpu);
    // What each GPU holds before this step allocates anything: the driver's view,
    // against which the step's high-water mark is taken (measured_peak_bytes).
    base_used_.clear();
    peak_used_.clear();
    for (int g : gpus_used_) base_used_[g] = peak_used_[g] = static_cast<double>(cuda_memory_used_bytes(g));

    // The flag a timed-out step raises to end its spins, mapped into every GPU.
    {
      void* flag = nullptr;
      AWARE_CUDA_CHECK(
          cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable),
          "prepare: the abort flag");
      allocations_.push_back({flag, sizeof(int), -1});
      live_ += sizeof(int);
      abort_host_ = static_cast<volatile int*>(flag);
      *abort_host_ = 0;
      for (int g : gpus_used_) {
        use_gpu(g, "prepare: the abort flag");
        void* device_flag = nullptr;
        AWARE_CUDA_CHECK(cudaHostGetDevicePointer(&device_flag, flag, 0),
                         "prepare: the abort flag");
        abort_device_[g] = static_cast<const int*>(device_flag);
      }
    }

    for (int d = 0; d < num_devices; ++d) {
      Lane& lane = lanes_[d];
      const std::string where = "prepare: " + label(d, cluster);
      use_gpu(lane.gpu, where);
      AWARE_CUDA_CHECK(cudaStreamCreateWithFlags(&lane.stream, cudaStreamNonBlocking), where);
      AWARE_CUBLAS_CHECK(cublasCreate(&lane.blas), where);
      AWARE_CUBLAS_CHECK(cublasSetStream(lane.blas, lane.stream), where);
      // After cublasSetStream, which resets the workspace to the default pool.
      // 32 MiB on Hopper and later, 4 MiB before (cuBLAS's own recommendation).
      const size_t workspace_bytes = (info_.at(lane.gpu).major >= 9 ? 32u : 4u) << 20;
      void* workspace = device_alloc(lane.gpu, workspace_bytes, where + " (cuBLAS workspace)", d);
      AWARE_CUBLAS_CHECK(cublasSetWorkspace(lane.blas, workspace, workspace_bytes), where);
      // The synthetic work's scratch: only what ops without real work need.
      GemmShape s{};               // element counts of A, B, C
      double stream_bytes = 0;
      for (const PlannedTask& t : plan.device_tasks[d]) {
        if (t.is_copy || (real_ && work_.real[t.index])) continue;
        const PlannedOp& p = plan.ops[t.index];
        if (p.kind == KernelKind::kGemm) {
          s.m = std::max(s.m, p.gemm.m * p.gemm.k);
          s.n = std::max(s.n, p.gemm.k * p.gemm.n);
          s.k = std::max(s.k, p.gemm.m * p.gemm.n);
        } else if (p.kind == KernelKind::kStream) {
          stream_bytes = std::max(stream_bytes, p.stream_bytes);
        }
      }
      lane.gemm_a = static_cast<float*>(filled(lane, d, static_cast<size_t>(s.m), 1u + 3u * d, where + " (GEMM A)"));
      lane.gemm_b = static_cast<float*>(filled(lane, d, static_cast<size_t>(s.n), 2u + 3u * d, where + " (GEMM B)"));
      lane.gemm_c = static_cast<float*>(filled(lane, d, static_cast<size_t>(s.k), 3u + 3u * d, where + " (GEMM C)"));
      lane.stream_span = filled_floats(lane, d, static_cast<size_t>(stream_bytes / 4), 7u + 3u * d,
                                       where + " (streaming span)");
      if (real_) {
        lane.real_a = filled(lane, d, static_cast<size_t>(work_.scratch_a[d]), 11u + 3u * d, where + " (GEMM operand A)");
        lane.real_b = filled(lane, d, static_cast<size_t>(work_.scratch_b[d]), 12u + 3u * d, where + " (GEMM operand B)");
        lane.real_c = filled(lane, d, static_cast<size_t>(work_.scratch_c[d]), 13u + 3u * d, where + " (GEMM result)");
        lane.fold_acc = static_cast<float*>(device_alloc(
            lane.gpu, static_cast<size_t>(work_.fold_floats[d]) * sizeof(float), where + " (reduction accumulator)", d));
        lane.private_base = static_cast<char*>(
            filled(lane, d, static_cast<size_t>(work_.private_elements[d]), 17u + 3u * d, where + " (parameters)"));
      }
    }
    // Each update op's private parameter tensor, carved from its device's.
    private_of_op_.assign(plan.ops.size(), nullptr);
    if (real_) {
      std::vector<std::int64_t> used(num_devices, 0);
      for (const PlannedOp& p : plan.ops) {
        const GpuOpWork& w = work_.ops[p.op];
        if (w.kind != GpuWorkKind::kUpdate) continue;
        private_of_op_[p.op] = lanes_[p.device].private_base + used[p.device] * element_bytes_;
        used[p.device] += w.private_elements;
      }
    }

    // The step's buffers: one allocation per GPU, carved up. A model has
    // thousands of tensors, and a cudaMalloc and cudaFree each would make every
    // evaluation pay for them (and cudaFree synchronizes the device).
    // Each device's arena (buffers whose lifetimes do not overlap share memory:
    // hw/step_plan.h) at its offset in its GPU's.
    buffers_.assign(plan.buffers.size(), nullptr);
    std::map<int, size_t> arena_bytes;                // by GPU
    std::vector<size_t> device_offset(num_devices, 0);  // of each device's arena in its GPU's
    for (int d = 0; d < num_devices; ++d) {
      size_t& end = arena_bytes[lanes_[d].gpu];
      device_offset[d] = end;
      const auto bytes = static_cast<size_t>(plan.arena_bytes[d]);
      end += (bytes + kAlignment - 1) / kAlignment * kAlignment;
      device_bytes_[d] += static_cast<double>(bytes);
    }
    std::map<int, char*> arena;
    for (const auto& [gpu, bytes] : arena_bytes) {
      const std::string where = "prepare: " + std::to_string(bytes) +
                                " bytes of step buffers on GPU " + std::to_string(gpu);
      arena[gpu] = static_cast<char*>(device_alloc(gpu, bytes, where));  // counted per device above
      if (!arena[gpu]) continue;
      if (real_) {
        // Values, not zeros: the kernels read these tensors (GEMMs on zeros draw
        // less power and run at higher clocks than real ones would).
        const size_t count = bytes / static_cast<size_t>(element_bytes_);
        AWARE_CUDA_CHECK(cuda_detail::launch_fill_elements(arena[gpu], count, bf16(), 29u + static_cast<unsigned>(gpu),
                                                           blocks_for(gpu, count), nullptr),
                         where);
      } else {
        AWARE_CUDA_CHECK(cudaMemset(arena[gpu], 0, bytes), where);
      }
    }
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const PlannedBuffer& pb = plan.buffers[b];
      if (buffer_bytes(plan, b) > 0)
        buffers_[b] = arena.at(lanes_[pb.device].gpu) + device_offset[pb.device] + static_cast<size_t>(pb.offset);
    }

    // How each copy travels; peer access enabled once per pair of GPUs it joins.
    routes_.assign(plan.copies.size(), CopyRoute::kNone);
    staging_.assign(plan.copies.size(), nullptr);
    staged_.assign(plan.copies.size(), nullptr);
    helper_of_copy_.assign(plan.copies.size(), -1);
    for (size_t i = 0; i < plan.copies.size(); ++i) {
      const PlannedCopy& c = plan.copies[i];
      if (c.dst_buffer < 0 || c.bytes <= 0) continue;
      const int from = lanes_[c.src_device].gpu, to = lanes_[c.dst_device].gpu;
      const std::string where = "prepare: " + copy_label(plan, i);
      if (from == to && !options_.stage_copies) {
        routes_[i] = CopyRoute::kSameGpu;
      } else if (from != to && !options_.stage_copies && peer_access(from, to, where)) {
        routes_[i] = CopyRoute::kPeer;
      } else {
        routes_[i] = CopyRoute::kStaged;
        const size_t bytes = static_cast<size_t>(c.bytes);
        AWARE_CUDA_CHECK(cudaMallocHost(&staging_[i], bytes), where + " (host staging buffer)");
        allocations_.push_back({staging_[i], bytes, -1});
        live_ += bytes;
        helper_of_copy_[i] = helper_stream(c.dst_device, from, where);
        use_gpu(from, where);
        AWARE_CUDA_CHECK(cudaEventCreateWithFlags(&staged_[i], cudaEventDisableTiming), where);
      }
    }

    // Timing events: an op's on its device's GPU, a copy's on the consumer's
    // (an event is recorded on a stream of the GPU it was created on).
    op_start_.assign(plan.ops.size(), nullptr);
    op_end_.assign(plan.ops.size(), nullptr);
    for (size_t i = 0; i < plan.ops.size(); ++i) {
      const std::string where = "prepare: op '" + plan.ops[i].name + "'";
      use_gpu(lanes_[plan.ops[i].device].gpu, where);
      AWARE_CUDA_CHECK(cudaEventCreateWithFlags(&op_start_[i], cudaEventDefault), where);
      AWARE_CUDA_CHECK(cudaEventCreateWithFlags(&op_end_[i], cudaEventDefault), where);
    }
    copy_start_.assign(plan.copies.size(), nullptr);
    copy_end_.assign(plan.copies.size(), nullptr);
    for (size_t i = 0; i < plan.copies.size(); ++i) {
      const std::string where = "prepare: " + copy_label(plan, i);
      use_gpu(lanes_[plan.copies[i].dst_device].gpu, where);
      AWARE_CUDA_CHECK(cudaEventCreateWithFlags(&copy_start_[i], cudaEventDefault), where);
      AWARE_CUDA_CHECK(cudaEventCreateWithFlags(&copy_end_[i], cudaEventDefault), where);
    }
    // Elapsed times are only defined between events of one GPU: one step-start
    // event per GPU, each recorded once its GPU has seen the first one.
    for (int g : gpus_used_) {
      use_gpu(g, "prepare: the step-start event");
      cudaEvent_t event = nullptr;
      AWARE_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDefault),
                       "prepare: the step-start event of GPU " + std::to_string(g));
      step_start_[g] = event;
    }
    for (int g : gpus_used_) {
      const std::string where = "prepare: GPU " + std::to_string(g);
      use_gpu(g, where);
      // Kernels load lazily on first use (CUDA_MODULE_LOADING=LAZY is the default):
      // load them now, so that a step without warm-up does not time the loading.
      AWARE_CUDA_CHECK(cuda_detail::preload_kernels(), where);
      AWARE_CUDA_CHECK(cudaDeviceSynchronize(), where + " (filling scratch)");
    }
    // Sorted once: sorting thousands of tasks inside a timed step would count.
    issue_order_ = plan.issue_order();
    run_id_ = 0;
    note_memory_in_use();
    prepared_ = true;
  }

  RunTimes run(const StepPlan& plan, double timeout_ms) override {
    AWARE_CHECK(prepared_, "run() before prepare()");
    AWARE_CHECK(plan.ops.size() == op_start_.size() && plan.copies.size() == copy_start_.size(),
                "run() with another plan than prepare()");
    CurrentDeviceGuard restore;
    current_gpu_ = -1;
    ++run_id_;
    *abort_host_ = 0;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double, std::milli>(timeout_ms));
    op_issued_.assign(plan.ops.size(), 0);
    copy_issued_.assign(plan.copies.size(), 0);
    last_event_.assign(lanes_.size(), nullptr);
    // The host's time to issue the step (RunTimes::issue_us): one thread issues
    // every task of every device, and a stream of short ops runs at its pace.
    const auto issue_begin = Clock::now();
    double issue_us = 0;
    try {
      issue_step_start();
      for (const auto& [device, task] : issue_order_) {
        if (task.is_copy)
          issue_copy(plan, task.index, device);
        else
          issue_op(plan, task.index);
      }
      issue_us = std::chrono::duration<double, std::micro>(Clock::now() - issue_begin).count();
    } catch (...) {
      drain();
      throw;
    }
    wait_until_done(plan, timeout_ms, deadline);
    note_memory_in_use();  // after the step: cuBLAS may allocate at a first GEMM

    RunTimes times;
    times.issue_us = issue_us;
    times.op_start.assign(plan.ops.size(), 0);
    times.op_end.assign(plan.ops.size(), 0);
    times.copy_start.assign(plan.copies.size(), 0);
    times.copy_end.assign(plan.copies.size(), 0);
    for (size_t i = 0; i < plan.ops.size(); ++i) {
      const cudaEvent_t origin = step_start_.at(lanes_[plan.ops[i].device].gpu);
      const std::string where = "timing op '" + plan.ops[i].name + "'";
      times.op_start[i] = elapsed_us(origin, op_start_[i], where);
      times.op_end[i] = elapsed_us(origin, op_end_[i], where);
      times.step_us = std::max(times.step_us, times.op_end[i]);
    }
    for (size_t i = 0; i < plan.copies.size(); ++i) {
      const cudaEvent_t origin = step_start_.at(lanes_[plan.copies[i].dst_device].gpu);
      const std::string where = "timing " + copy_label(plan, i);
      times.copy_start[i] = elapsed_us(origin, copy_start_[i], where);
      times.copy_end[i] = elapsed_us(origin, copy_end_[i], where);
      times.step_us = std::max(times.step_us, times.copy_end[i]);
    }
    if (options_.verify) verify(plan);
    return times;
  }

  void release() override {
    device_names_.clear();
    issue_order_.clear();
    if (lanes_.empty() && allocations_.empty() && op_start_.empty() && copy_start_.empty() &&
        step_start_.empty() && helpers_.empty())
      return;
    CurrentDeviceGuard restore;
    current_gpu_ = -1;
    prepared_ = false;
    // Nothing may still run on memory about to be freed: end any spin, then wait.
    if (abort_host_) *abort_host_ = 1;
    for (const Lane& lane : lanes_)
      if (lane.stream && set_gpu_quietly(lane.gpu)) quiet(cudaStreamSynchronize(lane.stream));
    for (const HelperStream& h : helpers_)
      if (h.stream && set_gpu_quietly(h.gpu)) quiet(cudaStreamSynchronize(h.stream));
    for (Lane& lane : lanes_) {
      set_gpu_quietly(lane.gpu);
      if (lane.blas) cublasDestroy(lane.blas);
      if (lane.stream) quiet(cudaStreamDestroy(lane.stream));
    }
    for (HelperStream& h : helpers_) {
      set_gpu_quietly(h.gpu);
      if (h.stream) quiet(cudaStreamDestroy(h.stream));
    }
    for (auto* events : {&op_start_, &op_end_, &copy_start_, &copy_end_, &staged_})
      for (cudaEvent_t e : *events)
        if (e) quiet(cudaEventDestroy(e));
    for (auto& [gpu, e] : step_start_)
      if (e) quiet(cudaEventDestroy(e));
    for (const Allocation& a : allocations_) {
      if (a.gpu < 0) {
        quiet(cudaFreeHost(a.ptr));
      } else {
        set_gpu_quietly(a.gpu);
        quiet(cudaFree(a.ptr));
      }
    }
    lanes_.clear();
    helpers_.clear();
    helper_index_.clear();
    allocations_.clear();
    buffers_.clear();
    staging_.clear();
    routes_.clear();
    helper_of_copy_.clear();
    op_start_.clear();
    op_end_.clear();
    copy_start_.clear();
    copy_end_.clear();
    staged_.clear();
    step_start_.clear();
    abort_device_.clear();
    gpus_used_.clear();
    abort_host_ = nullptr;
    live_ = 0;
    private_of_op_.clear();
    current_gpu_ = -1;
  }

  double live_bytes() const override { return static_cast<double>(live_); }

  std::vector<char> real_kernel_ops() const override { return real_ ? work_.real : std::vector<char>{}; }
  KernelCoverage kernel_coverage() const override { return real_ ? work_.coverage : KernelCoverage{}; }
  std::string kernels_name() const override {
    if (!real_) return {};
    std::string name = std::string("cublas-") + gpu_precision_name(options_.precision) + " (";
    for (size_t i = 0; i < work_.categories.size(); ++i) name += (i ? ", " : "") + work_.categories[i];
    return name + ")";
  }
  // The step's high-water mark on each GPU as the driver sees it (memory in use
  // after prepare() and after every run, over what was in use before prepare()),
  // attributed to the devices on it: each gets the bytes allocated for it (its
  // buffers, scratch, parameters, cuBLAS workspace), plus an equal share of
  // what the GPU grew by beyond them (cuBLAS handles' own memory, code loaded at
  // a first use). Every allocation is made at prepare() and held for the step;
  // the kernels allocate nothing while they run.
  std::vector<double> measured_peak_bytes() const override {
    std::vector<double> out = device_bytes_;
    for (int g : gpus_used_) {
      double counted = 0;
      int sharing = 0;
      for (size_t d = 0; d < lanes_.size() && d < out.size(); ++d)
        if (lanes_[d].gpu == g) {
          counted += device_bytes_[d];
          ++sharing;
        }
      const auto base = base_used_.find(g), peak = peak_used_.find(g);
      if (sharing == 0 || base == base_used_.end() || peak == peak_used_.end()) continue;
      const double extra = std::max(0.0, peak->second - base->second - counted);
      for (size_t d = 0; d < lanes_.size() && d < out.size(); ++d)
        if (lanes_[d].gpu == g) out[d] += extra / sharing;
    }
    return out;
  }

 private:
  void note_memory_in_use() {
    for (int g : gpus_used_) {
      const double used = static_cast<double>(cuda_memory_used_bytes(g));
      peak_used_[g] = std::max(peak_used_[g], used);
    }
  }

  int gpu_of(int device) const {
    return options_.gpus[static_cast<size_t>(device) % options_.gpus.size()];
  }

  std::string label(int device, const Cluster& cluster) const {
    return cluster.device(device).name + " (GPU " + std::to_string(gpu_of(device)) + ")";
  }
  std::string label(int device) const {
    const std::string name = device < static_cast<int>(device_names_.size())
                                 ? device_names_[device]
                                 : "device " + std::to_string(device);
    return name + " (GPU " + std::to_string(gpu_of(device)) + ")";
  }
  std::string copy_label(const StepPlan& plan, size_t copy) const {
    const PlannedCopy& c = plan.copies[copy];
    return "copy of op '" + plan.ops[c.src_op].name + "' output " + std::to_string(c.src_output) +
           " to device " + std::to_string(c.dst_device);
  }
  static size_t buffer_bytes(const StepPlan& plan, size_t buffer) {
    return static_cast<size_t>(plan.buffers[buffer].bytes);
  }

  static void quiet(cudaError_t error) {
    if (error != cudaSuccess) cudaGetLastError();
  }
  bool set_gpu_quietly(int gpu) {
    if (gpu < 0) return false;
    if (cudaSetDevice(gpu) != cudaSuccess) {
      cudaGetLastError();
      current_gpu_ = -1;
      return false;
    }
    current_gpu_ = gpu;
    return true;
  }
  void use_gpu(int gpu, const std::string& where) {
    if (gpu == current_gpu_) return;
    AWARE_CUDA_CHECK(cudaSetDevice(gpu), where);
    current_gpu_ = gpu;
  }

  // `device`: the cluster device the allocation is counted on (-1: counted by the caller).
  void* device_alloc(int gpu, size_t bytes, const std::string& where, int device = -1) {
    if (bytes == 0) return nullptr;
    use_gpu(gpu, where);
    const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* ptr = nullptr;
    AWARE_CUDA_CHECK(cudaMalloc(&ptr, rounded), where);
    allocations_.push_back({ptr, rounded, gpu});
    live_ += rounded;
    if (device >= 0) device_bytes_[device] += static_cast<double>(rounded);
    return ptr;
  }

  float* filled_floats(const Lane& lane, int device, size_t count, unsigned seed, const std::string& where) {
    auto* data = static_cast<float*>(device_alloc(lane.gpu, count * sizeof(float), where, device));
    if (!data) return nullptr;
    AWARE_CUDA_CHECK(
        cuda_detail::launch_fill(data, count, seed, blocks_for(lane.gpu, count), lane.stream),
        where);
    return data;
  }

  // `count` elements of what the GEMMs compute in (FP32 for synthetic FP32 work), filled.
  void* filled(const Lane& lane, int device, size_t count, unsigned seed, const std::string& where) {
    void* data = device_alloc(lane.gpu, count * static_cast<size_t>(element_bytes_), where, device);
    if (!data) return nullptr;
    AWARE_CUDA_CHECK(cuda_detail::launch_fill_elements(data, count, bf16(), seed, blocks_for(lane.gpu, count),
                                                       lane.stream),
                     where);
    return data;
  }

  bool bf16() const { return options_.precision == GpuPrecision::kBf16; }

  // What an op's real work (or a synthetic GEMM) launches with on `lane`.
  cuda_detail::WorkLaunch launch_of(const Lane& lane) const {
    cuda_detail::WorkLaunch l;
    l.blas = lane.blas;
    l.stream = lane.stream;
    l.precision = options_.precision;
    l.max_blocks = max_blocks(lane.gpu);
    l.scratch_a = lane.real_a;
    l.scratch_b = lane.real_b;
    l.scratch_c = lane.real_c;
    l.fold_acc = lane.fold_acc;
    return l;
  }

  // Blocks that fill every SM a few times over (the grid-stride loops go past).
  unsigned max_blocks(int gpu) const { return static_cast<unsigned>(static_cast<size_t>(info_.at(gpu).sms) * 8); }

  unsigned blocks_for(int gpu, size_t count) const {
    // Enough blocks to fill every SM a few times over; the loops stride past that.
    const size_t wanted = (count + kThreads - 1) / kThreads;
    const size_t cap = static_cast<size_t>(info_.at(gpu).sms) * 8;
    return static_cast<unsigned>(std::max<size_t>(1, std::min(wanted, cap)));
  }

  // Whether copies from `from` to `to` can go peer to peer; enables it both ways
  // the first time (it stays enabled for the process, as the driver keeps it).
  bool peer_access(int from, int to, const std::string& where) {
    const auto key = std::make_pair(std::min(from, to), std::max(from, to));
    const auto known = peer_.find(key);
    if (known != peer_.end()) return known->second;
    int forward = 0, backward = 0;
    AWARE_CUDA_CHECK(cudaDeviceCanAccessPeer(&forward, from, to), where);
    AWARE_CUDA_CHECK(cudaDeviceCanAccessPeer(&backward, to, from), where);
    const bool ok = forward && backward;
    if (ok) {
      for (const auto& [a, b] : {std::make_pair(from, to), std::make_pair(to, from)}) {
        use_gpu(a, where);
        const cudaError_t error = cudaDeviceEnablePeerAccess(b, 0);
        if (error == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();
        else
          AWARE_CUDA_CHECK(error, where + " (enabling peer access)");
      }
    }
    peer_[key] = ok;
    return ok;
  }

  int helper_stream(int device, int gpu, const std::string& where) {
    const auto key = std::make_pair(device, gpu);
    const auto it = helper_index_.find(key);
    if (it != helper_index_.end()) return it->second;
    use_gpu(gpu, where);
    helpers_.push_back({gpu, nullptr});
    AWARE_CUDA_CHECK(cudaStreamCreateWithFlags(&helpers_.back().stream, cudaStreamNonBlocking),
                     where + " (staging stream)");
    helper_index_[key] = static_cast<int>(helpers_.size()) - 1;
    return helper_index_[key];
  }

  // Device 0's stream records its GPU's step start; every other GPU records its
  // own once it has seen that one; every stream waits for its GPU's before its
  // first task.
  void issue_step_start() {
    const int first_gpu = lanes_[0].gpu;
    use_gpu(first_gpu, "starting the step");
    AWARE_CUDA_CHECK(cudaEventRecord(step_start_.at(first_gpu), lanes_[0].stream),
                     "starting the step");
    for (int g : gpus_used_) {
      if (g == first_gpu) continue;
      const auto lead = std::find_if(lanes_.begin(), lanes_.end(),
                                     [g](const Lane& lane) { return lane.gpu == g; });
      const std::string where = "starting the step on GPU " + std::to_string(g);
      use_gpu(g, where);
      AWARE_CUDA_CHECK(cudaStreamWaitEvent(lead->stream, step_start_.at(first_gpu), 0), where);
      AWARE_CUDA_CHECK(cudaEventRecord(step_start_.at(g), lead->stream), where);
    }
    for (size_t d = 0; d < lanes_.size(); ++d) {
      const std::string where = "starting the step on " + label(static_cast<int>(d));
      use_gpu(lanes_[d].gpu, where);
      AWARE_CUDA_CHECK(cudaStreamWaitEvent(lanes_[d].stream, step_start_.at(lanes_[d].gpu), 0),
                       where);
    }
  }

  void issue_op(const StepPlan& plan, int index) {
    const PlannedOp& p = plan.ops[index];
    Lane& lane = lanes_[p.device];
    const auto where = [&] { return "op '" + p.name + "' on " + label(p.device); };
    use_gpu(lane.gpu, where());
    // Waits on this device's own stream are implied by its order; only waits on
    // other streams need an event.
    for (int o : p.wait_ops) {
      AWARE_CHECK(op_issued_[o],
                  "op '" + p.name + "' issued before its input '" + plan.ops[o].name + "'");
      if (plan.ops[o].device != p.device)
        AWARE_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, op_end_[o], 0), where());
    }
    for (int c : p.wait_copies) {
      AWARE_CHECK(copy_issued_[c], "op '" + p.name + "' issued before a copy it needs");
      if (plan.copies[c].dst_device != p.device)
        AWARE_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, copy_end_[c], 0), where());
    }
    AWARE_CUDA_CHECK(cudaEventRecord(op_start_[index], lane.stream), where());
    const bool real = real_ && work_.real[index];
    if (real && p.kind != KernelKind::kNone) {
      cuda_detail::launch_op_work(launch_of(lane), work_.ops[index], buffers_, private_of_op_[index], where());
    } else switch (p.kind) {
      case KernelKind::kNone:
        break;
      case KernelKind::kGemm: {
        if (options_.precision != GpuPrecision::kFp32 || real_) {
          for (int r = 0; r < p.gemm_reps; ++r)
            cuda_detail::launch_gemm(launch_of(lane), p.gemm, 1, lane.gemm_a, lane.gemm_b, lane.gemm_c, where());
          break;
        }
        AWARE_CHECK(p.gemm.m <= INT_MAX && p.gemm.n <= INT_MAX && p.gemm.k <= INT_MAX,
                    "op '" + p.name + "': GEMM dimensions beyond int");
        const int m = static_cast<int>(p.gemm.m), n = static_cast<int>(p.gemm.n),
                  k = static_cast<int>(p.gemm.k);
        const float alpha = 1.0f, beta = 0.0f;
        // kernels=synthetic, precision=fp32: the SGEMM the backend always ran, as it ran.
        // Row-major C = A B as column-major C^T = B^T A^T: swap the operands.
        for (int r = 0; r < p.gemm_reps; ++r)
          AWARE_CUBLAS_CHECK(cublasSgemm(lane.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha,
                                         lane.gemm_b, n, lane.gemm_a, k, &beta, lane.gemm_c, n),
                             where());
        break;
      }
      case KernelKind::kStream: {
        const size_t count = static_cast<size_t>(p.stream_bytes / 8);  // floats per half
        if (count > 0) {
          AWARE_CUDA_CHECK(
              cuda_detail::launch_stream_pass(lane.stream_span, lane.stream_span + count, count,
                                              blocks_for(lane.gpu, count), lane.stream),
              where());
        }
        break;
      }
      case KernelKind::kSpin: {
        const auto ns =
            static_cast<unsigned long long>(std::llround(std::max(0.0, p.spin_us) * 1e3));
        AWARE_CUDA_CHECK(cuda_detail::launch_spin(ns, abort_device_.at(lane.gpu), lane.stream),
                         where());
        break;
      }
    }
    // The op writes its outputs: what a copy of them carries this run (real work
    // wrote them itself).
    const unsigned char sig = signature(p.op, run_id_);
    if (!real)
      for (int buffer : p.outputs)
        if (buffer >= 0 && buffers_[buffer])
          AWARE_CUDA_CHECK(
              cudaMemsetAsync(buffers_[buffer], sig, buffer_bytes(plan, buffer), lane.stream),
              where());
    AWARE_CUDA_CHECK(cudaEventRecord(op_end_[index], lane.stream), where());
    op_issued_[index] = 1;
    last_event_[p.device] = op_end_[index];
  }

  void issue_copy(const StepPlan& plan, int index, int device) {
    const PlannedCopy& c = plan.copies[index];
    AWARE_CHECK(c.dst_device == device, "a copy listed on a device it does not go to");
    AWARE_CHECK(op_issued_[c.src_op], copy_label(plan, index) + " issued before its producer");
    Lane& lane = lanes_[device];
    const auto where = [&] {
      return copy_label(plan, index) + " (" + label(c.src_device) + " to " + label(device) + ")";
    };
    use_gpu(lane.gpu, where());
    AWARE_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, op_end_[c.src_op], 0), where());
    AWARE_CUDA_CHECK(cudaEventRecord(copy_start_[index], lane.stream), where());
    void* dst = c.dst_buffer >= 0 ? buffers_[c.dst_buffer] : nullptr;
    const void* src = c.src_buffer >= 0 ? buffers_[c.src_buffer] : nullptr;
    const size_t bytes = static_cast<size_t>(c.bytes);
    switch (routes_[index]) {
      case CopyRoute::kNone:
        break;
      case CopyRoute::kSameGpu:
        AWARE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, lane.stream),
                         where());
        break;
      case CopyRoute::kPeer:
        AWARE_CUDA_CHECK(
            cudaMemcpyPeerAsync(dst, lane.gpu, src, lanes_[c.src_device].gpu, bytes, lane.stream),
            where());
        break;
      case CopyRoute::kStaged: {
        // Down to pinned host memory on a stream of the source GPU (once this
        // stream reaches the copy), then up on this stream.
        const HelperStream& helper = helpers_[helper_of_copy_[index]];
        use_gpu(helper.gpu, where());
        AWARE_CUDA_CHECK(cudaStreamWaitEvent(helper.stream, copy_start_[index], 0), where());
        AWARE_CUDA_CHECK(
            cudaMemcpyAsync(staging_[index], src, bytes, cudaMemcpyDeviceToHost, helper.stream),
            where());
        AWARE_CUDA_CHECK(cudaEventRecord(staged_[index], helper.stream), where());
        use_gpu(lane.gpu, where());
        AWARE_CUDA_CHECK(cudaStreamWaitEvent(lane.stream, staged_[index], 0), where());
        AWARE_CUDA_CHECK(
            cudaMemcpyAsync(dst, staging_[index], bytes, cudaMemcpyHostToDevice, lane.stream),
            where());
        break;
      }
    }
    AWARE_CUDA_CHECK(cudaEventRecord(copy_end_[index], lane.stream), where());
    copy_issued_[index] = 1;
    last_event_[device] = copy_end_[index];
  }

  // Polls each stream's last event until all are done or the deadline passes.
  void wait_until_done(const StepPlan& plan, double timeout_ms, Clock::time_point deadline) {
    std::vector<int> pending;
    for (size_t d = 0; d < lanes_.size(); ++d)
      if (last_event_[d]) pending.push_back(static_cast<int>(d));
    while (!pending.empty()) {
      for (size_t i = 0; i < pending.size();) {
        const cudaError_t status = cudaEventQuery(last_event_[pending[i]]);
        if (status == cudaSuccess) {
          pending[i] = pending.back();
          pending.pop_back();
        } else if (status == cudaErrorNotReady) {
          ++i;
        } else {
          // A kernel or copy failed after it was issued; which one, the runtime does not say.
          const std::string where = "running the step on " + label(pending[i]) + " (near " +
                                    stalled_task(plan, pending[i]) + ")";
          drain();
          AWARE_CUDA_CHECK(status, where);
        }
      }
      if (pending.empty()) break;
      if (Clock::now() > deadline) {
        std::string where;
        for (int d : pending) where += (where.empty() ? "" : "; ") + stalled_task(plan, d);
        const bool stopped = drain();
        throw HardwareError("cuda: the step did not finish within " + std::to_string(timeout_ms) +
                            " ms (stalled at " + where + ")" +
                            (stopped ? "" : "; it was still running 10 s after the abort"));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // The first task of `device`'s list whose end event has not completed.
  std::string stalled_task(const StepPlan& plan, int device) const {
    for (const PlannedTask& t : plan.device_tasks[device]) {
      const cudaEvent_t end = t.is_copy ? copy_end_[t.index] : op_end_[t.index];
      const cudaError_t status = cudaEventQuery(end);
      if (status == cudaSuccess) continue;
      if (status != cudaErrorNotReady) cudaGetLastError();
      return t.is_copy ? copy_label(plan, t.index)
                       : "op '" + plan.ops[t.index].name + "' on " + label(device);
    }
    return label(device);
  }

  // Ends every spin and waits (at most kDrainGrace) for the streams to empty, so
  // that a throw leaves nothing running. False if they did not empty in time.
  bool drain() {
    if (abort_host_) *abort_host_ = 1;
    const auto until = Clock::now() + kDrainGrace;
    std::vector<cudaStream_t> streams;
    for (const Lane& lane : lanes_) streams.push_back(lane.stream);
    for (const HelperStream& h : helpers_) streams.push_back(h.stream);
    for (cudaStream_t s : streams) {
      if (!s) continue;
      for (;;) {
        const cudaError_t status = cudaStreamQuery(s);
        if (status != cudaErrorNotReady) {
          quiet(status);
          break;
        }
        if (Clock::now() > until) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    return true;
  }

  double elapsed_us(cudaEvent_t from, cudaEvent_t to, const std::string& where) const {
    float ms = 0;
    AWARE_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to), where);
    return static_cast<double>(ms) * 1e3;
  }

  // Every received buffer holds its producer's signature of this run, or, where
  // the producer ran real work (which writes no signature), its producer's bytes.
  void verify(const StepPlan& plan) {
    constexpr size_t kChunk = size_t{64} << 20;
    std::vector<unsigned char> host, source;
    for (size_t i = 0; i < plan.copies.size(); ++i) {
      const PlannedCopy& c = plan.copies[i];
      if (c.dst_buffer < 0 || routes_[i] == CopyRoute::kNone) continue;
      const unsigned char want = signature(c.src_op, run_id_);
      const bool real = real_ && work_.real[c.src_op];
      const size_t bytes = static_cast<size_t>(c.bytes);
      const auto* base = static_cast<const unsigned char*>(buffers_[c.dst_buffer]);
      const auto* from = static_cast<const unsigned char*>(buffers_[c.src_buffer]);
      const std::string where = "verifying " + copy_label(plan, i);
      use_gpu(lanes_[c.dst_device].gpu, where);
      for (size_t offset = 0; offset < bytes; offset += kChunk) {
        const size_t n = std::min(kChunk, bytes - offset);
        host.resize(n);
        AWARE_CUDA_CHECK(cudaMemcpy(host.data(), base + offset, n, cudaMemcpyDeviceToHost), where);
        if (real) {
          source.resize(n);
          AWARE_CUDA_CHECK(cudaMemcpy(source.data(), from + offset, n, cudaMemcpyDeviceToHost), where);
          for (size_t b = 0; b < n; ++b)
            if (host[b] != source[b])
              throw HardwareError("cuda: " + copy_label(plan, i) + " differs from its producer's output at byte " +
                                  std::to_string(offset + b));
          continue;
        }
        for (size_t b = 0; b < n; ++b)
          if (host[b] != want)
            throw HardwareError("cuda: " + copy_label(plan, i) + " holds a wrong byte at offset " +
                                std::to_string(offset + b) + " (" + std::to_string(host[b]) +
                                ", want " + std::to_string(want) + ")");
      }
    }
  }

  CudaBackendOptions options_;
  std::map<int, GpuInfo> info_;
  std::vector<Lane> lanes_;
  std::vector<int> gpus_used_;
  std::vector<std::string> device_names_;
  std::vector<HelperStream> helpers_;
  std::map<std::pair<int, int>, int> helper_index_;  // (device, source GPU) -> helpers_
  std::map<std::pair<int, int>, bool> peer_;         // (lower GPU, higher GPU) -> peer copies
  std::vector<Allocation> allocations_;
  std::vector<void*> buffers_;       // by plan buffer id
  std::vector<CopyRoute> routes_;    // by copy
  std::vector<void*> staging_;       // by copy: pinned host, staged copies only
  std::vector<int> helper_of_copy_;  // by copy: helpers_ index, staged only
  std::vector<cudaEvent_t> op_start_, op_end_, copy_start_, copy_end_, staged_;
  std::map<int, cudaEvent_t> step_start_;   // by GPU
  std::map<int, const int*> abort_device_;  // by GPU: the abort flag as it sees it
  volatile int* abort_host_ = nullptr;
  std::vector<std::pair<int, PlannedTask>> issue_order_;  // the plan's, from prepare()
  std::vector<char> op_issued_, copy_issued_;             // this run, for the issue-order check
  std::vector<cudaEvent_t> last_event_;  // by device: its stream's last event this run
  size_t live_ = 0;
  // Real work: the plan of it, each update op's parameter tensor, bytes per
  // element, and the bytes allocated for each device.
  bool real_ = false;
  GpuWorkPlan work_;
  std::vector<char*> private_of_op_;
  int element_bytes_ = 4;
  std::vector<double> device_bytes_;
  std::map<int, double> base_used_, peak_used_;  // by GPU: in use before prepare(), most since
  std::uint32_t run_id_ = 0;
  int current_gpu_ = -1;
  bool prepared_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(options);
}

}  // namespace aware
