#include "strategies/search.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "core/cluster.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placer.h"
#include "core/progress.h"
#include "strategies/rewrite.h"

namespace aware {

namespace {

// Counts the steps an inner evaluator runs (the search's budget is in evaluations).
class CountingEvaluator final : public Evaluator {
 public:
  explicit CountingEvaluator(Evaluator& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  std::string describe() const override { return inner_.describe(); }
  std::unique_ptr<Evaluator> clone() const override { return inner_.clone(); }
  long long count = 0;

 protected:
  StepResult run_step(const OpGraph& graph, const Cluster& cluster, const Placement& placement,
                      StepObserver* observer) override {
    ++count;
    return run_inner_step(inner_, graph, cluster, placement, observer);
  }

 private:
  Evaluator& inner_;
};

std::vector<int> powers_of_two_up_to(int devices) {
  std::vector<int> out;
  for (int r = 2; r <= devices; r *= 2) out.push_back(r);
  if (devices > 1 && std::find(out.begin(), out.end(), devices) == out.end()) out.push_back(devices);
  return out;
}

// The candidates of each kind, the most parallel first (dp over every device
// before dp over half of them, the deepest pipeline first), then dealt out one of
// each kind in turn: the order candidates are tried in, so that a budget smaller
// than the list tries each kind's likeliest winner before a second of any kind.
std::vector<std::string> ordered_candidates(int devices, const StrategySearchOptions& options,
                                            bool with_place) {
  std::vector<int> counts = powers_of_two_up_to(devices);
  std::reverse(counts.begin(), counts.end());
  std::vector<std::vector<std::string>> kinds(4);
  for (int r : counts) {
    for (const std::string& c : options.collectives) {
      const std::string spec = "dp:" + std::to_string(r) + ",collective=" + c;
      kinds[0].push_back(spec);
      if (options.overlap_off) kinds[0].push_back(spec + ",overlap=off");
    }
  }
  if (options.pipelines) {
    for (int s : counts) kinds[1].push_back("pipeline:" + std::to_string(s));
  }
  for (int r : counts) {
    if (r >= devices || devices / r < 2) continue;
    for (const std::string& m : options.methods) kinds[2].push_back("hybrid:" + std::to_string(r) + "x" + m);
  }
  if (with_place) {
    for (const std::string& m : options.methods) kinds[3].push_back("place:" + m);
  }
  if (options.three_d) {
    kinds.emplace_back();
    for (int tp = 1; tp <= std::min(8, devices); tp *= 2) {
      if (devices % tp != 0) continue;
      for (int pp = 1; pp <= devices / tp; ++pp) {
        if ((devices / tp) % pp != 0) continue;
        const int dp = devices / (tp * pp);
        std::string base = "3d:dp=" + std::to_string(dp) + ",tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) +
                           (pp > 1 ? ",micro=" + std::to_string(4 * pp) + ",schedule=1f1b" : ",micro=1");
        for (const char* zero : {"", ",zero=1"}) {
          if (dp == 1 && *zero) continue;
          for (const char* recompute : {"", ",recompute=selective", ",recompute=full"})
            kinds.back().push_back(base + zero + recompute);
        }
      }
    }
  }
  std::vector<std::string> out;
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (const std::vector<std::string>& kind : kinds) {
      if (i < kind.size()) {
        out.push_back(kind[i]);
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

// The placer a candidate runs (place:M, hybrid:RxM), or "".
std::string candidate_method(const std::string& spec) {
  const StrategySpec parsed = parse_strategy_spec(spec);
  if (parsed.kind == "place") return parsed.argument;
  if (parsed.kind == "hybrid") {
    const std::size_t x = parsed.argument.find_first_of("xX*");
    return x == std::string::npos ? "" : parsed.argument.substr(x + 1);
  }
  return "";
}

// The registered placers that search by simulation (and so can refine a placement).
std::string search_placer_list() {
  std::string out;
  for (const std::string& name : PlacerRegistry::instance().names()) {
    try {
      if (PlacerRegistry::instance().create(name)->needs_evaluator()) out += (out.empty() ? "" : ", ") + name;
    } catch (const Error&) {
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> strategy_candidates(int devices, const StrategySearchOptions& options) {
  return ordered_candidates(devices, options, false);
}

StrategySearchResult search_strategies(const OpGraph& graph, const Cluster& cluster,
                                       Evaluator& evaluator, const StrategySearchOptions& options) {
  if (options.budget_evals < 0) throw ConfigError("strategy search: the budget must be >= 0");
  if (options.methods.empty()) throw ConfigError("strategy search: no methods given");
  if (options.collectives.empty()) {
    throw ConfigError("strategy search: no collectives given, so no data-parallel candidate (give one or "
                      "more of " + strategies_detail::collective_list() + ")");
  }
  std::map<std::string, bool> searches;  // method -> it spends evaluations
  for (const std::string& m : options.methods)
    searches[m] = PlacerRegistry::instance().create(m)->needs_evaluator();  // unknown: ConfigError
  if (!options.refine.empty() && !PlacerRegistry::instance().create(options.refine)->needs_evaluator()) {
    throw ConfigError("strategy search: refine placer '" + options.refine +
                      "' does not search by simulation, so it cannot refine the winner's placement "
                      "(those that can: " + search_placer_list() + ")");
  }
  const auto& known = strategies_detail::collective_names();
  for (const std::string& c : options.collectives) {
    if (std::find(known.begin(), known.end(), c) == known.end()) {
      throw ConfigError("strategy search: collective '" + c + "' is unknown (known: " +
                        strategies_detail::collective_list() + ")");
    }
  }
  const std::vector<std::string> specs = ordered_candidates(cluster.num_devices(), options, true);
  for (const std::string& s : specs) check_strategy_spec(s);  // a bad collective fails now

  CountingEvaluator counted(evaluator);
  StrategySearchResult result;
  const long long budget = options.budget_evals;
  const auto begin = std::chrono::steady_clock::now();
  auto report = [&](const std::string& task, long long done, long long total, const std::string& message) {
    if (options.progress == nullptr) return;
    Progress p;
    p.task = task;
    p.done = done;
    p.total = total;
    p.best_step_us = result.best_step_us;
    p.message = message;
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    p.eta_s = done > 0 ? p.elapsed_s / done * (total - done) : -1;
    options.progress->on_progress(p);
  };
  // Candidates planned: each costs at least one evaluation, so a budget caps them
  // (one that fails before its evaluation costs none, so the count can grow).
  const long long listed = static_cast<long long>(specs.size());
  long long planned = budget > 0 ? std::min(listed, budget) : listed;
  std::size_t i = 0;
  for (; i < specs.size(); ++i) {
    if (options.progress != nullptr && options.progress->cancelled()) break;
    const long long left = budget - counted.count;
    const std::string method = candidate_method(specs[i]);
    const bool spends = !method.empty() && searches.count(method) && searches.at(method);
    // Its evaluation, and for a search placer at least one more of its own.
    if (budget > 0 && left < (spends ? 2 : 1)) {
      if (left < 1) break;
      result.not_tried.push_back(specs[i]);  // a cheaper one after it may still fit
      continue;
    }
    planned = std::max(planned, static_cast<long long>(result.candidates.size()) + 1);
    report(specs[i] + " on " + graph.name(), static_cast<long long>(result.candidates.size()), planned, "");
    StrategyCandidate c;
    c.spec = specs[i];
    StrategyContext context;
    context.evaluator = &counted;
    context.seed = options.seed;
    if (budget > 0 && spends) {
      // Its share of what is left once each candidate after it has its own step,
      // and one for its own step.
      long long cheap_after = 0, searching = 0;
      for (std::size_t j = i; j < specs.size(); ++j) {
        const std::string m = candidate_method(specs[j]);
        (!m.empty() && searches.count(m) && searches.at(m) ? searching : cheap_after)++;
      }
      const long long share = (left - cheap_after - searching) / std::max(1LL, searching);
      context.budget_evals = std::clamp(share, 1LL, left - 1);
    }
    StrategyResult applied;
    try {
      applied = apply_strategy(graph, cluster, specs[i], context);
      c.replicas = applied.replicas;
      c.devices_used = applied.devices_used;
      const StepResult step = counted.evaluate(applied.graph, cluster, applied.placement);
      c.step_time_us = step.step_time_us;
      if (step.feasible) {
        c.status = "ok";
      } else {
        c.reason = step.infeasible_reason;
        c.status = c.reason.find("memory") != std::string::npos ? "oom" : "infeasible";
      }
    } catch (const Error& e) {
      c.status = "error";
      c.reason = e.what();
    }
    if (c.status == "ok" && (result.best < 0 || c.step_time_us < result.best_step_us)) {
      result.best = static_cast<int>(result.candidates.size());
      result.best_step_us = c.step_time_us;
      result.best_strategy = std::move(applied);
    }
    result.candidates.push_back(std::move(c));
  }
  for (; i < specs.size(); ++i) result.not_tried.push_back(specs[i]);

  if (result.best >= 0 && !options.refine.empty()) {
    // The refiner's evaluations and one more for its placement's step: at most
    // the budget left, 200 in all without a budget.
    const long long left = budget > 0 ? budget - counted.count : 200;
    if (left >= 2) {
      report("refining " + result.best_strategy.spec + " by " + options.refine,
             static_cast<long long>(result.candidates.size()), static_cast<long long>(result.candidates.size()),
             "");
      auto placer = PlacerRegistry::instance().create(options.refine);
      PlaceContext context;
      context.evaluator = &counted;
      context.seed = options.seed;
      context.budget_evals = left - 1;
      context.progress = options.progress;
      const Placement start = result.best_strategy.placement;
      context.start = &start;
      const Placement refined = placer->place(result.best_strategy.graph, cluster, context);
      check_placement(result.best_strategy.graph, cluster, refined, "method '" + options.refine + "'");
      const StepResult step = counted.evaluate(result.best_strategy.graph, cluster, refined);
      result.refined_from_us = result.best_step_us;
      if (step.feasible && step.step_time_us < result.best_step_us) {
        result.best_step_us = step.step_time_us;
        result.best_strategy.placement = refined;
        result.best_strategy.notes.push_back("placement refined by '" + options.refine + "'");
      }
    } else {
      result.refine_skipped = "the budget of " + std::to_string(budget) + " evaluations left " +
                              std::to_string(std::max(0LL, left)) + " after the candidates; '" +
                              options.refine + "' needs at least 2";
    }
  }
  const long long tried = static_cast<long long>(result.candidates.size());
  std::string summary;
  if (!result.not_tried.empty()) {
    summary = std::to_string(result.not_tried.size()) + " of " + std::to_string(listed) +
              " candidates not tried: " +
              (options.progress != nullptr && options.progress->cancelled()
                   ? std::string("cancelled")
                   : "the budget of " + std::to_string(budget) + " evaluations ran out");
  }
  report("strategy search done", tried, tried, summary);
  result.evaluations = counted.count;
  return result;
}

}  // namespace aware
