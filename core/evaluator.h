// The one Evaluator interface every simulator and hardware backend implements,
// and the registry that names them ("analytic", "simgrid", "cpu", ...).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/registry.h"
#include "core/step_observer.h"

namespace aware {

class OpGraph;
class Cluster;

// Scores a placement of a graph on a cluster.
//
// evaluate() is pure in its inputs (same graph, cluster, placement: same result
// on deterministic evaluators) but an instance may cache per-(graph, cluster)
// preparation, so one instance must not be used from two threads at once; use
// clone() to get one per thread. Bad input (a placement naming an unknown device,
// a graph that does not validate) throws; an infeasible placement returns a
// StepResult with feasible == false and the reason.
//
// An implementation overrides run_step() and reports what ran when to the
// observer it is given (which may be null: then it reports nothing).
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  virtual std::string name() const = 0;
  // A one-line description of the model and settings in use (printed with results).
  virtual std::string describe() const { return name(); }
  // Simulates (or runs) one training step. Fills `trace` when non-null (through a
  // TraceRecorder).
  StepResult evaluate(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      Trace* trace = nullptr);
  // The same step reported to `observer` (may be null): on_step_begin, every
  // on_op / on_transfer, then on_step_end.
  StepResult evaluate_observed(const OpGraph& graph, const Cluster& cluster,
                               const Placement& placement, StepObserver* observer);
  // The step for `prev` with every op of `moves` on its new device: the same
  // result, bit for bit, as evaluate() on the moved placement. An evaluator that
  // can reuse its simulation of `prev` re-simulates only from the first moment a
  // moved op can matter (the analytic simulator's contention mode keeps the last
  // base placement and the last move, so a search that accepts or rejects one
  // move at a time hits that state); the others evaluate the moved placement.
  StepResult evaluate_move(const OpGraph& graph, const Cluster& cluster, const Placement& prev,
                           const std::vector<OpMove>& moves);
  // An independent instance with the same settings.
  virtual std::unique_ptr<Evaluator> clone() const = 0;

 protected:
  virtual StepResult run_step(const OpGraph& graph, const Cluster& cluster,
                              const Placement& placement, StepObserver* observer) = 0;
  // evaluate_move()'s work; by default applies the moves and runs the step.
  virtual StepResult run_move(const OpGraph& graph, const Cluster& cluster, const Placement& prev,
                              const std::vector<OpMove>& moves);
  // For evaluators that wrap another: runs `inner`'s step with the same observer,
  // without a second on_step_begin / on_step_end.
  static StepResult run_inner_step(Evaluator& inner, const OpGraph& graph, const Cluster& cluster,
                                   const Placement& placement, StepObserver* observer) {
    return inner.run_step(graph, cluster, placement, observer);
  }
};

// Builds an evaluator from its options (checked against the entry's OptionSpecs
// by create() before the factory runs).
class EvaluatorRegistry : public Registry<Evaluator, const Options&> {
 public:
  static EvaluatorRegistry& instance();
  std::unique_ptr<Evaluator> create(const std::string& name, const Options& options = {}) const;

 private:
  EvaluatorRegistry() : Registry("evaluator") {}
};

// Puts each op of `moves` on its device in `placement`. Throws DeviceError for an
// op outside the placement or a device outside the cluster.
void apply_moves(const OpGraph& graph, const Cluster& cluster, Placement& placement,
                 const std::vector<OpMove>& moves);

// Reads an option, or returns `fallback`. Throws ConfigError naming `owner` if the
// value does not parse as the wanted type.
std::string option_string(const Options& options, const std::string& key,
                          const std::string& fallback);
double option_double(const Options& options, const std::string& key, double fallback,
                     const std::string& owner);
long long option_int(const Options& options, const std::string& key, long long fallback,
                     const std::string& owner);
// "1", "true", "on" / "0", "false", "off"; anything else throws ConfigError naming `owner`.
bool option_bool(const Options& options, const std::string& key, bool fallback,
                 const std::string& owner);
// Throws ConfigError if `options` holds a key not in `known`.
void check_known_options(const Options& options, const std::vector<std::string>& known,
                         const std::string& owner);

}  // namespace aware
