// anneal and anneal-graph: a hand-made case whose optimum is known, the old
// search kept exactly under the new one's options, budgets, determinism, bad
// options, and anneal-graph ahead of anneal on generated graphs at equal budgets.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/placer.h"
#include "core/progress.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/agents/placer_runs.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::layered_dag;
using testing::timed_op;
using testing::zero_latency_star;

// Two independent chains of 6 ops (1 ms each) whose tensors take 10 ms on a link:
// one chain per device is optimal (6 ms); a placement that alternates devices
// along both chains pays a transfer at every edge.
OpGraph two_chains() {
  OpGraph g("two-chains");
  for (const char* chain : {"a", "b"}) {
    int prev = -1;
    for (int i = 0; i < 6; ++i) {
      const int id = g.add_op(timed_op(std::string(chain) + std::to_string(i), 1000, 10e6));
      if (prev >= 0) g.add_edge(prev, id);
      prev = id;
    }
  }
  return g;
}

class LastProgress final : public ProgressObserver {
 public:
  void on_progress(const Progress& p) override { last = p; }
  Progress last;
};

Placement run(const std::string& method, const OpGraph& g, const Cluster& c, Evaluator& sim,
              const Placement* start, long long budget, std::uint64_t seed, const Options& options = {},
              long long* evaluations = nullptr) {
  PlaceContext context = testing::place_context(&sim, budget, seed, options);
  context.start = start;
  LastProgress progress;
  context.progress = &progress;
  const Placement p = PlacerRegistry::instance().create(method)->place(g, c, context);
  if (evaluations != nullptr) *evaluations = progress.last.done;
  return p;
}

TEST(AnnealGraph, FindsOneChainPerDeviceFromAnAlternatingStart) {
  register_builtins();
  const OpGraph g = two_chains();
  const Cluster c = zero_latency_star(2);
  AnalyticSimulator sim;
  Placement start(std::vector<int>(12, 0));
  for (int i = 0; i < 12; ++i) start[i] = i % 2;
  ASSERT_GT(sim.evaluate(g, c, start).step_time_us, 50000);  // 11 transfers of 10 ms on the way
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    long long used = 0;
    const Placement best = run("anneal-graph", g, c, sim, &start, 300, seed, {}, &used);
    EXPECT_NEAR(sim.evaluate(g, c, best).step_time_us, 6000, 1) << "seed " << seed;
    EXPECT_EQ(used, 300) << "the budget, exactly";
  }
}

// anneal-graph with the unit moves, no calibration and no restarts is anneal:
// the same draws, the same placement.
TEST(AnnealGraph, WithAnnealsSettingsIsAnneal) {
  register_builtins();
  const Cluster c = zero_latency_star(4);
  AnalyticSimulator sim;
  for (std::uint64_t seed : {1u, 2u}) {
    const OpGraph g = layered_dag(120, seed + 20);
    const Placement old_search = run("anneal", g, c, sim, nullptr, 400, seed);
    const Placement same = run("anneal-graph", g, c, sim, nullptr, 400, seed,
                               {{"moves", "unit"}, {"calibrate", "off"}, {"restart_after", "0"}});
    EXPECT_EQ(same, old_search) << "seed " << seed;
    // And the same seed twice: the same result.
    EXPECT_EQ(run("anneal-graph", g, c, sim, nullptr, 400, seed), run("anneal-graph", g, c, sim, nullptr, 400, seed));
  }
}

TEST(AnnealGraph, BadOptionsAreErrors) {
  register_builtins();
  const OpGraph g = layered_dag(30, 1);
  const Cluster c = zero_latency_star(2);
  AnalyticSimulator sim;
  for (const Options& bad : std::vector<Options>{{{"moves", "teleport"}}, {{"calibrate", "maybe"}}, {{"restart_after", "-2"}}})
    EXPECT_THROW(run("anneal-graph", g, c, sim, nullptr, 50, 1, bad), ConfigError) << bad.begin()->first;
}

// On generated DAGs (4 devices, from round-robin, 600 evaluations, seeds 1-6),
// anneal-graph ends faster than anneal on average, and never slower than its start.
TEST(AnnealGraph, BeatsAnnealOnGeneratedGraphsAtEqualBudgets) {
  register_builtins();
  const Cluster c = zero_latency_star(4, 16e9, 2e8);
  AnalyticSimulator sim;
  double sum_anneal = 0, sum_graph = 0;
  int better = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const OpGraph g = layered_dag(150, seed + 40);
    const Placement start = round_robin_placement(g, c);
    const double start_us = sim.evaluate(g, c, start).step_time_us;
    const double a = sim.evaluate(g, c, run("anneal", g, c, sim, &start, 600, seed)).step_time_us;
    const double b = sim.evaluate(g, c, run("anneal-graph", g, c, sim, &start, 600, seed)).step_time_us;
    EXPECT_LE(b, start_us) << "seed " << seed;
    sum_anneal += a;
    sum_graph += b;
    if (b < a) ++better;
  }
  EXPECT_LT(sum_graph, sum_anneal);
  EXPECT_GE(better, 4) << "anneal-graph ahead on " << better << " of 6";
}

}  // namespace
}  // namespace aware
