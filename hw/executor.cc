#include "hw/executor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/cluster.h"
#include "core/op_graph.h"
#include "core/step_observer.h"

namespace aware {

std::vector<double> live_peak_bytes(const StepPlan& plan, const RunTimes& times) {
  const size_t D = plan.device_tasks.size();
  // Each buffer's span: from its writer's start to its last reader's end.
  const size_t B = plan.buffers.size();
  std::vector<double> from(B, -1), until(B, -1), written_until(B, -1);
  const auto read = [&](int b, double end) {
    if (b >= 0) until[static_cast<size_t>(b)] = std::max(until[static_cast<size_t>(b)], end);
  };
  for (const PlannedOp& p : plan.ops) {
    const double start = times.op_start[static_cast<size_t>(p.op)], end = times.op_end[static_cast<size_t>(p.op)];
    for (int b : p.outputs)
      if (b >= 0) {
        from[static_cast<size_t>(b)] = start;
        written_until[static_cast<size_t>(b)] = end;
      }
    for (int b : p.inputs) read(b, end);
  }
  for (size_t c = 0; c < plan.copies.size(); ++c) {
    const PlannedCopy& copy = plan.copies[c];
    if (copy.dst_buffer >= 0) {
      from[static_cast<size_t>(copy.dst_buffer)] = times.copy_start[c];
      written_until[static_cast<size_t>(copy.dst_buffer)] = times.copy_end[c];
    }
    read(copy.src_buffer, times.copy_end[c]);
  }
  // A sweep per device over (time, +bytes / -bytes); at equal times frees first,
  // as a tensor freed when one op ends is free for the next that starts then.
  std::vector<std::vector<std::pair<double, double>>> events(D);
  for (size_t b = 0; b < B; ++b) {
    const PlannedBuffer& buffer = plan.buffers[b];
    if (!(buffer.bytes > 0) || buffer.device < 0 || static_cast<size_t>(buffer.device) >= D) continue;
    const double start = from[b] >= 0 ? from[b] : 0;
    const double end = until[b] >= 0 ? std::max(until[b], written_until[b]) : written_until[b] >= 0 ? written_until[b] : times.step_us;
    events[static_cast<size_t>(buffer.device)].push_back({start, buffer.bytes});
    events[static_cast<size_t>(buffer.device)].push_back({std::max(start, end), -buffer.bytes});
  }
  std::vector<double> peak(D, 0);
  for (size_t d = 0; d < D; ++d) {
    std::sort(events[d].begin(), events[d].end());  // by time, then frees (negative) before allocations
    double now = 0, most = 0;
    for (const auto& [t, bytes] : events[d]) {
      now += bytes;
      most = std::max(most, now);
    }
    peak[d] = most;
  }
  return peak;
}

namespace {

double quantile(std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// Releases the backend however run_step leaves.
struct ReleaseGuard {
  Backend& backend;
  ~ReleaseGuard() { backend.release(); }
};

std::string list_names(const OpGraph& graph, const std::vector<int>& ops, size_t shown) {
  std::string text;
  for (size_t i = 0; i < ops.size() && i < shown; ++i)
    text += (i ? ", " : "") + graph.op(ops[i]).name;
  if (ops.size() > shown) text += ", ...";
  return text;
}

}  // namespace

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile(values, 0.5);
}

double iqr_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile(values, 0.75) - quantile(values, 0.25);
}

ExecutorOptions executor_options_from(const Options& options, const std::string& owner) {
  ExecutorOptions o;
  o.warmup = static_cast<int>(option_int(options, "warmup", o.warmup, owner));
  o.repeats = static_cast<int>(option_int(options, "repeats", o.repeats, owner));
  o.timeout_ms = option_double(options, "timeout_ms", o.timeout_ms, owner);
  o.plan.gemm_intensity = option_double(options, "gemm_intensity", o.plan.gemm_intensity, owner);
  o.plan.reuse_memory = option_bool(options, "reuse_memory", o.plan.reuse_memory, owner);
  if (o.warmup < 0 || o.warmup > 1000)
    throw ConfigError(owner + ": warmup must be 0..1000, got " + std::to_string(o.warmup));
  if (o.repeats < 1 || o.repeats > 10000)
    throw ConfigError(owner + ": repeats must be 1..10000, got " + std::to_string(o.repeats));
  if (!(o.timeout_ms > 0) || !std::isfinite(o.timeout_ms))
    throw ConfigError(owner + ": timeout_ms must be positive");
  if (!(o.plan.gemm_intensity >= 0) || !std::isfinite(o.plan.gemm_intensity))
    throw ConfigError(owner + ": gemm_intensity must be >= 0");
  return o;
}

HardwareEvaluator::HardwareEvaluator(std::string name, std::string description,
                                     BackendFactory factory, ExecutorOptions options)
    : name_(std::move(name)),
      description_(std::move(description)),
      factory_(std::move(factory)),
      options_(options) {}

std::string HardwareEvaluator::describe() const {
  std::string text = description_ + " (median of " + std::to_string(options_.repeats) +
                     " measured steps after " + std::to_string(options_.warmup) + " warm-up";
  if (!last_.mapping.empty()) text += "; " + last_.mapping;
  return text + ")";
}

std::unique_ptr<Evaluator> HardwareEvaluator::clone() const {
  return std::make_unique<HardwareEvaluator>(name_, description_, factory_, options_);
}

std::string issue_note(const std::vector<RunTimes>& runs, int tasks) {
  if (runs.empty() || tasks < 1) return {};
  std::vector<double> issue, step;
  for (const RunTimes& r : runs) {
    if (!(r.issue_us >= 0)) return {};
    issue.push_back(r.issue_us);
    step.push_back(r.step_us);
  }
  const double i = median_of(issue), s = median_of(step);
  char line[200];
  std::snprintf(line, sizeof line,
                "host issue: %.0f us for %d tasks (%.2f us a task), %.2f of the step's %.0f us (medians of %zu runs)",
                i, tasks, i / tasks, s > 0 ? i / s : 0.0, s, runs.size());
  return line;
}

StepResult HardwareEvaluator::run_step(const OpGraph& graph, const Cluster& cluster,
                                       const Placement& placement, StepObserver* observer) {
  graph.validate();
  const StepPlan plan = make_step_plan(graph, cluster, placement, options_.plan);
  const int num_devices = cluster.num_devices();
  StepResult result;
  result.evaluator = name_;
  result.device_busy_us.assign(num_devices, 0);
  result.peak_memory_bytes = plan.planned_bytes;
  result.bytes_moved = plan.bytes_moved;
  result.transfers = static_cast<int>(plan.copies.size());
  last_ = Measurement{};
  if (!plan.feasible) {
    result.feasible = false;
    result.infeasible_reason = plan.infeasible_reason;
    return result;
  }
  std::vector<int> idle, spinning;
  for (const PlannedOp& p : plan.ops) {
    if (p.kind == KernelKind::kNone) idle.push_back(p.op);
    if (p.kind == KernelKind::kSpin) spinning.push_back(p.op);
  }
  if (!idle.empty())
    result.notes.push_back(std::to_string(idle.size()) +
                           " ops ran nothing (no shape, FLOPs, bytes or measured cost): " +
                           list_names(graph, idle, 5));
  if (!spinning.empty())
    result.notes.push_back(std::to_string(spinning.size()) +
                           " ops have only a measured cost and were run as a timed spin: " +
                           list_names(graph, spinning, 5));

  std::unique_ptr<Backend> backend = factory_(cluster);
  last_.mapping = backend->describe_mapping(cluster);
  std::vector<RunTimes> runs;
  std::vector<char> real;
  KernelCoverage coverage;
  {
    ReleaseGuard guard{*backend};
    backend->prepare(plan, cluster);
    for (int i = 0; i < options_.warmup; ++i) backend->run(plan, options_.timeout_ms);
    runs.reserve(options_.repeats);
    for (int i = 0; i < options_.repeats; ++i) {
      runs.push_back(backend->run(plan, options_.timeout_ms));
      last_.step_us.push_back(runs.back().step_us);
    }
    real = backend->real_kernel_ops();
    coverage = backend->kernel_coverage();
    last_.kernels = backend->kernels_name();
    const std::vector<double> kernels = backend->kernel_peak_bytes();
    if (kernels.empty()) {
      last_.measured_peak_bytes = backend->measured_peak_bytes();
    } else {
      last_.reserved_bytes = backend->measured_peak_bytes();
      std::vector<double> peak(plan.device_tasks.size(), 0);
      for (const RunTimes& run : runs) {
        const std::vector<double> live = live_peak_bytes(plan, run);
        for (size_t d = 0; d < peak.size() && d < live.size(); ++d) peak[d] = std::max(peak[d], live[d]);
      }
      for (size_t d = 0; d < peak.size() && d < kernels.size(); ++d) peak[d] += kernels[d];
      last_.measured_peak_bytes = peak;
    }
  }
  last_.planned_peak_bytes = plan.planned_bytes;
  if (!last_.measured_peak_bytes.empty()) result.peak_memory_bytes = last_.measured_peak_bytes;
  last_.op_median_us.assign(plan.ops.size(), 0);
  std::vector<double> durations(runs.size());
  for (size_t op = 0; op < plan.ops.size(); ++op) {
    for (size_t r = 0; r < runs.size(); ++r) durations[r] = runs[r].op_end[op] - runs[r].op_start[op];
    last_.op_median_us[op] = median_of(durations);
  }
  last_.median_us = median_of(last_.step_us);
  last_.iqr_us = iqr_of(last_.step_us);
  if (!last_.kernels.empty()) {
    // How much of the step ran real kernels: by the graph's FLOPs, and by the
    // measured op time (ops that ran nothing count on neither side).
    double real_us = 0, all_us = 0;
    for (size_t op = 0; op < plan.ops.size(); ++op) {
      all_us += last_.op_median_us[op];
      if (op < real.size() && real[op]) real_us += last_.op_median_us[op];
    }
    last_.real_flops_share = coverage.flops > 0 ? coverage.real_flops / coverage.flops : 1;
    last_.real_time_share = all_us > 0 ? real_us / all_us : 1;
    char line[160];
    std::snprintf(line, sizeof line, "real kernels (%s): %.1f%% of the FLOPs, %.1f%% of the op time; %d of %d ops",
                  last_.kernels.c_str(), 100 * last_.real_flops_share, 100 * last_.real_time_share,
                  coverage.real_ops, coverage.ops);
    std::string note = line;
    if (!coverage.synthetic_types.empty()) {
      note += "; synthetic work for ";
      for (size_t i = 0; i < coverage.synthetic_types.size() && i < 6; ++i)
        note += (i ? ", " : "") + coverage.synthetic_types[i];
      if (coverage.synthetic_types.size() > 6) note += ", ...";
    }
    result.notes.push_back(note);
  }

  const std::string issue = issue_note(runs, static_cast<int>(plan.ops.size() + plan.copies.size()));
  if (!issue.empty()) result.notes.push_back(issue);

  // The run whose step time is the median (the lower middle one for an even count).
  std::vector<int> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return runs[a].step_us < runs[b].step_us; });
  const RunTimes& chosen = runs[order[(order.size() - 1) / 2]];
  result.step_time_us = last_.median_us;
  for (const PlannedOp& p : plan.ops) {
    const double start = chosen.op_start[p.op];
    const double end = chosen.op_end[p.op];
    result.device_busy_us[p.device] += end - start;
    if (observer) observer->on_op({p.op, p.device, start, end});
  }
  if (observer) {
    for (size_t c = 0; c < plan.copies.size(); ++c) {
      const PlannedCopy& copy = plan.copies[c];
      observer->on_transfer(link_transfer_span(cluster, copy.src_op, copy.src_output,
                                               copy.src_device, copy.dst_device, copy.bytes,
                                               chosen.copy_start[c], chosen.copy_end[c]));
    }
  }
  return result;
}

}  // namespace aware
