#include "sim/simgrid/worker_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/formats.h"
#include "sim/simgrid/wire.h"

namespace aware {
namespace wire = simgrid_wire;

// A thread that lives as long as the pool and performs every fork, so that the
// workers' PR_SET_PDEATHSIG (tied to the forking thread) fires only when the
// process itself goes away.
class ForkThread {
 public:
  ForkThread() : thread_([this] { loop(); }) {}
  ~ForkThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void run(std::function<void()> job) {
    std::packaged_task<void()> task(std::move(job));
    std::future<void> done = task.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(task));
    }
    cv_.notify_all();
    done.get();
  }

 private:
  void loop() {
    for (;;) {
      std::packaged_task<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;
};

namespace {

// A worker that died, hung or spoke nonsense: retried once, then reported.
struct WorkerFailure {
  std::string what;
};

struct Child {
  pid_t pid = -1;
  int fd = -1;      // socket (serve) or stdout pipe (run_child)
  int err_fd = -1;  // memfd holding the child's stderr
};

// Forks and execs `args` with stdin+stdout on one end of a socket pair (or only
// stdout on a pipe when `socket` is false) and stderr into a memfd.
Child start_child(const std::vector<std::string>& args, bool socket) {
  int fds[2];
  const int made =
      socket ? ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) : ::pipe2(fds, O_CLOEXEC);
  if (made != 0)
    throw Error(std::string("simgrid: cannot create a channel: ") + std::strerror(errno));
  const int err_fd = ::memfd_create("aware-simgrid-worker-stderr", MFD_CLOEXEC);
  if (err_fd < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("simgrid: memfd_create failed: ") + std::strerror(errno));
  }
  // Everything the child touches is prepared before fork (only async-signal-safe
  // calls are allowed after it in a threaded process).
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int child_end = socket ? fds[1] : fds[1];
  const int parent_end = fds[0];
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    ::close(err_fd);
    throw Error(std::string("simgrid: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(111);
    if (socket)
      ::dup2(child_end, 0);
    else {
      const int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) ::dup2(devnull, 0);
    }
    ::dup2(child_end, 1);
    ::dup2(err_fd, 2);
    ::execv(argv[0], argv.data());
    static const char msg[] = "aware-simgrid-worker: exec failed\n";
    ssize_t ignored = ::write(2, msg, sizeof msg - 1);
    (void)ignored;
    ::_exit(127);
  }
  ::close(child_end);
  return Child{pid, parent_end, err_fd};
}

std::string read_memfd_tail(int fd, std::size_t max_chars = 3000) {
  if (fd < 0) return {};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return {};
  const off_t size = st.st_size;
  const off_t from =
      size > static_cast<off_t>(max_chars) ? size - static_cast<off_t>(max_chars) : 0;
  std::string text(static_cast<std::size_t>(size - from), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

[[noreturn]] void throw_worker_error(const std::string& payload) {
  wire::ByteReader r(payload);
  const auto cls = static_cast<wire::ErrorClass>(r.u8());
  const std::string message = r.str();
  switch (cls) {
    case wire::ErrorClass::kParse:
      throw ParseError(message);
    case wire::ErrorClass::kGraph:
      throw GraphError(message);
    case wire::ErrorClass::kConfig:
      throw ConfigError(message);
    case wire::ErrorClass::kDevice:
      throw DeviceError(message);
    case wire::ErrorClass::kInternal:
      throw InternalError(message);
    default:
      throw Error(message);
  }
}

bool is_platform_file(const std::string& source) {
  return source.size() > 4 && source.compare(source.size() - 4, 4, ".xml") == 0;
}

}  // namespace

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) +
           (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "status " + std::to_string(status);
}

struct SimGridWorkerPool::Worker {
  Child child;
  int last_status = 0;
  bool has_cluster = false;
  std::string cluster_key;
  bool has_graph = false;
  std::uint64_t graph_revision = 0;
};

SimGridWorkerPool::SimGridWorkerPool(std::string worker_path, int workers, double timeout_s,
                                     std::vector<std::string> cfg, std::string debug_fail_first,
                                     std::shared_ptr<const CostTable> costs)
    : worker_path_(std::move(worker_path)),
      timeout_s_(timeout_s),
      cfg_(std::move(cfg)),
      debug_fail_first_(std::move(debug_fail_first)),
      costs_(std::move(costs)),
      fork_thread_(std::make_unique<ForkThread>()) {
  for (int i = 0; i < workers; ++i) {
    slots_.push_back(std::make_unique<Worker>());
    idle_.push_back(slots_.back().get());
  }
}

SimGridWorkerPool::~SimGridWorkerPool() {
  for (auto& w : slots_) kill(*w);
}

std::vector<int> SimGridWorkerPool::pids() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int> out;
  for (const auto& w : slots_) {
    if (w->child.pid > 0) out.push_back(w->child.pid);
  }
  return out;
}

SimGridWorkerPool::Worker* SimGridWorkerPool::acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_cv_.wait(lock, [this] { return !idle_.empty(); });
  Worker* w = idle_.back();
  idle_.pop_back();
  return w;
}

void SimGridWorkerPool::release(Worker* worker) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(worker);
  }
  idle_cv_.notify_one();
}

void SimGridWorkerPool::kill(Worker& w) {
  if (w.child.pid > 0) {
    ::kill(w.child.pid, SIGKILL);
    int status = 0;
    while (::waitpid(w.child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    w.last_status = status;
  }
  if (w.child.fd >= 0) ::close(w.child.fd);
  // err_fd stays open until the next spawn so a failure report can still read it.
  std::lock_guard<std::mutex> lock(mutex_);
  w.child.pid = -1;
  w.child.fd = -1;
  w.has_cluster = false;
  w.has_graph = false;
}

void SimGridWorkerPool::spawn(Worker& w) {
  if (w.child.err_fd >= 0) ::close(w.child.err_fd);
  w.child.err_fd = -1;
  std::vector<std::string> args = {worker_path_, "--serve"};
  for (const std::string& c : cfg_) args.push_back("--cfg=" + c);
  Child child;
  std::exception_ptr failed;
  fork_thread_->run([&] {
    try {
      child = start_child(args, true);
    } catch (...) {
      failed = std::current_exception();
    }
  });
  if (failed) std::rethrow_exception(failed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    w.child = child;
  }
  char kind = 0;
  std::string payload;
  bool timed_out = false;
  if (!wire::read_frame(w.child.fd, &kind, &payload, static_cast<long long>(timeout_s_ * 1000),
                        &timed_out)) {
    throw WorkerFailure{timed_out ? "did not start within the timeout" : "died while starting"};
  }
  if (kind == wire::kError) {
    kill(w);
    throw_worker_error(payload);  // a bad cfg entry: ConfigError, not retried
  }
  if (kind != wire::kHello) throw WorkerFailure{"sent an unexpected greeting"};
  if (costs_ == nullptr || costs_->empty()) return;
  // The table goes to the worker as numbers, not as a path: the worker prices ops
  // with exactly what this process read, even if the file changes later.
  wire::ByteWriter table;
  wire::encode_cost_table(table, *costs_);
  if (!wire::write_frame(w.child.fd, wire::kLoadCosts, table.bytes()))
    throw WorkerFailure{"closed its input"};
  if (!wire::read_frame(w.child.fd, &kind, &payload, static_cast<long long>(timeout_s_ * 1000),
                        &timed_out)) {
    throw WorkerFailure{timed_out ? "did not take the cost table within the timeout"
                                  : "died while taking the cost table"};
  }
  if (kind == wire::kError) {
    kill(w);
    throw_worker_error(payload);
  }
  if (kind != wire::kOk) throw WorkerFailure{"answered the cost table with an unexpected frame"};
}

StepResult SimGridWorkerPool::attempt(Worker& w, const OpGraph& graph, const Cluster& cluster,
                                      const Placement& placement, Trace* trace,
                                      std::uint8_t debug) {
  const std::string cluster_key = std::to_string(cluster.revision()) + "|" + cluster.source();
  if (w.child.pid > 0 && w.has_cluster && w.cluster_key != cluster_key)
    kill(w);  // one platform per engine
  if (w.child.pid <= 0) spawn(w);
  const long long timeout_ms = static_cast<long long>(timeout_s_ * 1000);
  auto request = [&](char kind, const std::string& payload, char expect) {
    if (!wire::write_frame(w.child.fd, kind, payload)) throw WorkerFailure{"closed its input"};
    char got = 0;
    std::string answer;
    bool timed_out = false;
    if (!wire::read_frame(w.child.fd, &got, &answer, timeout_ms, &timed_out)) {
      char buffer[96];
      std::snprintf(buffer, sizeof buffer, "gave no answer within %g s", timeout_s_);
      throw WorkerFailure{timed_out ? buffer : "died during the request"};
    }
    if (got == wire::kError) {
      if (kind == wire::kLoadCluster) kill(w);  // a half-built platform is not reusable
      if (kind == wire::kLoadGraph) w.has_graph = false;
      throw_worker_error(answer);
    }
    if (got != expect) throw WorkerFailure{"answered with an unexpected frame"};
    return answer;
  };
  if (!w.has_cluster) {
    wire::ByteWriter out;
    out.str(is_platform_file(cluster.source()) ? cluster.source() : std::string());
    out.str(cluster_to_json(cluster).dump());
    request(wire::kLoadCluster, out.bytes(), wire::kOk);
    w.has_cluster = true;
    w.cluster_key = cluster_key;
    w.has_graph = false;
  }
  if (!w.has_graph || w.graph_revision != graph.revision()) {
    wire::ByteWriter out;
    out.str(graph_to_json(graph).dump());
    w.has_graph = false;
    request(wire::kLoadGraph, out.bytes(), wire::kOk);
    w.has_graph = true;
    w.graph_revision = graph.revision();
  }
  wire::ByteWriter out;
  out.u8(trace != nullptr ? 1 : 0);
  out.u8(debug);
  out.i32(placement.size());
  for (int d : placement.device_of_op) out.i32(d);
  const std::string answer = request(wire::kEvaluate, out.bytes(), wire::kResult);
  wire::ByteReader in(answer);
  StepResult result;
  wire::decode_result(in, &result, trace);
  result.evaluator = "simgrid";
  return result;
}

StepResult SimGridWorkerPool::evaluate(const OpGraph& graph, const Cluster& cluster,
                                       const Placement& placement, Trace* trace) {
  Worker* w = acquire();
  struct Lease {
    SimGridWorkerPool* pool;
    Worker* w;
    ~Lease() { pool->release(w); }
  } lease{this, w};
  std::uint8_t debug = wire::kDebugNone;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!debug_used_ && !debug_fail_first_.empty()) {
      debug = debug_fail_first_ == "hang" ? wire::kDebugHang : wire::kDebugCrash;
      debug_used_ = true;
    }
  }
  auto report = [&](const WorkerFailure& f) {
    const int pid = w->child.pid;
    kill(*w);
    std::string text = "simgrid worker (pid " + std::to_string(pid) + ") " + f.what;
    if (pid > 0) text += ", " + describe_status(w->last_status);
    const std::string err = read_memfd_tail(w->child.err_fd);
    if (!err.empty()) text += "; its stderr:\n" + err;
    return text;
  };
  std::string first;
  try {
    return attempt(*w, graph, cluster, placement, trace, debug);
  } catch (const WorkerFailure& f) {
    first = report(f);
  }
  try {
    return attempt(*w, graph, cluster, placement, trace, wire::kDebugNone);
  } catch (const WorkerFailure& f) {
    throw Error("evaluator 'simgrid': the evaluation failed twice. Last: " + report(f) +
                "\nFirst: " + first);
  }
}

int run_child(const std::vector<std::string>& argv, double timeout_s, std::string* out,
              std::string* err, bool* timed_out_flag) {
  Child child = start_child(argv, false);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  bool timed_out = false;
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{child.fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buffer, static_cast<std::size_t>(n));
  }
  // End of file on stdout need not mean the end of the child (it may close
  // stdout and go on running): its exit is awaited within the same deadline.
  int status = 0;
  bool reaped = false;
  while (!timed_out && !reaped) {
    const pid_t r = ::waitpid(child.pid, &status, WNOHANG);
    if (r == child.pid) {
      reaped = true;
    } else if (r < 0 && errno != EINTR) {
      break;
    } else if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  if (timed_out) ::kill(child.pid, SIGKILL);
  while (!reaped && ::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  *err = read_memfd_tail(child.err_fd);
  ::close(child.fd);
  ::close(child.err_fd);
  if (timed_out) *err += (err->empty() ? "" : "\n") + std::string("(killed: timed out)");
  if (timed_out_flag != nullptr) *timed_out_flag = timed_out;
  return status;
}

}  // namespace aware
