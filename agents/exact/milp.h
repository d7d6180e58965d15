// The `milp` placer and the MILP lower bound, through COIN-OR CBC.
//
// The formulation (docs/bounds.md proves each claim) is a relaxation of the
// analytic simulator's contention step: placement variables per colocation
// unit, a start time per op, an op's time on its device, a transfer on an edge
// whose ends are on different devices at the cheapest route of the cluster (no
// link is ever shared), each device's streams loaded no more than the step, and
// the memory rule that parameters are resident and an op's outputs and
// workspace are live while it runs. Its optimum is at most the best simulated
// step of any placement, so the solver's proven bound is a certified lower
// bound of that step.
//
//  - "relaxed": the above. One solve within its share of the time limit; every
//    integer solution the solver found (and the start) is simulated, then the
//    best is polished (windows of units re-placed exactly, the rest fixed).
//  - "exact": the above (with order=true, also "two ops of a stream on one device do
//    not overlap", an order variable per pair no path orders). Branch and bound
//    (the default): place the units one at a time, bound each partial placement
//    by the longest chain and by the relaxation with its units fixed, prune what
//    cannot beat the best simulated step, simulate every leaf. Or rounds: solve
//    for the relaxation's best placement below the best simulated step so far,
//    simulate it, forbid it, repeat. Either way, when no placement is left below
//    the best, the best is optimal for the simulator (`proven`). For small graphs.
#pragma once

#include <cstdint>
#include <string>

#include "core/bounds.h"
#include "core/placement.h"

namespace aware {

class OpGraph;
class Cluster;
class Evaluator;
class OpCostMatrix;
class ProgressObserver;

namespace exact {

struct MilpOptions {
  double time_limit_s = 60;    // the whole solve; 0: return the start, not proven
  std::string mode = "auto";   // auto | exact | relaxed | windows (the polish alone, no solve)
  int exact_max_units = 20;    // auto: exact when the graph has at most this many units
  int max_rounds = 20000;      // exact mode: solves before giving up on a proof
  // Exact mode: add the order variables (non-overlap) to each round's model.
  // Off by default: on the generated graphs of tests/agents/milp_test.cc the
  // rounds of the model without them prove optimality sooner (more rounds, each
  // far cheaper) and leave a higher bound when time runs out.
  bool order = false;
  // Exact mode's search: "branch" (branch and bound over the units, each node
  // bounded by the longest chain and the LP relaxation with the placed units
  // fixed, each leaf simulated) or "rounds" (the whole MILP re-solved with each
  // simulated placement forbidden, until none is left below the best).
  std::string search = "branch";
  // Relaxed mode: after the solve (given 1 - polish_share of the time), polish
  // the incumbent: windows of `window` connected units (0: the most with at most
  // 1,024 placements), each searched exactly by branch and bound with the other
  // units fixed, every candidate simulated, until the time limit.
  bool polish = true;
  double polish_share = 0.5;
  int window = 0;
  std::uint64_t seed = 1;      // the windows' order
  const Placement* start = nullptr;  // a placement to start from (may be null)
  long long max_evals = 0;     // simulations allowed (0: no limit); the start's count
};

struct MilpResult {
  Placement placement;       // the best simulated placement found
  double step_us = 0;        // its simulated step
  bool feasible = false;     // the simulator found it feasible
  double bound_us = 0;       // proven: no placement's simulated step is below this
  bool proven = false;       // step_us equals bound_us (within 1e-6 relative)
  std::string mode;          // "exact" or "relaxed"
  std::string status;        // "optimal", "time limit", "round limit", "evaluation budget", "solver failed: ..."
  std::string source;        // "solver" or "start": where the returned placement came from
  int rounds = 0;            // solves made (rounds; 1 for branch and bound)
  int nodes = 0;             // branch and bound: nodes visited
  int windows = 0;           // relaxed mode's polish: windows searched
  int evaluated = 0;         // placements simulated
  double seconds = 0;
};

// Solves for a placement of `graph` on `cluster`, simulating candidates with
// `evaluator` (the bound holds for the analytic simulator in contention mode
// with the op times in `costs`). Throws ConfigError for a bad mode.
MilpResult solve_milp(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator,
                      const OpCostMatrix& costs, const MilpOptions& options,
                      ProgressObserver* progress = nullptr);

// The relaxed formulation's bounds for `aware bound`: its LP relaxation
// ("lp") and the MILP's proven bound after `time_limit_s` ("milp"), the step
// held at or above `floor_us` (a certified bound, e.g. certified_bound()'s best).
struct RelaxationBounds {
  BoundTerm lp;
  BoundTerm milp;
};
RelaxationBounds relaxation_bounds(const OpGraph& graph, const Cluster& cluster,
                                   const OpCostMatrix& costs, double time_limit_s,
                                   double floor_us = 0);

// Registers "milp" with PlacerRegistry::instance().
void register_exact_placers();

}  // namespace exact
}  // namespace aware
