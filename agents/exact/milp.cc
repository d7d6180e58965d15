#include "agents/exact/milp.h"

#include "agents/exact/formulation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
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
namespace {

using namespace detail;

// Relative tolerance of "equal" steps, and of the cutoff below the best.
constexpr double kTol = 1e-6;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
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
  bool offer(Evaluator& ev, const OpGraph& g, const Cluster& c, const Placement& p,
             const std::string& from) {
    if (exhausted()) return false;
    const StepResult r = ev.evaluate(g, c, p);
    ++evaluated;
    const bool better = placement.size() == 0 || (r.feasible && !feasible) ||
                        (r.feasible == feasible && r.step_time_us < step_us);
    if (better) {
      placement = p;
      step_us = r.step_time_us;
      feasible = r.feasible;
      source = from;
    }
    return better;
  }
};

}  // namespace

MilpResult solve_milp(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator,
                      const OpCostMatrix& costs, const MilpOptions& options,
                      ProgressObserver* progress) {
  if (options.mode != "auto" && options.mode != "exact" && options.mode != "relaxed")
    throw ConfigError("milp: mode must be auto, exact or relaxed, not '" + options.mode + "'");
  if (!(options.time_limit_s >= 0)) throw ConfigError("milp: time_limit must be >= 0");
  const auto t0 = Clock::now();
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  const placing::Units units = placing::colocation_units(graph);
  const bool exact =
      options.mode == "exact" || (options.mode == "auto" && units.num_units() <= options.exact_max_units);
  const CertifiedBound floor = certified_bound(graph, cluster, costs);

  MilpResult out;
  out.mode = exact ? "exact" : "relaxed";
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
  } else if (!exact) {
    const Formulation f = build(graph, cluster, costs, false, floor.best_us(), kInf, 0);
    const Solved r = run_cbc(f.lp, options.time_limit_s, start_values(f, inc.placement), false);
    out.rounds = 1;
    for (const auto& sol : r.solutions) inc.offer(evaluator, graph, cluster, decode(f, sol, n), "solver");
    if (!r.failure.empty()) out.status = "solver failed: " + r.failure;
    else if (r.infeasible) out.status = "infeasible";
    else out.status = r.optimal ? "optimal" : "time limit";
    if (std::isfinite(r.best_bound)) lower = std::max(lower, r.best_bound);
    if (r.infeasible) lower = kInf;
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
  out.placement = inc.placement;
  out.step_us = inc.step_us;
  out.feasible = inc.feasible;
  out.source = inc.source;
  out.evaluated = inc.evaluated;
  // The bound: never above the best simulated step (a placement reaches it).
  out.bound_us = inc.feasible ? std::min(lower, inc.step_us) : lower;
  if (!std::isfinite(out.bound_us)) out.bound_us = floor.best_us();
  out.proven = inc.feasible && out.step_us <= out.bound_us * (1 + kTol) + 1e-9;
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
                std::to_string(f.lp.rows.size()) + " rows)",
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
