// Running a registered placer the way the placer tests do (tests/agents/):
// a fresh analytic evaluator to score with, a budget, a seed and options, and
// the analytic step of what it returns. Needs register_builtins() to have run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "core/evaluator.h"
#include "core/placer.h"

namespace aware::testing {

// The analytic evaluator's step time of `p`, in microseconds.
inline double analytic_step_us(const OpGraph& g, const Cluster& c, const Placement& p) {
  return EvaluatorRegistry::instance().create("analytic")->evaluate(g, c, p).step_time_us;
}

// A placer's context: scoring with `evaluator` (not owned), within `budget`
// evaluations, from `seed`, with `options`.
inline PlaceContext place_context(Evaluator* evaluator, long long budget, std::uint64_t seed,
                                  Options options) {
  PlaceContext context;
  context.evaluator = evaluator;
  context.seed = seed;
  context.budget_evals = budget;
  context.options = std::move(options);
  return context;
}

// The placement `method` returns for `g` on `c`, scoring with an analytic
// evaluator of its own, within `budget` evaluations. Throws what the registry
// and the placer throw (ConfigError for a bad name or option).
inline Placement place_with(const std::string& method, const OpGraph& g, const Cluster& c,
                            long long budget, std::uint64_t seed = 1, Options options = {}) {
  auto sim = EvaluatorRegistry::instance().create("analytic");
  return PlacerRegistry::instance().create(method)->place(
      g, c, place_context(sim.get(), budget, seed, std::move(options)));
}

// The best analytic step, in microseconds, of the cheap list schedulers
// (m-etf, heft, m-sct): what a search placer starts from and must not lose to.
inline double best_list_schedule_us(const OpGraph& g, const Cluster& c) {
  return std::min({analytic_step_us(g, c, place_with("m-etf", g, c, 0)),
                   analytic_step_us(g, c, place_with("heft", g, c, 0)),
                   analytic_step_us(g, c, place_with("m-sct", g, c, 0))});
}

}  // namespace aware::testing
