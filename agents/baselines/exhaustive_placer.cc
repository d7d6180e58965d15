// "exhaustive": every placement of the graph's colocation units, each simulated;
// the best comes back. The yardstick the exact placer is checked against
// (experiments/milp_exact.sh), and a way to show on a toy graph what the
// optimum is. D^U placements: with no evaluation budget it refuses above
// `max_placements`; with one, it stops there and says so in its report (the
// result is then the best of the first placements in counting order, not the
// optimum).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/baselines/placers.h"
#include "agents/baselines/search_loop.h"
#include "agents/common/placer_common.h"
#include "core/errors.h"
#include "core/formats.h"

namespace aware::baselines {

using namespace aware::placing;
namespace {

class ExhaustivePlacer final : public Placer {
 public:
  std::string name() const override { return "exhaustive"; }
  bool needs_evaluator() const override { return true; }
  Placement place(const OpGraph& graph, const Cluster& cluster, const PlaceContext& given) override {
    check_context(given, name());
    require_evaluator(given, name());
    const Units units = colocation_units(graph);
    const int U = units.num_units();
    const int D = cluster.num_devices();
    const double max_placements = option_double(given.options, "max_placements", 1e9, name());
    const std::string report_path = option_string(given.options, "report", "");
    // D^U, as a double first (it may not fit in 64 bits).
    const double total_d = std::pow(static_cast<double>(D), U);
    if (given.budget_evals <= 0 && total_d > max_placements)
      throw ConfigError("exhaustive: " + graph.name() + " has " + std::to_string(U) + " colocation units on " +
                        std::to_string(D) + " devices, " + std::to_string(D) + "^" + std::to_string(U) +
                        " placements, more than max_placements=" + std::to_string(max_placements) +
                        " (give a budget to enumerate only the first ones)");
    const long long total = total_d > 9e18 ? static_cast<long long>(9e18) : static_cast<long long>(total_d);
    PlaceContext context = given;
    context.budget_evals = given.budget_evals > 0 ? std::min(given.budget_evals, total) : total;
    SearchLoop loop(name() + " on " + graph.name(), graph, cluster, context);
    const std::unique_ptr<EvaluatorPool> pool = pool_for(context, name());
    // A mixed-radix counter over the units (unit 0 the fastest digit).
    std::vector<int> digit(U, 0);
    auto placement = [&] {
      Placement p(std::vector<int>(graph.num_ops(), 0));
      for (int u = 0; u < U; ++u)
        for (int op : units.ops_of_unit[u]) p[op] = digit[u];
      return p;
    };
    auto advance = [&] {
      int k = 0;
      while (k < U && ++digit[k] == D) digit[k++] = 0;
    };
    std::vector<Placement> batch;
    const long long batch_size = pool ? 256LL * pool->threads() : 1;
    while (!loop.exhausted()) {
      batch.clear();
      const long long n = std::max<long long>(1, std::min(batch_size, loop.remaining()));
      for (long long i = 0; i < n; ++i) {
        batch.push_back(placement());
        advance();
      }
      if (pool) loop.evaluate_batch(*pool, batch);
      else loop.evaluate(batch.front());
    }
    const bool complete = loop.used() >= total;
    loop.report(true, complete ? "done: every placement simulated" : "stopped before the last placement");
    if (!report_path.empty()) {
      nlohmann::json j{{"graph", graph.name()},
                       {"cluster", cluster.name()},
                       {"units", U},
                       {"devices", D},
                       {"placements", total_d},
                       {"evaluated", loop.used()},
                       {"complete", complete},
                       {"feasible", loop.best().feasible},
                       {"step_us", loop.best().step_us}};
      write_json_file(report_path, j);
    }
    return loop.best_placement();
  }
};

}  // namespace

std::unique_ptr<Placer> make_exhaustive_placer() { return std::make_unique<ExhaustivePlacer>(); }

}  // namespace aware::baselines
