// INTERNAL to agents/exact: the MILP of docs/bounds.md ("The MILP") as rows, its
// CBC run, and the mapping between its columns and placements. milp.cc solves
// with it (the exact rounds, the relaxation, the bounds); this half builds it.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "agents/common/placer_common.h"
#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/op_graph.h"
#include "core/placement.h"

namespace aware::exact::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A linear program in rows, handed to CBC as one column-major matrix.
struct Lp {
  std::vector<double> col_lb, col_ub, obj;
  std::vector<char> integer;
  std::vector<double> row_lb, row_ub;
  std::vector<std::vector<std::pair<int, double>>> rows;

  int col(double lb, double ub, double cost, bool is_integer) {
    col_lb.push_back(lb);
    col_ub.push_back(ub);
    obj.push_back(cost);
    integer.push_back(is_integer ? 1 : 0);
    return static_cast<int>(obj.size()) - 1;
  }
  void row(std::vector<std::pair<int, double>> terms, double lb, double ub = kInf) {
    rows.push_back(std::move(terms));
    row_lb.push_back(lb);
    row_ub.push_back(ub);
  }
  int num_cols() const { return static_cast<int>(obj.size()); }
};

// What one CBC run gave.
struct Solved {
  bool infeasible = false;     // proven: no integer solution
  bool optimal = false;        // proven optimal
  bool has_solution = false;
  double objective = kInf;     // of the best solution
  double best_bound = -kInf;   // proven lower bound on the optimum
  std::vector<std::vector<double>> solutions;  // best first
  std::string failure;         // non-empty: the solver stopped abnormally
  bool lp_unfinished = false;  // the time limit stopped the LP relaxation: no bound, no solution
};

// One CBC run of `lp` for at most `seconds`, from the `start` values (column,
// value); `lp_only`: the relaxation alone. Solver failures are reported in
// Solved::failure, not thrown. The relaxation is solved first by Clp under the
// time limit (CBC 2.10's own root solve does not watch it: the full Inception-V3
// model ran 5 min 49 s under a 60 s limit); when it does not finish, CBC is not
// started and `lp_unfinished` is set. CBC starts only when the time left is more
// than twice the relaxation's (it solves the root again, unwatched); otherwise
// best_bound is the relaxation's value. CBC's own bound is taken only once it
// has branched or proved optimality.
// `preprocess`: CBC's preprocessing (off for the placer's relaxed solve: CBC
// 2.10 has crashed in CglPreProcess::postProcess when the time limit cut a solve
// of the fused GNMT graph short).
Solved run_cbc(const Lp& lp, double seconds, const std::vector<std::pair<int, double>>& start, bool lp_only,
               bool preprocess = true);

// The LP relaxation of `lp` kept loaded in one simplex, for branch and bound:
// change column bounds, re-solve from the last basis (dual simplex).
class WarmLp {
 public:
  explicit WarmLp(const Lp& lp);
  ~WarmLp();
  WarmLp(const WarmLp&) = delete;
  WarmLp& operator=(const WarmLp&) = delete;
  void set_bounds(int col, double lb, double ub);
  // A deadline, this many wall-clock seconds from now, for every solve after this
  // call (< 0: none); a solve it stops returns -kInf.
  void set_time_limit(double seconds);
  // The relaxation's optimum; kInf when it is infeasible, -kInf when the solve
  // did not finish (no bound).
  double solve();
  // The columns' values at the last solve.
  std::vector<double> columns() const;

 private:
  struct Impl;
  Impl* impl_;
};

// The formulation (docs/bounds.md, "The MILP").
struct Formulation {
  Lp lp;
  placing::Units units;
  std::vector<std::vector<int>> x;  // [unit][device]: column, -1 where the unit cannot go
  int makespan = -1;
  int order_pairs = 0;
  // Devices are interchangeable in the formulation (one cost class, equal
  // memory): device labels are then broken by first use (unit 0 on device 0, a
  // unit on device d only once an earlier unit uses d - 1).
  bool symmetric = false;
};

bool interchangeable_devices(const Cluster& cluster, const OpCostMatrix& costs);
// `cutoff_us` (finite): the step must be at most this (exact rounds); `horizon_us`:
// an upper bound on any start + duration the solve can need (big-M).
// `symmetry_rows`: with interchangeable devices, add row 9 (first use in unit
// number order); branch and bound breaks the symmetry in its own order instead.
// `placement_only`: stop after the units, their x columns (which devices each
// fits) and row 1, for searches that need no LP (the polish's windows).
Formulation build(const OpGraph& graph, const Cluster& cluster, const OpCostMatrix& costs, bool with_order,
                  double floor_us, double cutoff_us, double horizon_us, bool symmetry_rows = true,
                  bool placement_only = false);
// The placement a solution's x columns choose (each unit on its largest x).
Placement decode(const Formulation& f, const std::vector<double>& sol, int num_ops);
// A placement as start values of the x columns (relabelled by first use when the
// devices are interchangeable).
std::vector<std::pair<int, double>> start_values(const Formulation& f, const Placement& p);

}  // namespace aware::exact::detail
