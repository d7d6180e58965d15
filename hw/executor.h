// The hardware executor: an Evaluator that runs a placed training step for
// real and reports what it measured. One engine, several backends.
//
// HardwareEvaluator does everything that is not device-specific: it plans the
// step (hw/step_plan.h), refuses a plan that does not fit before anything runs,
// has the backend allocate, runs `warmup` unmeasured and `repeats` measured
// steps, keeps the run with the median step time, and reports that run's op and
// copy spans to the observer (so Trace, --trace and the GUI timeline show a
// measured step). A Backend only allocates, runs one step's tasks and times them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/evaluator.h"
#include "hw/op_kernels.h"
#include "hw/step_plan.h"

namespace aware {

// A device, kernel or copy failed, or a step stalled past its timeout.
class HardwareError : public Error {
 public:
  using Error::Error;
};

// When each task of one run started and ended, µs from the step's start.
struct RunTimes {
  std::vector<double> op_start, op_end;      // by op id
  std::vector<double> copy_start, copy_end;  // by copy index
  double step_us = 0;                        // last end
  // How long the host took to issue the step's tasks (a backend that issues
  // ahead of its devices from one thread: CUDA), µs on the host's clock; < 0
  // where not measured (the CPU backend's threads run their own tasks).
  double issue_us = -1;
};

// One line on the host's issue time over `runs` (their medians), against the step's,
// with the time per task of `tasks`. Issue taking about as long as the step means
// either that the step ran at the host's pace or that the host waited on a full
// launch queue (about a thousand launches pending): the time per task tells them
// apart only against the host's own cost (a chain of tiny ops, aware calibrate).
// "" where a run did not measure it.
std::string issue_note(const std::vector<RunTimes>& runs, int tasks);

// The bytes of the plan's buffers each device held at once in one run, as an
// allocator that frees a tensor after its last use holds them (a framework's
// "allocated", not what a caching allocator or our static arena reserves):
// every buffer from its writer's start (the op's, or the copy's that fills it)
// to the end of its last reader (an op on its device, or a copy that sends it to
// another); a buffer nothing reads, until its writer ends; one nothing writes,
// from the step's start. Parameters are not among them: the executor allocates
// none (a variable's value is its op's output buffer; a weight that a backward
// op reads without an edge, and an optimizer's slots, are the kernels' own
// tensors, Backend::kernel_peak_bytes). By device. Pure.
std::vector<double> live_peak_bytes(const StepPlan& plan, const RunTimes& times);

class Backend {
 public:
  virtual ~Backend() = default;
  // How the cluster's devices map onto this machine (cores, GPUs, streams): one line.
  virtual std::string describe_mapping(const Cluster& cluster) const = 0;
  // Allocates the plan's buffers and scratch. Throws HardwareError naming what failed.
  virtual void prepare(const StepPlan& plan, const Cluster& cluster) = 0;
  // Runs the prepared step once. Throws HardwareError naming the op or copy that
  // failed, or saying the step did not finish within `timeout_ms`; after a throw
  // no thread or stream of the backend is still running.
  virtual RunTimes run(const StepPlan& plan, double timeout_ms) = 0;
  // Frees what prepare() allocated. Safe to call twice.
  virtual void release() = 0;
  // Bytes this backend holds right now (0 after release()).
  virtual double live_bytes() const = 0;
  // Called after the runs, before release(). Which ops ran a real kernel (empty:
  // every op ran the plan's synthetic work) and what real kernels covered.
  virtual std::vector<char> real_kernel_ops() const { return {}; }
  virtual KernelCoverage kernel_coverage() const { return {}; }
  virtual std::string kernels_name() const { return {}; }
  // What real kernels held beyond the plan's buffers, by device: their private
  // tensors and the peak of their temporaries (a counting allocator). Non-empty
  // (the CPU backend): the measured peak is live_peak_bytes over the runs plus
  // this, and measured_peak_bytes() is what the backend reserved. Empty: the
  // measured peak is measured_peak_bytes() (the CUDA allocator's high-water mark).
  virtual std::vector<double> kernel_peak_bytes() const { return {}; }
  // The most bytes each device held at once over the runs, as counted where it
  // was allocated (empty: not measured; the plan's figure stands).
  virtual std::vector<double> measured_peak_bytes() const { return {}; }
};

struct ExecutorOptions {
  int warmup = 1;
  int repeats = 5;
  double timeout_ms = 60000;  // per step
  StepPlanOptions plan;
};

// What the last evaluate() measured, beyond its StepResult.
struct Measurement {
  std::vector<double> step_us;  // each measured repeat, in run order
  double median_us = 0;
  double iqr_us = 0;            // interquartile range of step_us
  std::vector<double> op_median_us;  // by op id: its median duration over the repeats
  std::string mapping;          // Backend::describe_mapping
  // Real kernels: their name ("" when every op ran synthetic work), the share of
  // the graph's FLOPs and of the measured op time that they ran.
  std::string kernels;
  double real_flops_share = 0;
  double real_time_share = 0;
  std::vector<double> planned_peak_bytes;   // the plan's per-device figure
  std::vector<double> measured_peak_bytes;  // counted (empty: not measured)
  // Where measured_peak_bytes is the live peak (Backend::kernel_peak_bytes): what
  // the backend allocated for the step (its arena, scratch and kernels' tensors).
  std::vector<double> reserved_bytes;
};

class HardwareEvaluator : public Evaluator {
 public:
  using BackendFactory = std::function<std::unique_ptr<Backend>(const Cluster&)>;
  HardwareEvaluator(std::string name, std::string description, BackendFactory factory,
                    ExecutorOptions options);

  std::string name() const override { return name_; }
  std::string describe() const override;
  std::unique_ptr<Evaluator> clone() const override;

  const ExecutorOptions& options() const { return options_; }
  const Measurement& last_measurement() const { return last_; }

 protected:
  StepResult run_step(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      StepObserver* observer) override;

 private:
  std::string name_;
  std::string description_;
  BackendFactory factory_;
  ExecutorOptions options_;
  Measurement last_;
};

// Reads warmup, repeats, timeout_ms and gemm_intensity from evaluator options.
ExecutorOptions executor_options_from(const Options& options, const std::string& owner);

// The median and interquartile range of `values` (linear interpolation); 0 for none.
double median_of(std::vector<double> values);
double iqr_of(std::vector<double> values);

}  // namespace aware
