#include "agents/rl/guide.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/placer.h"

namespace aware::rl {

Guide::Guide(const AgentSettings& settings, std::uint64_t seed) : settings_(settings), seed_(seed) {
  if (!(settings_.guide_share > 0 && settings_.guide_share < 1))
    throw ConfigError("guide_share must lie in (0, 1) (the refiner's share of the wall-clock or the evaluations), got " +
                      setting_number(settings_.guide_share));
  if (settings_.guide_evals < 3)
    throw ConfigError("guide_evals must be at least 3 (evaluations per refinement), got " +
                      std::to_string(settings_.guide_evals));
  if (settings_.guide_by != "evaluations" && settings_.guide_by != "time")
    throw ConfigError("guide_by must be evaluations or time, got '" + settings_.guide_by + "'");
  if (settings_.guide_from != "proposal" && settings_.guide_from != "best")
    throw ConfigError("guide_from must be proposal or best, got '" + settings_.guide_from + "'");
  if (!PlacerRegistry::instance().has(settings_.guide_refiner))
    throw ConfigError("guide refiner '" + settings_.guide_refiner + "' is not a registered placer");
  if (!PlacerRegistry::instance().create(settings_.guide_refiner)->needs_evaluator())
    throw ConfigError("guide refiner '" + settings_.guide_refiner +
                      "' does not search with the evaluator (use anneal-graph, anneal, ...)");
}

void Guide::propose(const Placement& placement, double penalised_us) {
  if (placement.size() == 0 || !(penalised_us < proposal_us_)) return;
  proposal_ = placement;
  proposal_us_ = penalised_us;
}

bool Guide::under_share(const PlacementEnv& env) const {
  // The refiner's part stays at or below share / (1 - share) of the policy's.
  const double ratio = settings_.guide_share / (1.0 - settings_.guide_share);
  if (settings_.guide_by == "time") return seconds_ < ratio * std::max(0.0, env.elapsed_s() - seconds_);
  return static_cast<double>(evaluations_) < ratio * static_cast<double>(env.evaluations() - evaluations_);
}

int Guide::refine(PlacementEnv& env) {
  int rounds = 0;
  while (maybe_refine(env)) ++rounds;
  return rounds;
}

bool Guide::maybe_refine(PlacementEnv& env) {
  if (!under_share(env)) return false;
  // The first refinement starts where the refiner itself would (anneal-graph:
  // the best of the one-pass placers), as the search it is compared with does;
  // the later ones from the policy's proposals (or the best so far).
  const bool own_start = rounds_ == 0;
  const bool from_best = !own_start && settings_.guide_from == "best" && env.best_placement().size() > 0;
  if (!own_start && !from_best && proposal_.size() == 0) return false;
  if (env.exhausted()) return false;
  long long budget = settings_.guide_evals;
  if (env.budget_evals() > 0) budget = std::min(budget, env.budget_evals() - env.evaluations());
  if (budget < 3) return false;  // the start's re-evaluation, one move, the find's scoring
  const auto t0 = std::chrono::steady_clock::now();
  Refinement r;
  if (!own_start) {
    r.start = from_best ? env.best_placement() : proposal_;
    r.start_us = from_best ? env.best_penalised_us() : proposal_us_;
  }
  PlaceContext context;
  context.evaluator = &env.evaluator();
  context.seed = seed_ + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(rounds_ + 1);
  context.budget_evals = budget - 1;  // one kept for env.evaluate(found) below
  if (env.budget_seconds() > 0) {
    context.budget_seconds = env.budget_seconds() - env.elapsed_s();
    if (!(context.budget_seconds > 0)) return false;
  }
  context.start = own_start ? nullptr : &r.start;
  context.options = settings_.guide_refiner_options;
  DoneCounter counter;
  context.progress = &counter;
  r.found = PlacerRegistry::instance().create(settings_.guide_refiner)->place(env.graph(), env.cluster(), context);
  env.count_external(counter.done);
  r.found_us = env.evaluate(r.found);
  r.evaluations = counter.done + 1;
  evaluations_ += r.evaluations;
  ++rounds_;
  if (!own_start && r.found_us < r.start_us) ++improvements_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  last_ = std::move(r);
  proposal_ = Placement();
  proposal_us_ = std::numeric_limits<double>::infinity();
  return true;
}

std::string Guide::state() const {
  nlohmann::json j = {{"rounds", rounds_}, {"evaluations", evaluations_}, {"improvements", improvements_},
                      {"seconds", seconds_}};
  if (proposal_.size() > 0) j["proposal"] = {{"placement", proposal_.device_of_op}, {"us", proposal_us_}};
  return j.dump();
}

void Guide::restore(const std::string& state) {
  const nlohmann::json j = nlohmann::json::parse(state);
  rounds_ = j.at("rounds").get<long long>();
  evaluations_ = j.at("evaluations").get<long long>();
  improvements_ = j.at("improvements").get<long long>();
  seconds_ = j.value("seconds", 0.0);
  if (j.contains("proposal")) {
    proposal_ = Placement(j.at("proposal").at("placement").get<std::vector<int>>());
    proposal_us_ = j.at("proposal").at("us").get<double>();
  }
}

}  // namespace aware::rl
