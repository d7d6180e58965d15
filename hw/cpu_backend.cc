#include "hw/cpu_backend.h"
#include "hw/ready_queue.h"

#include <cblas.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#ifdef AWARE_HW_OPENMP
#include <omp.h>
#endif

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/cluster.h"

namespace aware {

namespace {

using Clock = std::chrono::steady_clock;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// OpenBLAS's thread count is process-wide: every device is one thread of its own.
void single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

unsigned char signature(int op, std::uint32_t run) {
  return static_cast<unsigned char>((static_cast<std::uint32_t>(op) * 31u + run) % 251u + 1u);
}

// One 64-byte aligned allocation.
struct Block {
  void* data = nullptr;
  size_t bytes = 0;
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options) : options_(std::move(options)), fifo_(options_.order != "rank") {
    single_threaded_blas();
    if (options_.kernels == "aten" || (options_.kernels == "auto" && have_cpu_kernels())) {
      kernels_ = make_cpu_kernels();
      if (!kernels_)
        throw ConfigError("evaluator 'cpu': kernels=aten needs LibTorch's kernels, which this build does not link");
    }
    if (options_.cores.empty()) options_.cores = allowed_cpus();
    if (options_.cores.empty()) options_.cores = {0};
  }
  ~CpuBackend() override { release(); }

  std::string describe_mapping(const Cluster& cluster) const override {
    std::string text;
    std::vector<int> used;
    for (int d = 0; d < cluster.num_devices(); ++d) {
      const int core = core_of(d);
      if (d < 4) text += (d ? ", " : "") + cluster.device(d).name + " on core " + std::to_string(core);
      if (std::find(used.begin(), used.end(), core) == used.end()) used.push_back(core);
    }
    if (cluster.num_devices() > 4) text += ", ...";
    if (!options_.pin) text += " (not pinned)";
    if (static_cast<int>(used.size()) < cluster.num_devices())
      text += "; " + std::to_string(cluster.num_devices()) + " devices share " +
              std::to_string(used.size()) + " cores";
    return text + "; OpenBLAS single-threaded per device" +
           (fifo_ ? "; ready tasks first come first served" : "; ready tasks by topological rank");
  }

  void prepare(const StepPlan& plan, const Cluster& cluster) override {
    release();
    const int num_devices = cluster.num_devices();
    device_bytes_.assign(num_devices, 0);
    // One arena per device; each buffer at its planned offset (buffers whose
    // lifetimes do not overlap share memory: hw/step_plan.h).
    arenas_.resize(num_devices);
    for (int d = 0; d < num_devices; ++d) arenas_[d] = allocate(plan.arena_bytes[d], "the step's buffers", d);
    buffers_.assign(plan.buffers.size(), Block{});
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const PlannedBuffer& pb = plan.buffers[b];
      if (pb.bytes <= 0) continue;
      buffers_[b].data = static_cast<char*>(arenas_[pb.device].data) + static_cast<size_t>(pb.offset);
      buffers_[b].bytes = static_cast<size_t>(pb.bytes);
    }
    queues_.clear();
    if (fifo_)
      for (int d = 0; d < num_devices; ++d) queues_.emplace_back(plan, d);
    writer_of_.assign(plan.buffers.size(), -1);
    copy_into_.assign(plan.buffers.size(), -1);
    for (const PlannedOp& p : plan.ops)
      for (int b : p.outputs)
        if (b >= 0) writer_of_[b] = p.op;
    for (size_t c = 0; c < plan.copies.size(); ++c)
      if (plan.copies[c].dst_buffer >= 0) copy_into_[plan.copies[c].dst_buffer] = static_cast<int>(c);
    real_.assign(plan.ops.size(), 0);
    if (kernels_) {
      std::vector<void*> addresses(buffers_.size());
      for (size_t b = 0; b < buffers_.size(); ++b) addresses[b] = buffers_[b].data;
      kernels_->prepare(plan, addresses);
      for (const PlannedOp& p : plan.ops) real_[p.op] = kernels_->has(p.op) ? 1 : 0;
    }
    // Scratch for the synthetic work of the ops that have no real kernel.
    std::vector<GemmShape> gemm(num_devices);
    std::vector<double> stream(num_devices, 0);
    for (const PlannedOp& p : plan.ops) {
      if (real_[p.op]) continue;
      if (p.kind == KernelKind::kGemm) {
        GemmShape& g = gemm[p.device];
        g.m = std::max(g.m, p.gemm.m * p.gemm.k);
        g.n = std::max(g.n, p.gemm.k * p.gemm.n);
        g.k = std::max(g.k, p.gemm.m * p.gemm.n);
      } else if (p.kind == KernelKind::kStream) {
        stream[p.device] = std::max(stream[p.device], p.stream_bytes);
      }
    }
    scratch_a_.resize(num_devices);
    scratch_b_.resize(num_devices);
    scratch_c_.resize(num_devices);
    stream_.resize(num_devices);
    for (int d = 0; d < num_devices; ++d) {
      const GemmShape& s = gemm[d];
      scratch_a_[d] = allocate(4.0 * static_cast<double>(s.m), "GEMM scratch", d);
      scratch_b_[d] = allocate(4.0 * static_cast<double>(s.n), "GEMM scratch", d);
      scratch_c_[d] = allocate(4.0 * static_cast<double>(s.k), "GEMM scratch", d);
      // Two halves: read from one, write the other.
      stream_[d] = allocate(stream[d] + 64, "streaming scratch", d);
    }
    op_done_ = std::make_unique<std::atomic<std::uint32_t>[]>(plan.ops.size());
    copy_done_ = std::make_unique<std::atomic<std::uint32_t>[]>(plan.copies.size() + 1);
    for (size_t i = 0; i < plan.ops.size(); ++i) op_done_[i].store(0);
    for (size_t i = 0; i <= plan.copies.size(); ++i) copy_done_[i].store(0);
    run_id_ = 0;
  }

  RunTimes run(const StepPlan& plan, double timeout_ms) override {
    const int num_devices = static_cast<int>(plan.device_tasks.size());
    ++run_id_;
    RunTimes times;
    times.op_start.assign(plan.ops.size(), 0);
    times.op_end.assign(plan.ops.size(), 0);
    times.copy_start.assign(plan.copies.size(), 0);
    times.copy_end.assign(plan.copies.size(), 0);

    abort_.store(false);
    ready_.store(0);
    go_.store(false);
    finished_ = 0;
    error_.clear();
    running_ = std::make_unique<std::atomic<int>[]>(num_devices);
    for (int d = 0; d < num_devices; ++d) running_[d].store(-1);
    std::vector<std::thread> workers;
    workers.reserve(num_devices);
    for (int d = 0; d < num_devices; ++d)
      workers.emplace_back([this, &plan, &times, d] { worker(plan, times, d); });
    // Start every worker at once, from one epoch.
    while (ready_.load() < num_devices) std::this_thread::yield();
    t0_ = Clock::now();
    go_.store(true, std::memory_order_release);

    bool timed_out = false;
    {
      std::unique_lock lock(mutex_);
      const auto deadline = t0_ + std::chrono::duration<double, std::milli>(timeout_ms);
      if (!done_cv_.wait_until(lock, deadline, [&] { return finished_ == num_devices; })) {
        timed_out = true;
      }
    }
    std::string where;  // what each device was running when the deadline passed
    if (timed_out) {
      for (int d = 0; d < num_devices; ++d) {
        const int task = running_[d].load();
        if (task >= 0) where += (where.empty() ? "" : "; ") + task_name(plan, plan.device_tasks[d][task], d);
      }
      abort_.store(true);
    }
    for (auto& w : workers) w.join();
    if (timed_out) {
      throw HardwareError("cpu: the step did not finish within " + std::to_string(timeout_ms) +
                          " ms" + (where.empty() ? "" : " (stalled at " + where + ")"));
    }
    if (!error_.empty()) throw HardwareError("cpu: " + error_);
    for (double end : times.op_end) times.step_us = std::max(times.step_us, end);
    for (double end : times.copy_end) times.step_us = std::max(times.step_us, end);

    return times;
  }

  void release() override {
    if (kernels_) kernels_->release();  // their tensors view the buffers: first
    for (Block& b : arenas_) free_block(b);
    arenas_.clear();
    queues_.clear();
    for (auto* list : {&scratch_a_, &scratch_b_, &scratch_c_, &stream_})
      for (Block& b : *list) free_block(b);
    buffers_.clear();
    scratch_a_.clear();
    scratch_b_.clear();
    scratch_c_.clear();
    stream_.clear();
  }

  double live_bytes() const override { return static_cast<double>(live_); }

  std::vector<char> real_kernel_ops() const override { return kernels_ ? real_ : std::vector<char>{}; }
  KernelCoverage kernel_coverage() const override { return kernels_ ? kernels_->coverage() : KernelCoverage{}; }
  std::string kernels_name() const override { return kernels_ ? kernels_->name() : std::string(); }
  // What real kernels held beyond the plan's buffers (the executor adds it to the
  // step's live peak); zeros when every op ran synthetic work.
  std::vector<double> kernel_peak_bytes() const override {
    if (kernels_) return kernels_->peak_bytes();
    return std::vector<double>(device_bytes_.size(), 0);
  }
  // What the step reserved: every block is held for the whole step; real kernels
  // add their private tensors and the peak of their temporaries.
  std::vector<double> measured_peak_bytes() const override {
    std::vector<double> peak = device_bytes_;
    if (kernels_) {
      const std::vector<double> extra = kernels_->peak_bytes();
      for (size_t d = 0; d < peak.size() && d < extra.size(); ++d) peak[d] += extra[d];
    }
    return peak;
  }

 private:
  int core_of(int device) const {
    return options_.cores[static_cast<size_t>(device) % options_.cores.size()];
  }

  Block allocate(double bytes, const char* what, int device) {
    Block b;
    if (bytes <= 0) return b;
    b.bytes = (static_cast<size_t>(bytes) + 63) / 64 * 64;
    b.data = std::aligned_alloc(64, b.bytes);
    if (!b.data)
      throw HardwareError(std::string("cpu: cannot allocate ") + std::to_string(b.bytes) +
                          " bytes for " + what);
    std::memset(b.data, 0, b.bytes);  // touch every page now, not inside a timed step
    live_ += b.bytes;
    device_bytes_[static_cast<size_t>(device)] += static_cast<double>(b.bytes);
    return b;
  }
  void free_block(Block& b) {
    if (!b.data) return;
    std::free(b.data);
    live_ -= b.bytes;
    b = Block{};
  }

  double now_us() const {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0_).count();
  }

  bool op_ready(const PlannedOp& p) const {
    for (int o : p.wait_ops)
      if (op_done_[o].load(std::memory_order_acquire) != run_id_) return false;
    for (int c : p.wait_copies)
      if (copy_done_[c].load(std::memory_order_acquire) != run_id_) return false;
    return true;
  }

  // Its producer is done.
  bool copy_ready(const PlannedCopy& c) const {
    return op_done_[c.src_op].load(std::memory_order_acquire) == run_id_;
  }

  void run_op(const StepPlan& plan, const PlannedOp& p, int d) {
    if (real_[p.op]) {
      kernels_->run(p.op);  // writes its outputs itself
      return;
    }
    switch (p.kind) {
      case KernelKind::kNone: break;
      case KernelKind::kGemm: {
        const auto m = static_cast<blasint>(p.gemm.m), n = static_cast<blasint>(p.gemm.n),
                   k = static_cast<blasint>(p.gemm.k);
        auto* a = static_cast<float*>(scratch_a_[d].data);
        auto* b = static_cast<float*>(scratch_b_[d].data);
        auto* c = static_cast<float*>(scratch_c_[d].data);
        for (int r = 0; r < p.gemm_reps; ++r)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
        break;
      }
      case KernelKind::kStream: {
        const size_t count = static_cast<size_t>(p.stream_bytes / 8);  // floats per half
        auto* base = static_cast<float*>(stream_[d].data);
        const float* src = base;
        float* dst = base + count;
        for (size_t i = 0; i < count; ++i) dst[i] = src[i] * 0.5f + 1.0f;
        break;
      }
      case KernelKind::kSpin: {
        const auto end = Clock::now() + std::chrono::duration<double, std::micro>(p.spin_us);
        while (Clock::now() < end && !abort_.load(std::memory_order_relaxed)) cpu_relax();
        break;
      }
    }
    // The op writes its outputs: what a copy of them carries this run.
    const unsigned char sig = signature(p.op, run_id_);
    for (int buffer : p.outputs)
      if (buffer >= 0 && buffers_[buffer].data)
        std::memset(buffers_[buffer].data, sig, static_cast<size_t>(plan.buffers[buffer].bytes));
  }

  void worker(const StepPlan& plan, RunTimes& times, int d) {
    if (options_.pin) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(core_of(d), &set);
      if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fail("cannot pin device " + std::to_string(d) + " to core " + std::to_string(core_of(d)));
      }
    }
#ifdef AWARE_HW_OPENMP
    // An OpenMP OpenBLAS reads this thread's setting on every call (and ignores
    // openblas_set_num_threads): one thread per device, no team behind it.
    omp_set_num_threads(1);
#endif
    if (kernels_) kernels_->bind_thread(d);
    ready_.fetch_add(1);
    while (!go_.load(std::memory_order_acquire)) cpu_relax();

    const auto& tasks = plan.device_tasks[d];
    FifoReadyQueue* fifo = fifo_ ? &queues_[static_cast<size_t>(d)] : nullptr;
    if (fifo) fifo->reset();
    std::vector<char> done(tasks.size(), 0);
    size_t first = 0;
    unsigned spins = 0;
    while (first < tasks.size() && !abort_.load(std::memory_order_relaxed)) {
      size_t pick = tasks.size();
      if (fifo) {
        // The first task to become ready (ties: the list's order).
        if (fifo->waiting_copies() > 0)
          fifo->poll([&](int op) { return op_done_[op].load(std::memory_order_acquire) == run_id_; },
                     [&](int op) { return times.op_end[static_cast<size_t>(op)]; });
        const int next = fifo->pop();
        if (next >= 0) pick = static_cast<size_t>(next);
      } else {
        for (size_t i = first; i < tasks.size(); ++i) {  // the lowest rank: the first ready one
          if (done[i]) continue;
          const PlannedTask& t = tasks[i];
          if (t.is_copy ? copy_ready(plan.copies[t.index]) : op_ready(plan.ops[t.index])) {
            pick = i;
            break;
          }
        }
      }
      if (pick == tasks.size()) {
        cpu_relax();
        if (++spins % 64 == 0) std::this_thread::yield();
        continue;
      }
      const PlannedTask& t = tasks[pick];
      running_[d].store(static_cast<int>(pick), std::memory_order_relaxed);
      try {
        if (t.is_copy) {
          const PlannedCopy& c = plan.copies[t.index];
          times.copy_start[t.index] = now_us();
          if (c.dst_buffer >= 0)
            std::memcpy(buffers_[c.dst_buffer].data, buffers_[c.src_buffer].data,
                        static_cast<size_t>(c.bytes));
          times.copy_end[t.index] = now_us();
          copy_done_[t.index].store(run_id_, std::memory_order_release);
        } else {
          const PlannedOp& p = plan.ops[t.index];
          if (options_.verify) verify_inputs(plan, p);  // untimed: before the op's start
          times.op_start[p.op] = now_us();
          run_op(plan, p, d);
          times.op_end[p.op] = now_us();
          op_done_[p.op].store(run_id_, std::memory_order_release);
        }
      } catch (const std::exception& e) {
        fail(task_name(plan, t, d) + ": " + e.what());
        break;
      }
      running_[d].store(-1, std::memory_order_relaxed);
      done[pick] = 1;
      if (fifo) fifo->finished(static_cast<int>(pick), t.is_copy ? times.copy_end[t.index] : times.op_end[t.index]);
      while (first < tasks.size() && done[first]) ++first;
    }
    std::lock_guard lock(mutex_);
    ++finished_;
    done_cv_.notify_all();
  }

  static std::string task_name(const StepPlan& plan, const PlannedTask& t, int d) {
    if (t.is_copy) {
      const PlannedCopy& c = plan.copies[t.index];
      return "copy of op '" + plan.ops[c.src_op].name + "' output " + std::to_string(c.src_output) +
             " to device " + std::to_string(d);
    }
    return "op '" + plan.ops[t.index].name + "' on device " + std::to_string(d);
  }

  void fail(const std::string& message) {
    {
      std::lock_guard lock(mutex_);
      if (error_.empty()) error_ = message;
    }
    abort_.store(true);
  }

  // verify=1: before an op runs, each tensor it reads still holds what its
  // writer left there this run (memory is reused after a tensor's last reader:
  // an early overwrite would show here). A synthetic producer's output carries
  // its signature byte; a delivered copy equals the producer's output (held for
  // the step). A real kernel's output on the same device carries nothing to check.
  void verify_inputs(const StepPlan& plan, const PlannedOp& p) const {
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      const int b = p.inputs[i];
      if (b < 0 || !buffers_[b].data) continue;
      const auto* bytes = static_cast<const unsigned char*>(buffers_[b].data);
      const size_t count = static_cast<size_t>(plan.buffers[b].bytes);
      const int copy = copy_into_[b];
      const int writer = copy >= 0 ? plan.copies[copy].src_op : writer_of_[b];
      if (writer < 0) continue;
      const std::string what = "op '" + p.name + "' reads " +
                               (copy >= 0 ? "the copy of op '" : "the output of op '") + plan.ops[writer].name + "'";
      if (copy >= 0 && std::memcmp(bytes, buffers_[plan.copies[copy].src_buffer].data, count) != 0)
        throw HardwareError("cpu: " + what + ", which differs from its producer's output");
      if (real_[writer]) continue;
      const unsigned char want = signature(writer, run_id_);
      for (size_t k = 0; k < count; ++k)
        if (bytes[k] != want)
          throw HardwareError("cpu: " + what + ", which holds a wrong byte at offset " + std::to_string(k) +
                              " (overwritten, or not written this run)");
    }
  }

  CpuBackendOptions options_;
  std::unique_ptr<OpKernels> kernels_;
  std::vector<char> real_;            // by op: runs its real kernel
  std::vector<double> device_bytes_;  // bytes allocated per device since prepare()
  bool fifo_ = true;                  // options_.order: the first ready task, else the lowest rank
  std::vector<FifoReadyQueue> queues_;  // fifo: one per device, built in prepare()
  std::vector<Block> buffers_;  // views into arenas_ (not freed on their own)
  std::vector<int> writer_of_, copy_into_;  // by buffer: the op that writes it, the copy that fills it (-1)
  std::vector<Block> arenas_, scratch_a_, scratch_b_, scratch_c_, stream_;
  size_t live_ = 0;
  std::unique_ptr<std::atomic<std::uint32_t>[]> op_done_, copy_done_;
  std::uint32_t run_id_ = 0;
  std::atomic<bool> abort_{false}, go_{false};
  std::atomic<int> ready_{0};
  Clock::time_point t0_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  int finished_ = 0;
  std::string error_;
  std::unique_ptr<std::atomic<int>[]> running_;  // task index each worker is in, or -1
};

}  // namespace

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
  return std::make_unique<CpuBackend>(options);
}

std::unique_ptr<Evaluator> make_cpu_evaluator(const ExecutorOptions& executor,
                                              const CpuBackendOptions& cpu) {
  const bool aten = cpu.kernels == "aten" || (cpu.kernels == "auto" && have_cpu_kernels());
  return std::make_unique<HardwareEvaluator>(
      "cpu",
      aten ? "cpu executor: one pinned worker thread per device, ATen kernels (one thread each; OpenBLAS GEMMs "
             "for ops without one), memcpy copies"
           : "cpu executor: one pinned worker thread per device, OpenBLAS GEMMs, memcpy copies",
      [cpu](const Cluster&) { return make_cpu_backend(cpu); }, executor);
}

int process_thread_count() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* entry = readdir(dir))
      if (entry->d_name[0] != '.') ++count;
    closedir(dir);
  }
  return count;
}

}  // namespace aware
