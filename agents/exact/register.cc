// The "milp" placer: solve_milp() behind the Placer interface.
#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>

#include "agents/baselines/placers.h"
#include "agents/common/placer_common.h"
#include "agents/exact/milp.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/evaluator.h"
#include "core/formats.h"
#include "core/placer.h"

namespace aware::exact {
namespace {

// coarse=auto solves on the fused graph above this many colocation units (the
// fused graphs of Table 1's models have about 200 groups).
constexpr int kCoarseAboveUnits = 200;

class MilpPlacer final : public Placer {
 public:
  std::string name() const override { return "milp"; }
  bool needs_evaluator() const override { return true; }

  Placement place(const OpGraph& graph, const Cluster& cluster, const PlaceContext& context) override {
    placing::check_graph_can_fit(graph, cluster);
    if (context.evaluator == nullptr) throw ConfigError("milp needs an evaluator to simulate its candidates");
    MilpOptions o;
    o.time_limit_s = option_double(context.options, "time_limit", 60, name());
    if (context.budget_seconds > 0) o.time_limit_s = std::min(o.time_limit_s, context.budget_seconds);
    const double total_limit_s = o.time_limit_s;
    const auto t0 = std::chrono::steady_clock::now();
    o.mode = option_string(context.options, "mode", "auto");
    o.exact_max_units = static_cast<int>(option_int(context.options, "exact_max_units", 20, name()));
    o.max_rounds = static_cast<int>(option_int(context.options, "max_rounds", 20000, name()));
    o.order = option_bool(context.options, "order", false, name());
    o.search = option_string(context.options, "search", "branch");
    o.polish = option_bool(context.options, "polish", true, name());
    o.polish_share = option_double(context.options, "polish_share", 0.5, name());
    o.window = static_cast<int>(option_int(context.options, "window", 0, name()));
    o.seed = context.seed;
    const std::string coarse = option_string(context.options, "coarse", "auto");
    if (coarse != "auto" && coarse != "fused" && coarse != "none")
      throw ConfigError("milp: coarse must be auto, fused or none, not '" + coarse + "'");
    const double coarse_share = option_double(context.options, "coarse_share", 0.4, name());
    const std::string start_from = option_string(context.options, "start", "cheap");
    if (start_from != "cheap" && start_from != "none")
      throw ConfigError("milp: start must be cheap or none, not '" + start_from + "'");
    // The start: the caller's, else the best of the cheap one-pass placers.
    // Feasible first, then the shorter step.
    auto beats = [](const StepResult& a, const StepResult& b) {
      return (a.feasible && !b.feasible) || (a.feasible == b.feasible && a.step_time_us < b.step_time_us);
    };
    Placement start;
    StepResult start_result;  // the start's simulation, where it was made (valid: start_simulated)
    bool start_simulated = false;
    long long start_evals = 0;
    if (context.start != nullptr) {
      start = *context.start;
    } else if (start_from == "cheap") {
      for (auto& placer : baselines::cheap_placers()) {
        if (context.budget_evals > 0 && start_evals >= context.budget_evals) break;
        PlaceContext sub;  // one-pass placers: no evaluator, so no hidden evaluations
        sub.seed = context.seed;
        Placement p;
        try {
          p = placer->place(graph, cluster, sub);
        } catch (const ConfigError&) {
          continue;  // a placer that cannot handle this graph
        }
        const StepResult r = context.evaluator->evaluate(graph, cluster, p);
        ++start_evals;
        if (!start_simulated || beats(r, start_result)) {
          start_result = r;
          start_simulated = true;
          start = p;
        }
      }
    }
    // Large graphs: the relaxed solve and a first polish on the fused graph
    // (fused-milp, coarse_share of the time), expanded; then windows on every op
    // from the better of that and the start. The relaxation of the whole graph
    // is too large to solve in minutes (Inception-V3 / k40x4: its root LP alone
    // ran 5 min 49 s), and a placement of the fused groups cannot move single ops.
    const int units = placing::colocation_units(graph).num_units();
    const bool relaxed_mode = o.mode == "relaxed" || (o.mode == "auto" && units > o.exact_max_units);
    const bool use_coarse = relaxed_mode && o.time_limit_s > 0 && context.budget_evals == 0 &&
                            PlacerRegistry::instance().has("fused-milp") &&
                            (coarse == "fused" || (coarse == "auto" && units > kCoarseAboveUnits));
    std::string coarse_note;
    double coarse_step_us = 0;
    if (use_coarse) {
      PlaceContext sub = context;
      sub.options.clear();
      for (const auto& [key, value] : context.options)
        if (key != "report" && key != "coarse" && key != "coarse_share" && key != "start") sub.options[key] = value;
      sub.options["coarse"] = "none";
      sub.options["mode"] = "relaxed";
      sub.options["time_limit"] = std::to_string(o.time_limit_s * coarse_share);
      sub.start = nullptr;
      sub.budget_seconds = 0;
      const Placement fused = PlacerRegistry::instance().create("fused-milp")->place(graph, cluster, sub);
      const StepResult fr = context.evaluator->evaluate(graph, cluster, fused);
      if (start.size() > 0 && !start_simulated) start_result = context.evaluator->evaluate(graph, cluster, start);
      const bool better = start.size() == 0 || beats(fr, start_result);
      coarse_step_us = fr.step_time_us;
      coarse_note = better ? "fused-milp's placement, the windows' start" : "the start, better than fused-milp's";
      if (better) start = fused;
      o.mode = "windows";
      o.time_limit_s = std::max(0.0, o.time_limit_s - std::chrono::duration<double>(
                                                          std::chrono::steady_clock::now() - t0).count());
    }
    if (start.size() > 0) o.start = &start;
    if (context.budget_evals > 0) {
      if (start_evals >= context.budget_evals && start.size() > 0) return start;  // budget spent on the starts
      o.max_evals = std::max(1LL, context.budget_evals - start_evals);
    }
    const OpCostMatrix costs(graph, cluster);
    const MilpResult r = solve_milp(graph, cluster, *context.evaluator, costs, o, context.progress);
    const std::string report = option_string(context.options, "report", "");
    if (!report.empty()) {
      nlohmann::json j{{"graph", graph.name()},     {"cluster", cluster.name()},
                       {"mode", r.mode},            {"status", r.status},
                       {"step_us", r.step_us},      {"feasible", r.feasible},
                       {"bound_us", r.bound_us},    {"proven", r.proven},
                       {"gap", r.bound_us > 0 ? r.step_us / r.bound_us : 0.0},
                       {"source", r.source},        {"rounds", r.rounds}, {"nodes", r.nodes}, {"windows", r.windows},
                       {"evaluated", r.evaluated},
                       {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()},
                       {"time_limit_s", total_limit_s}};
      if (use_coarse) {
        j["coarse"] = coarse_note;
        j["coarse_step_us"] = coarse_step_us;
        j["coarse_share"] = coarse_share;
        j["mode"] = "coarse+windows";
      }
      write_json_file(report, j);
    }
    return r.placement;
  }
};

}  // namespace

void register_exact_placers() {
  using T = OptionSpec::Type;
  PlacerRegistry::instance().add(
      "milp",
      "MILP through CBC: a relaxation of the contention step (exact rounds on small graphs); "
      "returns the best simulated solution and proves a lower bound",
      {{"time_limit", T::kDouble, "60", "seconds for the whole solve (0: the start, not proven)", 0, 1e7},
       {"mode", T::kString, "auto",
        "exact (branch and bound until optimal), relaxed (one solve, then the polish), auto, or windows (the polish "
        "alone, from the start)"},
       {"exact_max_units", T::kInt, "20", "auto: exact up to this many colocation units", 1, 1000},
       {"max_rounds", T::kInt, "20000", "exact: solves before giving up on a proof", 1, 100000000},
       {"order", T::kBool, "0", "exact: order variables for ops sharing a device (slower rounds)"},
       {"search", T::kString, "branch", "exact: branch (branch and bound, each leaf simulated) or rounds (re-solve, forbid)"},
       {"polish", T::kBool, "1", "relaxed: after the solve, re-place windows of units exactly around the best"},
       {"polish_share", T::kDouble, "0.5", "relaxed: the share of the time limit the polish gets", 0, 1},
       {"window", T::kInt, "0", "relaxed: units per polish window (0: the most with at most 1,024 placements)", 0, 64},
       {"start", T::kString, "cheap", "cheap (the best one-pass placer) or none"},
       {"coarse", T::kString, "auto",
        "relaxed: fused (solve on the fused graph for coarse_share of the time, then windows on every op), none, "
        "or auto (fused above 200 units, with a time limit and no evaluation budget)"},
       {"coarse_share", T::kDouble, "0.4", "coarse=fused: the share of the time limit the fused graph gets", 0, 1},
       {"report", T::kOutputPath, "", "write the bound, the status and the gap here (JSON)"}},
      [] { return std::unique_ptr<Placer>(new MilpPlacer()); });
}

}  // namespace aware::exact
