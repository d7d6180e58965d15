#include "hw/register.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

#include "core/errors.h"
#include "core/evaluator.h"
#include "hw/cpu_backend.h"
#include "hw/executor.h"
#ifdef AWARE_HW_CUDA
#include "hw/cuda_backend.h"
#endif

namespace aware {

namespace {

std::vector<OptionSpec> executor_option_specs() {
  using T = OptionSpec::Type;
  return {
      {"warmup", T::kInt, "1", "unmeasured steps run first"},
      {"repeats", T::kInt, "5", "measured steps; the result is their median"},
      {"timeout_ms", T::kDouble, "60000", "a step still running after this long is an error"},
      {"gemm_intensity", T::kDouble, "4",
       "ops without a GEMM shape run a GEMM of equal FLOPs at FLOPs/byte >= this, "
       "else a streaming pass over their bytes"},
      {"reuse_memory", T::kBool, "1",
       "a tensor's memory is reused after its last reader on its device (0: every tensor held for the step)"},
  };
}

}  // namespace

void register_hw_evaluators() {
  using T = OptionSpec::Type;
  std::vector<OptionSpec> cpu_specs = executor_option_specs();
  cpu_specs.push_back({"cores", T::kString, "",
                       "core of each device, e.g. 0,1 (device i on the (i mod n)-th); "
                       "default: the CPUs this process may use"});
  cpu_specs.push_back({"pin", T::kBool, "1", "pin each device's worker thread to its core"});
  cpu_specs.push_back({"kernels", T::kString, "auto",
                       "aten: ops run ATen's kernel of their type on their producers' tensors (where LibTorch is "
                       "built); synthetic: a GEMM of equal FLOPs or a streaming pass; auto: aten where built"});
  cpu_specs.push_back({"order", T::kString, "fifo",
                       "which ready task a worker runs next: fifo (the first to become ready, ties by topological "
                       "rank, as the analytic simulator queues them) or rank (the lowest topological rank)"});
  cpu_specs.push_back({"verify", T::kBool, "0",
                       "check before each op that every tensor it reads holds what its writer left this run"});
  EvaluatorRegistry::instance().add(
      {"cpu",
       "runs the step for real: a pinned worker thread per device, OpenBLAS, memcpy copies",
       cpu_specs,
       {{"deterministic", "0"}, {"measured", "1"}, {"reference", "analytic"}}},
      [](const Options& options) -> std::unique_ptr<Evaluator> {
        const std::string owner = "evaluator 'cpu'";
        CpuBackendOptions cpu;
        const std::string cores = option_string(options, "cores", "");
        size_t pos = 0;
        while (pos < cores.size()) {
          const size_t comma = cores.find(',', pos);
          const std::string item = cores.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
          char* end = nullptr;
          const long core = std::strtol(item.c_str(), &end, 10);
          if (item.empty() || *end != '\0' || core < 0 || core >= CPU_SETSIZE)
            throw ConfigError(owner + ": cores must be a list of CPU numbers like 0,1, got '" + cores + "'");
          cpu.cores.push_back(static_cast<int>(core));
          if (comma == std::string::npos) break;
          pos = comma + 1;
        }
        const std::vector<int> allowed = allowed_cpus();
        for (int core : cpu.cores)
          if (std::find(allowed.begin(), allowed.end(), core) == allowed.end())
            throw ConfigError(owner + ": core " + std::to_string(core) +
                              " is not one this process may run on");
        cpu.pin = option_bool(options, "pin", true, owner);
        cpu.verify = option_bool(options, "verify", false, owner);
        cpu.order = option_string(options, "order", "fifo");
        if (cpu.order != "fifo" && cpu.order != "rank")
          throw ConfigError(owner + ": order '" + cpu.order + "' unknown (known: fifo, rank)");
        cpu.kernels = option_string(options, "kernels", "auto");
        if (cpu.kernels != "auto" && cpu.kernels != "aten" && cpu.kernels != "synthetic")
          throw ConfigError(owner + ": kernels must be auto, aten or synthetic, got '" + cpu.kernels + "'");
        if (cpu.kernels == "aten" && !have_cpu_kernels())
          throw ConfigError(owner + ": kernels=aten needs LibTorch's kernels, which this build does not link "
                            "(install libtorch-dev and rebuild)");
        return make_cpu_evaluator(executor_options_from(options, owner), cpu);
      });
#ifdef AWARE_HW_CUDA
  register_cuda_evaluator(executor_option_specs());
#endif
}

}  // namespace aware
