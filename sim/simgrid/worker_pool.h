// Private to sim/simgrid: the pool of aware-simgrid-worker processes behind
// SimGridEvaluator. Thread-safe: each request leases one idle worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware {

class ForkThread;

class SimGridWorkerPool {
 public:
  // `costs` (may be null) is sent to every worker as it starts.
  SimGridWorkerPool(std::string worker_path, int workers, double timeout_s,
                    std::vector<std::string> cfg, std::string debug_fail_first,
                    std::shared_ptr<const CostTable> costs = nullptr);
  // Kills every worker (SIGKILL) and reaps it: no orphans, no zombies.
  ~SimGridWorkerPool();

  StepResult evaluate(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      Trace* trace);
  int size() const { return static_cast<int>(slots_.size()); }
  std::vector<int> pids() const;

 private:
  struct Worker;
  Worker* acquire();
  void release(Worker* worker);
  void spawn(Worker& worker);
  void kill(Worker& worker);
  StepResult attempt(Worker& worker, const OpGraph& graph, const Cluster& cluster,
                     const Placement& placement, Trace* trace, std::uint8_t debug);

  std::string worker_path_;
  double timeout_s_;
  std::vector<std::string> cfg_;
  std::string debug_fail_first_;
  std::shared_ptr<const CostTable> costs_;
  bool debug_used_ = false;
  mutable std::mutex mutex_;
  std::condition_variable idle_cv_;
  std::vector<std::unique_ptr<Worker>> slots_;
  std::vector<Worker*> idle_;
  // Workers are forked from one long-lived thread: PR_SET_PDEATHSIG fires when
  // the forking *thread* exits, and callers' threads may be short-lived.
  std::unique_ptr<ForkThread> fork_thread_;
};

// Runs `argv` (argv[0] = path) with stdout on a pipe and stderr captured; kills
// it after `timeout_s` (and sets `*timed_out` when given). Returns the exit status
// (as from waitpid), fills `out` and `err`; the child is always reaped. Throws
// Error when it cannot start.
int run_child(const std::vector<std::string>& argv, double timeout_s, std::string* out,
              std::string* err, bool* timed_out = nullptr);
// "exited with status 3", "killed by signal 6 (SIGABRT)": a waitpid status in words.
std::string describe_status(int status);

}  // namespace aware
