// The host side of the CUDA backend that needs no nvcc: asking the driver what
// GPUs there are, describing them as a cluster, and registering the `cuda`
// evaluator and the `cuda-host` preset.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <map>

#include "core/errors.h"
#include "core/evaluator.h"
#include "hw/cuda_backend.h"
#include "hw/cuda_check.h"

namespace aware {

namespace cuda_detail {

std::string cuda_error_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

void throw_cuda_error(cudaError_t error, const char* call, const std::string& where) {
  // A non-sticky error stays "last" until read: clear it so that a later, unrelated
  // check does not see it. (A sticky one keeps failing every call: nothing to do.)
  cudaGetLastError();
  std::string name(call);
  const size_t paren = name.find('(');
  if (paren != std::string::npos) name.resize(paren);
  throw HardwareError("cuda: " + where + ": " + name + " failed: " + cuda_error_text(error));
}

}  // namespace cuda_detail

namespace {

struct Probe {
  int count = 0;
  std::string reason;
};

// Asked once: the runtime reads CUDA_VISIBLE_DEVICES at its first call, so the
// answer cannot change within a process.
const Probe& probe() {
  static const Probe result = [] {
    Probe p;
    const cudaError_t error = cudaGetDeviceCount(&p.count);
    if (error != cudaSuccess) {
      cudaGetLastError();
      p.count = 0;
      p.reason =
          "no CUDA device: cudaGetDeviceCount returned " + cuda_detail::cuda_error_text(error);
    } else if (p.count <= 0) {
      p.count = 0;
      p.reason = "no CUDA device: cudaGetDeviceCount found none";
    }
    return p;
  }();
  return result;
}

// FP32 lanes per SM by compute capability (the CUDA programming guide's
// arithmetic-throughput table): 64 on the HPC parts of Volta and Ampere (7.0, 8.0)
// and on Pascal P100 (6.0), 128 elsewhere (Turing's 7.5 has 64).
int fp32_lanes_per_sm(int major, int minor) {
  if (major == 6 && minor == 0) return 64;
  if (major == 7) return 64;
  if (major == 8 && minor == 0) return 64;
  return 128;
}

struct GpuFigures {
  std::string name;
  double peak_flops = 0;
  double memory_bytes = 0;
  double memory_Bps = 0;
};

GpuFigures gpu_figures(int gpu) {
  const std::string where = "describing GPU " + std::to_string(gpu);
  cudaDeviceProp prop{};
  AWARE_CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu), where);
  int clock_kHz = 0, memory_clock_kHz = 0, bus_bits = 0;
  AWARE_CUDA_CHECK(cudaDeviceGetAttribute(&clock_kHz, cudaDevAttrClockRate, gpu), where);
  AWARE_CUDA_CHECK(cudaDeviceGetAttribute(&memory_clock_kHz, cudaDevAttrMemoryClockRate, gpu),
                   where);
  AWARE_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, gpu), where);
  GpuFigures f;
  f.name = prop.name;
  // Peak FP32: every lane retires one FMA (2 FLOPs) per cycle at the boost clock.
  f.peak_flops = static_cast<double>(prop.multiProcessorCount) * clock_kHz * 1e3 *
                 fp32_lanes_per_sm(prop.major, prop.minor) * 2.0;
  f.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  // Double data rate: two transfers per memory clock over the whole bus.
  f.memory_Bps = 2.0 * memory_clock_kHz * 1e3 * bus_bits / 8.0;
  // Some drivers report no clocks (virtualised or future parts): keep the figures
  // usable and plainly rough rather than zero, which the cluster would refuse.
  if (!(f.peak_flops > 0)) f.peak_flops = 10e12;
  if (!(f.memory_Bps > 0)) f.memory_Bps = 1e12;
  if (!(f.memory_bytes > 0)) f.memory_bytes = 16e9;
  return f;
}

void check_gpus(const std::vector<int>& gpus, int count, const std::string& owner) {
  for (int g : gpus)
    if (g < 0 || g >= count)
      throw ConfigError(owner + ": GPU " + std::to_string(g) +
                        " does not exist (this machine has " + std::to_string(count) +
                        ", numbered from 0)");
}

// "0,1" -> {0, 1}; syntax only (the range needs the driver).
std::vector<int> parse_gpu_list(const std::string& text, const std::string& owner) {
  std::vector<int> gpus;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    const long gpu = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || gpu < 0 || gpu > 1024)
      throw ConfigError(owner + ": gpus must be a list of GPU numbers like 0,1, got '" + text +
                        "'");
    gpus.push_back(static_cast<int>(gpu));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return gpus;
}

}  // namespace

int cuda_device_count() { return probe().count; }

std::string cuda_unavailable_reason() { return probe().reason; }

std::size_t cuda_memory_used_bytes(int gpu) {
  if (cuda_device_count() == 0) throw HardwareError(cuda_unavailable_reason());
  check_gpus({gpu}, cuda_device_count(), "cuda_memory_used_bytes");
  int previous = 0;
  AWARE_CUDA_CHECK(cudaGetDevice(&previous), "reading GPU memory use");
  AWARE_CUDA_CHECK(cudaSetDevice(gpu), "reading GPU memory use");
  size_t free_bytes = 0, total_bytes = 0;
  const cudaError_t error = cudaMemGetInfo(&free_bytes, &total_bytes);
  cudaSetDevice(previous);
  AWARE_CUDA_CHECK(error, "reading GPU " + std::to_string(gpu) + "'s memory use");
  return total_bytes - free_bytes;
}

Cluster cuda_host_cluster(int logical_devices, const std::vector<int>& gpus) {
  if (cuda_device_count() == 0) throw HardwareError(cuda_unavailable_reason());
  if (logical_devices < 0 || logical_devices > 256)
    throw ConfigError("cuda-host: the number of devices must be 0..256, got " +
                      std::to_string(logical_devices));
  check_gpus(gpus, cuda_device_count(), "cuda-host");
  std::vector<int> used = gpus;
  if (used.empty())
    for (int g = 0; g < cuda_device_count(); ++g) used.push_back(g);
  const int n = logical_devices > 0 ? logical_devices : static_cast<int>(used.size());
  auto gpu_of = [&](int d) { return used[static_cast<size_t>(d) % used.size()]; };

  std::map<int, GpuFigures> figures;
  std::map<int, int> sharers;
  for (int d = 0; d < n; ++d) {
    if (!figures.count(gpu_of(d))) figures[gpu_of(d)] = gpu_figures(gpu_of(d));
    ++sharers[gpu_of(d)];
  }
  Cluster c(logical_devices == 0 && gpus.empty() ? "cuda-host" : "cuda-host:" + std::to_string(n));
  c.set_source("cuda-host");
  for (int d = 0; d < n; ++d) {
    const GpuFigures& f = figures[gpu_of(d)];
    Device dev;
    dev.name = "cuda" + std::to_string(d);
    dev.kind = f.name;
    // Logical devices on one GPU each see its full SMs when alone; running at once
    // they share them (nothing here partitions the SMs). Memory is split evenly,
    // so that the planner's memory check holds for all of them together.
    dev.peak_flops = f.peak_flops;
    dev.efficiency = 0.6;  // what the datasheet presets assume for SGEMM-like work
    dev.memory_bytes = f.memory_bytes / sharers[gpu_of(d)];
    dev.memory_Bps = f.memory_Bps;
    dev.launch_overhead_us = 3;  // a kernel launch and its events, typical of one host thread
    c.add_device(dev);
  }
  // Links. Between GPUs the driver does not say whether NVLink or PCIe joins them:
  // 50 GB/s and 5 us is a placeholder (PCIe 5 x16 is ~50 GB/s, NVLink several
  // times more) until `aware calibrate` measures the pair. Between two logical
  // devices of one GPU a copy reads and writes the same memory: half its bandwidth.
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const bool same_gpu = gpu_of(a) == gpu_of(b);
      const double bandwidth_Bps = same_gpu ? figures[gpu_of(a)].memory_Bps / 2 : 50e9;
      c.connect("cuda" + std::to_string(a), "cuda" + std::to_string(b), bandwidth_Bps, 5,
                "cuda" + std::to_string(a) + "-cuda" + std::to_string(b));
    }
  }
  c.finalize();
  return c;
}

std::unique_ptr<Evaluator> make_cuda_evaluator(const ExecutorOptions& executor,
                                               const CudaBackendOptions& cuda) {
  if (cuda_device_count() == 0) throw HardwareError(cuda_unavailable_reason());
  check_gpus(cuda.gpus, cuda_device_count(), "evaluator 'cuda'");
  // Verification reads the buffers after the step: none may have been reused.
  ExecutorOptions options = executor;
  options.plan.in_order = true;  // a stream runs its device's list in order
  if (cuda.verify) options.plan.reuse_memory = false;
  return std::make_unique<HardwareEvaluator>(
      "cuda",
      std::string("cuda executor: one CUDA stream per device (devices may share a GPU), ") +
          (cuda.real_work ? std::string("each op's own GEMM through cuBLAS (") + gpu_precision_name(cuda.precision) +
                                ") or elementwise, reduction and update kernels over its tensors"
                          : std::string("synthetic work (cuBLAS ") + gpu_precision_name(cuda.precision) +
                                " GEMMs of equal FLOPs, streaming passes)") +
          ", device, peer or host-staged copies",
      [cuda](const Cluster&) { return make_cuda_backend(cuda); }, options);
}

void register_cuda_evaluator(std::vector<OptionSpec> executor_specs) {
  using T = OptionSpec::Type;
  std::vector<OptionSpec> specs = std::move(executor_specs);
  specs.push_back({"gpus", T::kString, "",
                   "GPU of each device, e.g. 0,1 (device i on the (i mod n)-th); "
                   "default: every visible GPU"});
  specs.push_back({"verify", T::kBool, "0",
                   "check after each step that every copy delivered its producer's bytes"});
  specs.push_back({"kernels", T::kString, "real",
                   "real: each op's own GEMM through cuBLAS on its producers' tensors, elementwise, "
                   "reduction and optimizer-update kernels over its tensors (hw/gpu_work.h); "
                   "synthetic: a GEMM of equal FLOPs or a streaming pass"});
  specs.push_back({"precision", T::kString, "bf16",
                   "what the GEMMs and kernels compute in: bf16 (tensor cores), tf32 (tensor cores, "
                   "FP32 storage) or fp32"});
  EvaluatorRegistry::instance().add(
      {"cuda",
       "runs the step for real on this machine's GPUs: a CUDA stream per device, cuBLAS, "
       "device-to-device copies",
       specs,
       {{"deterministic", "0"}, {"measured", "1"}, {"needs", "gpu"}, {"reference", "analytic"}}},
      [](const Options& options) -> std::unique_ptr<Evaluator> {
        const std::string owner = "evaluator 'cuda'";
        // Options first: a bad one is the same mistake on every machine.
        CudaBackendOptions cuda;
        cuda.gpus = parse_gpu_list(option_string(options, "gpus", ""), owner);
        cuda.verify = option_bool(options, "verify", false, owner);
        const std::string kernels = option_string(options, "kernels", "real");
        if (kernels != "real" && kernels != "synthetic")
          throw ConfigError(owner + ": kernels must be real or synthetic, got '" + kernels + "'");
        cuda.real_work = kernels == "real";
        cuda.precision = parse_gpu_precision(option_string(options, "precision", "bf16"), owner);
        const ExecutorOptions executor = executor_options_from(options, owner);
        return make_cuda_evaluator(executor, cuda);
      });
  register_cluster_preset("cuda-host", [] { return cuda_host_cluster(); });
  // Fixed sizes, so that a one-GPU machine has several devices to place on (as
  // streams of its GPU) and a file or command line can name them.
  for (int n : {2, 4, 8})
    register_cluster_preset("cuda-host:" + std::to_string(n), [n] { return cuda_host_cluster(n); });
}

}  // namespace aware
