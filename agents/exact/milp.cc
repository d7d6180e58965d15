#include "agents/exact/milp.h"

#include "agents/exact/branch_and_bound.h"
#include "agents/exact/formulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "agents/common/placer_common.h"
#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"
#include "core/progress.h"

namespace aware::exact {

using namespace detail;

MilpResult solve_milp(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator,
                      const OpCostMatrix& costs, const MilpOptions& options,
                      ProgressObserver* progress) {
  if (options.mode != "auto" && options.mode != "exact" && options.mode != "relaxed" && options.mode != "windows")
    throw ConfigError("milp: mode must be auto, exact, relaxed or windows, not '" + options.mode + "'");
  if (options.search != "branch" && options.search != "rounds")
    throw ConfigError("milp: search must be branch or rounds, not '" + options.search + "'");
  if (!(options.time_limit_s >= 0)) throw ConfigError("milp: time_limit must be >= 0");
  const auto t0 = Clock::now();
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  const placing::Units units = placing::colocation_units(graph);
  const bool exact =
      options.mode == "exact" || (options.mode == "auto" && units.num_units() <= options.exact_max_units);
  const bool windows_only = options.mode == "windows";
  const CertifiedBound floor = certified_bound(graph, cluster, costs);

  MilpResult out;
  out.mode = options.mode == "windows" ? "windows" : exact ? "exact" : "relaxed";
  Incumbent inc;
  inc.budget = options.max_evals;
  if (options.start) inc.offer(evaluator, graph, cluster, *options.start, "start");
  // Every unit on one device, for each device (the cheapest feasible starts).
  for (int d = 0; d < D; ++d) inc.offer(evaluator, graph, cluster, Placement(std::vector<int>(n, d)), "start");
  double lower = floor.best_us();
  auto report = [&](const std::string& message) {
    if (!progress) return;
    Progress p;
    p.task = "milp on " + graph.name();
    p.done = out.rounds;
    p.best_step_us = inc.feasible ? inc.step_us : -1;
    p.elapsed_s = seconds_since(t0);
    p.message = message;
    progress->on_progress(p);
  };

  if (options.time_limit_s <= 0) {
    out.status = "time limit";
  } else if (windows_only) {
    // No solve: the start (the caller's, or the best one-pass placer) polished
    // until the time limit. The bound stays the solver-free one.
    const Formulation f = build(graph, cluster, costs, false, 0, kInf, 0, false, /*placement_only=*/true);
    out.windows = polish_windows(graph, cluster, costs, f, evaluator, inc, options, t0, progress);
    out.status = inc.exhausted() ? "evaluation budget" : "time limit";
  } else if (!exact) {
    const Formulation f = build(graph, cluster, costs, false, floor.best_us(), kInf, 0);
    // With the polish, the solve gets its share of the time and the windows the rest.
    const double solve_s = options.polish ? options.time_limit_s * (1 - options.polish_share) : options.time_limit_s;
    const Solved r = run_cbc(f.lp, solve_s, start_values(f, inc.placement), false, /*preprocess=*/false);
    out.rounds = 1;
    for (const auto& sol : r.solutions) inc.offer(evaluator, graph, cluster, decode(f, sol, n), "solver");
    if (!r.failure.empty()) out.status = "solver failed: " + r.failure;
    else if (r.lp_unfinished) out.status = "time limit (the LP relaxation did not finish)";
    else if (r.infeasible) out.status = "infeasible";
    else out.status = r.optimal ? "optimal" : "time limit";
    if (std::isfinite(r.best_bound)) lower = std::max(lower, r.best_bound);
    if (r.infeasible) lower = kInf;
    // Nothing to polish once the solve's bound proves the best optimal.
    const bool proven_now = inc.feasible && inc.step_us <= lower * (1 + 2 * kTol);
    if (options.polish && !r.infeasible && !proven_now)
      out.windows = polish_windows(graph, cluster, costs, f, evaluator, inc, options, t0, progress);
  } else {
    std::vector<std::vector<std::pair<int, double>>> cuts;
    // Every op at its slowest and every edge's transfer one after another: no
    // schedule the rounds consider needs a larger big-M (computed once).
    double serial_us = 0, max_p = 0;
    for (int op = 0; op < n; ++op)
      for (int d = 0; d < D; ++d) max_p = std::max(max_p, costs.time_us(op, d));
    for (int op = 0; op < n; ++op) {
      double worst = 0;
      for (int d = 0; d < D; ++d) worst = std::max(worst, costs.time_us(op, d));
      serial_us += worst;
    }
    for (const Edge& e : graph.edges()) serial_us += cheapest_transfer_us(cluster, e.bytes);
    if (options.search == "branch") {
      // Without row 9: the search opens devices in its own (topological) unit
      // order, which need not be the units' numbering the row follows.
      const Formulation f = build(graph, cluster, costs, options.order, floor.best_us(), kInf, serial_us + max_p + 1,
                                  /*symmetry_rows=*/false);
      // The root's bound: the LP relaxation, no unit placed.
      const Solved root = run_cbc(f.lp, std::max(0.01, options.time_limit_s - seconds_since(t0)), {}, true);
      const double root_bound = std::max(floor.best_us(), root.has_solution ? root.objective : -kInf);
      lower = std::max(lower, branch_and_bound(graph, cluster, costs, f, evaluator, inc, options.time_limit_s, t0,
                                               progress, root_bound, out.status, out.nodes));
      out.rounds = 1;
    } else {
    out.status = "round limit";
    while (out.rounds < options.max_rounds) {
      const double left = options.time_limit_s - seconds_since(t0);
      if (left <= 0 || (progress && progress->cancelled())) {
        out.status = "time limit";
        break;
      }
      if (inc.exhausted()) {
        out.status = "evaluation budget";
        break;
      }
      const double cutoff = inc.feasible ? inc.step_us * (1 - kTol) : kInf;
      const double horizon = std::isfinite(cutoff) ? std::min(serial_us, cutoff) : serial_us;
      Formulation f = build(graph, cluster, costs, options.order, floor.best_us(), cutoff, horizon + max_p + 1);
      for (const auto& cut : cuts) f.lp.row(cut, -kInf, units.num_units() - 1);
      const Solved r = run_cbc(f.lp, left, {}, false);
      ++out.rounds;
      if (!r.failure.empty()) {
        out.status = "solver failed: " + r.failure;
        break;
      }
      if (r.infeasible) {
        // No placement is left whose relaxation is below the cutoff.
        lower = std::max(lower, inc.feasible ? inc.step_us * (1 - kTol) : kInf);
        out.status = "optimal";
        break;
      }
      if (!r.has_solution) {
        if (std::isfinite(r.best_bound)) lower = std::max(lower, std::min(r.best_bound, cutoff));
        out.status = "time limit";
        break;
      }
      // The remaining placements are no better than the relaxation's optimum.
      const double remaining = r.optimal ? r.objective : r.best_bound;
      if (std::isfinite(remaining)) lower = std::max(lower, std::min(remaining, cutoff));
      const Placement p = decode(f, r.solutions.front(), n);
      // With interchangeable devices the solve sees one labelling of each
      // placement; simulate every relabelling (the simulator need not be
      // symmetric) and forbid them all.
      std::vector<int> perm(D);
      for (int d = 0; d < D; ++d) perm[d] = d;
      do {
        Placement q = p;
        for (int op = 0; op < n; ++op) q[op] = perm[p[op]];
        inc.offer(evaluator, graph, cluster, q, "solver");
        std::vector<std::pair<int, double>> cut;
        for (int u = 0; u < units.num_units(); ++u) {
          const int col = f.x[u][q[units.ops_of_unit[u][0]]];
          if (col >= 0) cut.emplace_back(col, 1);
        }
        cuts.push_back(std::move(cut));
      } while (f.symmetric && std::next_permutation(perm.begin(), perm.end()));
      if (out.rounds % 16 == 0) report("round " + std::to_string(out.rounds));
      if (!r.optimal) {
        out.status = "time limit";
        break;
      }
    }
    }
  }
  out.placement = inc.placement;
  out.step_us = inc.step_us;
  out.feasible = inc.feasible;
  out.source = inc.source;
  out.evaluated = inc.evaluated;
  // The bound: never above the best simulated step (a placement reaches it).
  out.bound_us = inc.feasible ? std::min(lower, inc.step_us) : lower;
  if (!std::isfinite(out.bound_us)) out.bound_us = floor.best_us();
  // Optimal up to kTol relative: the search stops at cutoff = best x (1 - kTol).
  out.proven = inc.feasible && out.step_us <= out.bound_us * (1 + 2 * kTol);
  out.seconds = seconds_since(t0);
  report(out.status);
  return out;
}

RelaxationBounds relaxation_bounds(const OpGraph& graph, const Cluster& cluster,
                                   const OpCostMatrix& costs, double time_limit_s,
                                   double floor_us) {
  RelaxationBounds out;
  const Formulation f = build(graph, cluster, costs, false, 0, kInf, 0);
  const Solved lp = run_cbc(f.lp, std::max(time_limit_s, 1.0), {}, true);
  out.lp = {"lp", lp.has_solution ? lp.objective : 0,
            "LP relaxation of the MILP (" + std::to_string(f.lp.num_cols()) + " columns, " +
                std::to_string(f.lp.rows.size()) + " rows)" +
                (lp.lp_unfinished ? "; did not finish in its time limit" : ""),
            lp.has_solution && lp.failure.empty()};
  if (time_limit_s <= 0) {
    out.milp = {"milp", 0, "not run (time limit 0)", false};
    return out;
  }
  Formulation g = build(graph, cluster, costs, false, floor_us, kInf, 0);
  const Solved r = run_cbc(g.lp, time_limit_s, {}, false);
  const bool ok = r.failure.empty() && std::isfinite(r.best_bound);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f s", time_limit_s);
  out.milp = {"milp", ok ? std::max(r.best_bound, 0.0) : 0,
              std::string(r.optimal ? "solved to optimality" : "proven bound after ") +
                  (r.optimal ? "" : buf) + (r.failure.empty() ? "" : "; " + r.failure),
              ok};
  return out;
}

}  // namespace aware::exact
