// The one Evaluator interface every simulator and hardware backend implements,
// and the registry that names them ("analytic", "simgrid", "cuda", ...).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/placement.h"

namespace aware {

class OpGraph;
class Cluster;

// String options for evaluators and placers ("mode" -> "placeto", ...).
using Options = std::map<std::string, std::string>;

// Scores a placement of a graph on a cluster.
//
// evaluate() is pure in its inputs (same graph, cluster, placement: same result
// on deterministic evaluators) but an instance may cache per-(graph, cluster)
// preparation, so one instance must not be used from two threads at once; use
// clone() to get one per thread. Bad input (a placement naming an unknown device,
// a graph that does not validate) throws; an infeasible placement returns a
// StepResult with feasible == false and the reason.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual std::string name() const = 0;
  // A one-line description of the model and settings in use (printed with results).
  virtual std::string describe() const { return name(); }
  // Simulates (or runs) one training step. Fills `trace` when non-null.
  virtual StepResult evaluate(const OpGraph& graph, const Cluster& cluster,
                              const Placement& placement, Trace* trace = nullptr) = 0;
  // An independent instance with the same settings.
  virtual std::unique_ptr<Evaluator> clone() const = 0;
};

using EvaluatorFactory = std::function<std::unique_ptr<Evaluator>(const Options&)>;

// Name -> factory. Thread-safe.
class EvaluatorRegistry {
 public:
  static EvaluatorRegistry& instance();
  void add(const std::string& name, const std::string& description, EvaluatorFactory factory);
  bool has(const std::string& name) const;
  // Throws ConfigError listing the known names for an unknown one.
  std::unique_ptr<Evaluator> create(const std::string& name, const Options& options = {}) const;
  std::vector<std::string> names() const;
  std::string description(const std::string& name) const;

 private:
  struct Entry {
    std::string description;
    EvaluatorFactory factory;
  };
  std::map<std::string, Entry> entries_;
};

// Reads an option, or returns `fallback`. Throws ConfigError naming `owner` if the
// value does not parse as the wanted type.
std::string option_string(const Options& options, const std::string& key,
                          const std::string& fallback);
double option_double(const Options& options, const std::string& key, double fallback,
                     const std::string& owner);
long long option_int(const Options& options, const std::string& key, long long fallback,
                     const std::string& owner);
// Throws ConfigError if `options` holds a key not in `known`.
void check_known_options(const Options& options, const std::vector<std::string>& known,
                         const std::string& owner);

}  // namespace aware
