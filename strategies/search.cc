#include "strategies/search.h"

#include <algorithm>
#include <chrono>

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

}  // namespace

std::vector<std::string> strategy_candidates(int devices, const StrategySearchOptions& options) {
  std::vector<std::string> out;
  for (int r : powers_of_two_up_to(devices)) {
    for (const std::string& c : options.collectives) {
      const std::string spec = "dp:" + std::to_string(r) + ",collective=" + c;
      out.push_back(spec);
      if (options.overlap_off) out.push_back(spec + ",overlap=off");
    }
  }
  for (int r : powers_of_two_up_to(devices)) {
    if (r >= devices || devices / r < 2) continue;
    for (const std::string& m : options.methods) out.push_back("hybrid:" + std::to_string(r) + "x" + m);
  }
  if (options.pipelines) {
    for (int s : powers_of_two_up_to(devices)) out.push_back("pipeline:" + std::to_string(s));
  }
  return out;
}

StrategySearchResult search_strategies(const OpGraph& graph, const Cluster& cluster,
                                       Evaluator& evaluator, const StrategySearchOptions& options) {
  if (options.budget_evals < 0) throw ConfigError("strategy search: the budget must be >= 0");
  if (options.methods.empty()) throw ConfigError("strategy search: no methods given");
  for (const std::string& m : options.methods) PlacerRegistry::instance().info(m);  // known?
  if (!options.refine.empty()) PlacerRegistry::instance().info(options.refine);
  const auto& known = strategies_detail::collective_names();
  for (const std::string& c : options.collectives) {
    if (std::find(known.begin(), known.end(), c) == known.end()) {
      throw ConfigError("strategy search: collective '" + c + "' is unknown (known: " +
                        strategies_detail::collective_list() + ")");
    }
  }
  std::vector<std::string> specs;
  for (const std::string& m : options.methods) specs.push_back("place:" + m);
  for (const std::string& s : strategy_candidates(cluster.num_devices(), options)) specs.push_back(s);
  for (const std::string& s : specs) parse_strategy_spec(s);  // a bad collective fails now

  CountingEvaluator counted(evaluator);
  StrategySearchResult result;
  const auto begin = std::chrono::steady_clock::now();
  auto report = [&](const std::string& task, long long done, long long total) {
    if (options.progress == nullptr) return;
    Progress p;
    p.task = task;
    p.done = done;
    p.total = total;
    p.best_step_us = result.best_step_us;
    p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    p.eta_s = done > 0 ? p.elapsed_s / done * (total - done) : -1;
    options.progress->on_progress(p);
  };
  const long long total = static_cast<long long>(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (options.progress != nullptr && options.progress->cancelled()) break;
    if (options.budget_evals > 0 && counted.count >= options.budget_evals) break;
    report(specs[i] + " on " + graph.name(), static_cast<long long>(i), total);
    StrategyCandidate c;
    c.spec = specs[i];
    StrategyContext context;
    context.evaluator = &counted;
    context.seed = options.seed;
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

  if (result.best >= 0 && !options.refine.empty()) {
    const long long left =
        options.budget_evals > 0 ? options.budget_evals - counted.count : 200;
    if (left > 0) {
      report("refining " + result.best_strategy.spec + " by " + options.refine, total, total);
      auto placer = PlacerRegistry::instance().create(options.refine);
      PlaceContext context;
      context.evaluator = &counted;
      context.seed = options.seed;
      context.budget_evals = left;
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
    }
  }
  report("strategy search done", total, total);
  result.evaluations = counted.count;
  return result;
}

}  // namespace aware
