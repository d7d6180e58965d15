#include "core/evaluator.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/op_graph.h"

namespace aware {
namespace {
std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

// Results are finite or refused: an overflowing cost model must not reach a
// table as "inf ms" or a reward as NaN.
static StepResult checked(StepResult result, const std::string& evaluator) {
  if (!std::isfinite(result.step_time_us) || result.step_time_us < 0) {
    std::ostringstream out;
    out << "evaluator '" << evaluator << "': the step time is " << result.step_time_us
        << " us, not a finite time; check the graph's costs and the cluster's rates";
    throw ConfigError(out.str());
  }
  return result;
}

StepResult Evaluator::evaluate(const OpGraph& graph, const Cluster& cluster,
                               const Placement& placement, Trace* trace) {
  if (trace == nullptr) return checked(run_step(graph, cluster, placement, nullptr), name());
  TraceRecorder recorder(*trace);
  return evaluate_observed(graph, cluster, placement, &recorder);
}

StepResult Evaluator::evaluate_observed(const OpGraph& graph, const Cluster& cluster,
                                        const Placement& placement, StepObserver* observer) {
  if (observer != nullptr) observer->on_step_begin(graph, cluster, placement);
  StepResult result = checked(run_step(graph, cluster, placement, observer), name());
  if (observer != nullptr) observer->on_step_end(result);
  return result;
}

StepResult Evaluator::evaluate_move(const OpGraph& graph, const Cluster& cluster,
                                    const Placement& prev, const std::vector<OpMove>& moves) {
  return checked(run_move(graph, cluster, prev, moves), name());
}

StepResult Evaluator::run_move(const OpGraph& graph, const Cluster& cluster, const Placement& prev,
                               const std::vector<OpMove>& moves) {
  Placement next = prev;
  apply_moves(graph, cluster, next, moves);
  return run_step(graph, cluster, next, nullptr);
}

void apply_moves(const OpGraph& graph, const Cluster& cluster, Placement& placement,
                 const std::vector<OpMove>& moves) {
  for (const OpMove& m : moves) {
    if (m.op < 0 || m.op >= placement.size() || m.device < 0 || m.device >= cluster.num_devices()) {
      std::ostringstream out;
      out << "move: op " << m.op << " to device " << m.device << " is not an op of graph '"
          << graph.name() << "' (" << placement.size() << " ops) and a device of cluster '"
          << cluster.name() << "' (" << cluster.num_devices() << " devices)";
      throw DeviceError(out.str());
    }
    placement[m.op] = m.device;
  }
}

EvaluatorRegistry& EvaluatorRegistry::instance() {
  static EvaluatorRegistry registry;
  return registry;
}

std::unique_ptr<Evaluator> EvaluatorRegistry::create(const std::string& name,
                                                     const Options& options) const {
  check_options(name, options);
  return Registry::create(name, options);
}

std::string option_string(const Options& options, const std::string& key,
                          const std::string& fallback) {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

double option_double(const Options& options, const std::string& key, double fallback,
                     const std::string& owner) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || errno != 0) {
    throw ConfigError(owner + ": option '" + key + "' must be a number, got '" + it->second + "'");
  }
  return value;
}

long long option_int(const Options& options, const std::string& key, long long fallback,
                     const std::string& owner) {
  auto it = options.find(key);
  if (it == options.end()) return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno != 0) {
    throw ConfigError(owner + ": option '" + key + "' must be an integer, got '" + it->second +
                      "'");
  }
  return value;
}

bool option_bool(const Options& options, const std::string& key, bool fallback,
                 const std::string& owner) {
  const std::string text = option_string(options, key, fallback ? "1" : "0");
  if (text == "1" || text == "true" || text == "on") return true;
  if (text == "0" || text == "false" || text == "off") return false;
  throw ConfigError(owner + ": option '" + key + "' must be 0 or 1 (true/false, on/off), got '" + text + "'");
}

void check_known_options(const Options& options, const std::vector<std::string>& known,
                         const std::string& owner) {
  for (const auto& [key, value] : options) {
    bool found = false;
    for (const auto& k : known) found = found || k == key;
    if (!found) {
      throw ConfigError(owner + ": unknown option '" + key + "' (known: " + join_names(known) +
                        ")");
    }
  }
}

}  // namespace aware
