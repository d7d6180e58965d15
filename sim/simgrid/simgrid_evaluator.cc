#include "sim/simgrid/simgrid_evaluator.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cost_table.h"
#include "core/errors.h"
#include "core/formats.h"
#include "core/op_graph.h"
#include "sim/simgrid/worker_pool.h"

#ifndef AWARE_SIMGRID_WORKER_BUILD_PATH
#define AWARE_SIMGRID_WORKER_BUILD_PATH ""
#endif

namespace aware {
namespace {

constexpr const char* kOwner = "evaluator 'simgrid'";
constexpr const char* kWorkerName = "aware-simgrid-worker";

bool is_executable(const std::string& path) {
  return !path.empty() && ::access(path.c_str(), X_OK) == 0 &&
         std::filesystem::is_regular_file(path);
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

std::string find_simgrid_worker() {
  std::vector<std::string> tried;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::string beside = (self.parent_path() / kWorkerName).string();
    if (is_executable(beside)) return beside;
    tried.push_back(beside);
  }
  if (const char* env = std::getenv("AWARE_SIMGRID_WORKER"); env != nullptr && *env != '\0') {
    if (is_executable(env)) return env;
    tried.push_back(std::string(env) + " ($AWARE_SIMGRID_WORKER)");
  } else {
    tried.push_back("$AWARE_SIMGRID_WORKER (unset)");
  }
  const std::string built = AWARE_SIMGRID_WORKER_BUILD_PATH;
  if (is_executable(built)) return built;
  if (!built.empty()) tried.push_back(built);
  throw ConfigError(std::string(kOwner) + ": cannot find the " + kWorkerName +
                    " binary (looked at: " + join(tried, ", ") +
                    "); build it or set AWARE_SIMGRID_WORKER");
}

SimGridEvaluator::SimGridEvaluator(SimGridOptions options) : options_(std::move(options)) {
  if (options_.workers <= 0) {
    options_.workers = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  if (!(options_.timeout_s > 0)) throw ConfigError(std::string(kOwner) + ": timeout_s must be > 0");
  for (const std::string& entry : options_.cfg) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos || colon == 0) {
      throw ConfigError(std::string(kOwner) + ": cfg entry '" + entry + "' must be KEY:VALUE");
    }
  }
  if (!options_.debug_fail_first.empty() && options_.debug_fail_first != "crash" &&
      options_.debug_fail_first != "hang") {
    throw ConfigError(std::string(kOwner) + ": debug.fail_first must be crash or hang");
  }
  if (options_.order != "ready" && options_.order != "analytic")
    throw ConfigError(std::string(kOwner) + ": order '" + options_.order +
                      "' unknown (known: ready, analytic)");
  // The worker reads it among the cfg entries (DagSimulator takes "aware/" ones).
  if (options_.order == "analytic") options_.cfg.push_back("aware/order:analytic");
  if (options_.cost_table == nullptr && !options_.costs.empty()) {
    try {
      options_.cost_table = std::make_shared<const CostTable>(read_cost_table_file(options_.costs));
    } catch (const ParseError& e) {
      throw ParseError(std::string(kOwner) + ": option 'costs': " + e.what());
    }
  }
  if (options_.cost_table != nullptr && options_.cost_table->empty()) options_.cost_table = nullptr;
  if (options_.worker_path.empty()) options_.worker_path = find_simgrid_worker();
  if (!is_executable(options_.worker_path)) {
    throw ConfigError(std::string(kOwner) + ": worker '" + options_.worker_path +
                      "' is not an executable file");
  }
  pool_ = std::make_shared<SimGridWorkerPool>(options_.worker_path, options_.workers,
                                              options_.timeout_s, options_.cfg,
                                              options_.debug_fail_first, options_.cost_table);
}

SimGridEvaluator::~SimGridEvaluator() = default;

std::unique_ptr<SimGridEvaluator> SimGridEvaluator::from_options(const Options& options) {
  SimGridOptions o;
  for (const auto& [key, value] : options) {
    if (key == "workers") {
      o.workers = static_cast<int>(option_int(options, key, 0, kOwner));
      if (o.workers < 0) throw ConfigError(std::string(kOwner) + ": workers must be >= 0");
    } else if (key == "timeout_s") {
      o.timeout_s = option_double(options, key, 60, kOwner);
    } else if (key == "worker") {
      o.worker_path = value;
    } else if (key == "cfg") {
      // "KEY:VALUE;KEY:VALUE"
      std::size_t begin = 0;
      while (begin <= value.size()) {
        const std::size_t end = std::min(value.find(';', begin), value.size());
        const std::string entry = value.substr(begin, end - begin);
        if (!entry.empty()) o.cfg.push_back(entry);
        begin = end + 1;
      }
    } else if (key.rfind("cfg.", 0) == 0 && key.size() > 4) {
      o.cfg.push_back(key.substr(4) + ":" + value);
    } else if (key == "costs") {
      o.costs = value;
    } else if (key == "order") {
      o.order = value;
    } else if (key == "debug.fail_first") {
      o.debug_fail_first = value;
    } else {
      throw ConfigError(std::string(kOwner) + ": unknown option '" + key +
                        "' (known: workers, timeout_s, worker, cfg, cfg.KEY, costs, order, "
                        "debug.fail_first)");
    }
  }
  return std::make_unique<SimGridEvaluator>(std::move(o));
}

std::string SimGridEvaluator::describe() const {
  std::vector<std::string> cfg = {"network/latency-factor:1", "network/bandwidth-factor:1",
                                  "network/crosstraffic:0", "network/TCP-gamma:0"};
  for (const std::string& entry : options_.cfg)
    if (entry.rfind("aware/", 0) != 0) cfg.push_back(entry);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "; %d worker processes, timeout %g s)", options_.workers,
                options_.timeout_s);
  std::string costs;
  if (options_.cost_table != nullptr) {
    costs = "; op costs from " + (options_.costs.empty() ? "a given table" : options_.costs) +
            " (" + std::to_string(options_.cost_table->us.size()) +
            (options_.cost_table->us.size() == 1 ? " entry" : " entries") + ", roofline elsewhere)";
  }
  return std::string("simgrid 3.32 (flow-level network, fair link sharing; one stream per device, ") +
         (options_.order == "ready"
              ? "each running its first ready op in SimGrid's time; cfg "
              : "in the order of the analytic contention schedule; cfg ") +
         join(cfg, ",") + costs + buffer;
}

StepResult SimGridEvaluator::run_step(const OpGraph& graph, const Cluster& cluster,
                                      const Placement& placement, StepObserver* observer) {
  if (!cluster.finalized()) {
    throw ConfigError("cluster '" + cluster.name() + "' must be finalized before evaluation");
  }
  check_placement(graph, cluster, placement);
  if (observer == nullptr) return pool_->evaluate(graph, cluster, placement, nullptr);
  // The worker records the spans; they are reported here, in the worker's order.
  Trace trace;
  const StepResult result = pool_->evaluate(graph, cluster, placement, &trace);
  replay_trace(trace, *observer);
  return result;
}

std::vector<StepResult> SimGridEvaluator::evaluate_batch(const OpGraph& graph,
                                                         const Cluster& cluster,
                                                         const std::vector<Placement>& placements) {
  if (!cluster.finalized()) {
    throw ConfigError("cluster '" + cluster.name() + "' must be finalized before evaluation");
  }
  for (size_t i = 0; i < placements.size(); ++i) {
    check_placement(graph, cluster, placements[i], "placement #" + std::to_string(i));
  }
  std::vector<StepResult> results(placements.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto drain = [&] {
    for (std::size_t i = next++; i < placements.size(); i = next++) {
      try {
        results[i] = pool_->evaluate(graph, cluster, placements[i], nullptr);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!first_error) first_error = std::current_exception();
      }
    }
  };
  const int threads = std::min<int>(pool_->size(), static_cast<int>(placements.size()));
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(drain);
  drain();
  for (auto& h : helpers) h.join();
  if (first_error) std::rethrow_exception(first_error);
  return results;
}

std::unique_ptr<Evaluator> SimGridEvaluator::clone() const {
  return std::unique_ptr<Evaluator>(new SimGridEvaluator(*this));
}

std::vector<int> SimGridEvaluator::worker_pids() const { return pool_->pids(); }

namespace {

// The line of a dying worker's stderr that says why: SimGrid's last CRITICAL log
// line (what xbt_die and a failed xbt_assert print before their backtrace and
// abort), else the last line that is not part of a backtrace.
std::string simgrid_reason(const std::string& err) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin <= err.size()) {
    const std::size_t end = std::min(err.find('\n', begin), err.size());
    if (end > begin) lines.push_back(err.substr(begin, end - begin));
    begin = end + 1;
  }
  constexpr const char* kCritical = "/CRITICAL] ";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::size_t at = it->find(kCritical);
    if (at != std::string::npos) return it->substr(at + std::strlen(kCritical));
  }
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const bool backtrace = it->find("  -> ") == 0 || it->find("Backtrace") == 0;
    if (!backtrace) return *it;
  }
  return {};
}

}  // namespace

Cluster cluster_from_simgrid_xml(const std::string& path, double timeout_s) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec || !std::filesystem::is_regular_file(absolute)) {
    throw ParseError(path + ": no such platform file");
  }
  std::string out, err;
  bool timed_out = false;
  const int status = run_child({find_simgrid_worker(), "--parse-platform", absolute}, timeout_s,
                               &out, &err, &timed_out);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    return cluster_from_json(parse_json_text(out, absolute), absolute);
  }
  // Errors the worker catches come back as one line naming the file (exit 3:
  // parse, 4: device). SimGrid may also end the process itself (a failed
  // xbt_assert aborts, say on a link declared twice): that stays in the worker and
  // is reported here with SimGrid's reason, as is a load that never ends.
  if (timed_out) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    throw ParseError(absolute + ": SimGrid did not finish loading the platform within " + limit +
                     " s (the worker was killed)");
  }
  const std::string reason = simgrid_reason(err);
  if (WIFEXITED(status) && (WEXITSTATUS(status) == 3 || WEXITSTATUS(status) == 4) &&
      err.find('\n') == std::string::npos && err.find(absolute) != std::string::npos) {
    if (WEXITSTATUS(status) == 4) throw DeviceError(err);
    throw ParseError(err);
  }
  throw ParseError(absolute + ": SimGrid could not load the platform (worker " +
                   describe_status(status) + ")" + (reason.empty() ? "" : ": " + reason));
}

}  // namespace aware
