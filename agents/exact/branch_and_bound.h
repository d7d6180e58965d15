// INTERNAL to agents/exact: the searches milp.cc runs over simulated
// placements. The incumbent (the best simulated placement), exact mode's branch
// and bound over the colocation units, and relaxed mode's polish (windows of
// units re-placed by the same branch and bound). docs/bounds.md proves the
// bounds it prunes with.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "agents/exact/formulation.h"
#include "agents/exact/milp.h"
#include "core/evaluator.h"
#include "core/placement.h"
#include "core/progress.h"

namespace aware::exact::detail {

// Relative tolerance of "equal" steps, and of the cutoff below the best.
inline constexpr double kTol = 1e-6;

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Keeps the best simulated placement.
struct Incumbent {
  Placement placement;
  double step_us = kInf;
  bool feasible = false;
  std::string source;
  int evaluated = 0;
  long long budget = 0;  // 0: no limit
  bool exhausted() const { return budget > 0 && evaluated >= budget; }
  // Simulates `p` and keeps it if better; false once the budget is spent.
  bool offer(Evaluator& ev, const OpGraph& g, const Cluster& c, const Placement& p, const std::string& from);
  // The same for `base` with `moves` applied, through the evaluator's incremental path.
  bool offer_move(Evaluator& ev, const OpGraph& g, const Cluster& c, const Placement& base,
                  const std::vector<OpMove>& moves, const std::string& from);

 private:
  bool keep(const StepResult& r, const Placement& base, const std::vector<OpMove>* moves, const std::string& from);
};

// Exact mode: branch and bound over every unit of `f` (built without the
// symmetry rows), from `root_bound`. Sets `status` ("optimal", "time limit",
// "evaluation budget") and `nodes`; returns the proven lower bound.
double branch_and_bound(const OpGraph& g, const Cluster& c, const OpCostMatrix& costs, const Formulation& f,
                        Evaluator& ev, Incumbent& inc, double deadline_s, Clock::time_point t0,
                        ProgressObserver* progress, double root_bound, std::string& status, int& nodes);

// Relaxed mode's polish: windows of connected units around the incumbent, each
// re-placed exactly, until the time limit or the budget. Returns the windows searched.
int polish_windows(const OpGraph& g, const Cluster& c, const OpCostMatrix& costs, const Formulation& f,
                   Evaluator& ev, Incumbent& inc, const MilpOptions& o, Clock::time_point t0,
                   ProgressObserver* progress);

}  // namespace aware::exact::detail
