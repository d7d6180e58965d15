// The exact placer (agents/exact): equal to brute force through the analytic
// simulator on small graphs, a bound that no simulated step beats, and the
// time-limit and bad-option paths.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <utility>

#include <nlohmann/json.hpp>

#include "agents/exact/milp.h"
#include "builtins/builtins.h"
#include "core/bounds.h"
#include "core/cost_model.h"
#include "core/errors.h"
#include "core/placer.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using exact::MilpOptions;
using exact::MilpResult;
using exact::solve_milp;

// The best feasible simulated step over every placement (D^n of them).
double brute_force_best(const OpGraph& g, const Cluster& c, AnalyticSimulator& sim) {
  const int n = g.num_ops();
  const int D = c.num_devices();
  Placement p(std::vector<int>(n, 0));
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    const StepResult r = sim.evaluate(g, c, p);
    if (r.feasible) best = std::min(best, r.step_time_us);
    int k = 0;
    while (k < n && ++p[k] == D) p[k++] = 0;
    if (k == n) break;
  }
  return best;
}

MilpResult run_exact(const OpGraph& g, const Cluster& c, AnalyticSimulator& sim) {
  MilpOptions o;
  o.mode = "exact";
  o.time_limit_s = 120;
  return solve_milp(g, c, sim, OpCostMatrix(g, c), o);
}

void expect_equals_brute_force(const OpGraph& g, const Cluster& c) {
  SCOPED_TRACE(g.name() + " on " + std::to_string(c.num_devices()) + " devices");
  AnalyticSimulator sim;
  const double best = brute_force_best(g, c, sim);
  const MilpResult r = run_exact(g, c, sim);
  EXPECT_EQ(r.status, "optimal");
  EXPECT_TRUE(r.proven);
  EXPECT_TRUE(r.feasible);
  EXPECT_NEAR(r.step_us, best, 1e-9 * best) << r.rounds << " rounds";
  EXPECT_LE(r.bound_us, best * (1 + 1e-9));
  EXPECT_NEAR(sim.evaluate(g, c, r.placement).step_time_us, r.step_us, 1e-9 * best);
}

// A solve that returned its start: the solver-free bound, not proven.
void expect_the_start_unproven(const MilpResult& r, const OpGraph& g, const Cluster& c) {
  EXPECT_EQ(r.source, "start");
  EXPECT_FALSE(r.proven);
  EXPECT_LE(r.bound_us, r.step_us);
  EXPECT_NEAR(r.bound_us, certified_bound(g, c).best_us(), 1e-9);
}

// The placer through the registry, simulating with `sim`.
PlaceContext registry_context(AnalyticSimulator& sim, Options options) {
  register_builtins();
  PlaceContext context;
  context.evaluator = &sim;
  context.options = std::move(options);
  return context;
}

TEST(Milp, ExactOnTheHandGraphs) {
  for (int devices : {2, 3}) {
    const Cluster c = testing::star_cluster(devices, 1e9, 1, 16e9);
    expect_equals_brute_force(testing::chain_graph(), c);
    expect_equals_brute_force(testing::diamond_graph(), c);
    expect_equals_brute_force(testing::fork_join_graph(), c);
  }
}

// Generated graphs up to 16 ops on two devices and up to 10 on three (brute
// force is 3^10 = 59,049 simulations there), fast and slow links. dag-16-2 on
// fast links is not among them: see the next test.
TEST(Milp, ExactEqualsBruteForceOnGeneratedGraphs) {
  for (int n : {6, 9, 12, 16}) {
    for (std::uint64_t seed : {1, 2}) {
      if (n == 16 && seed == 2) continue;
      const double link = seed == 1 ? 1e9 : 1e10;
      expect_equals_brute_force(testing::layered_dag(n, seed, 3 + static_cast<int>(seed)),
                                testing::star_cluster(2, link, 1, 16e9));
    }
  }
  for (int n : {6, 8, 10}) {
    expect_equals_brute_force(testing::layered_dag(n, 11, 3), testing::star_cluster(3, 1e9, 1, 16e9));
  }
}

// The rounds' known miss: on dag-16-2 (width 5, 10 GB/s links) 216 rounds in
// 120 s found the optimum (885.4 us) but left the bound at 867.1 (measured when
// the rounds were the only search). Within 10 s here they are labelled unproven
// with a bound between the solver-free one and the optimum; branch and bound
// proves the optimum in the same limit.
TEST(Milp, RoundsLeaveSixteenOpsUnprovenWhereBranchAndBoundProves) {
  const OpGraph g = testing::layered_dag(16, 2, 5);
  const Cluster c = testing::star_cluster(2, 1e10, 1, 16e9);
  AnalyticSimulator sim;
  const double best = brute_force_best(g, c, sim);
  MilpOptions o;
  o.mode = "exact";
  o.time_limit_s = 10;
  o.search = "rounds";
  const MilpResult r = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
  EXPECT_GE(r.step_us, best * (1 - 1e-9));
  EXPECT_EQ(r.status, "time limit");
  EXPECT_FALSE(r.proven);
  EXPECT_LT(r.bound_us, best);
  EXPECT_GT(r.bound_us, certified_bound(g, c).best_us());
  o.search = "branch";
  const MilpResult b = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
  EXPECT_EQ(b.status, "optimal");
  EXPECT_TRUE(b.proven);
  EXPECT_NEAR(b.step_us, best, 1e-9 * best);
  std::printf("dag-16-2: rounds %d in %.1f s, bound %.1f; branch and bound %d nodes in %.2f s, %.1f\n", r.rounds,
              r.seconds, r.bound_us, b.nodes, b.seconds, b.step_us);
}

// Branch and bound proves what the rounds could not: dag-16-2 on 10 GB/s links
// (above), and 12- and 16-op graphs on three devices, each equal to brute force.
TEST(Milp, BranchAndBoundProvesTheSixteenOpGraphs) {
  expect_equals_brute_force(testing::layered_dag(16, 2, 5), testing::star_cluster(2, 1e10, 1, 16e9));
  expect_equals_brute_force(testing::layered_dag(12, 12, 4), testing::star_cluster(3, 1e9, 1, 16e9));
}

// The same graph with its ops numbered backwards (so its units are not in
// topological order): branch and bound places units in topological order while
// the formulation's symmetry rows order them by number; both must still find
// the brute-force optimum on interchangeable devices.
TEST(Milp, BranchAndBoundDoesNotDependOnTheOpNumbering) {
  for (std::uint64_t seed : {3, 4}) {
    const OpGraph g = testing::layered_dag(11, seed, 4);
    OpGraph reversed(g.name() + "-reversed");
    const int n = g.num_ops();
    for (int i = n - 1; i >= 0; --i) reversed.add_op(g.op(i));
    for (const Edge& e : g.edges()) reversed.add_edge(n - 1 - e.src, n - 1 - e.dst, e.src_output, e.bytes);
    for (int devices : {2, 3}) expect_equals_brute_force(reversed, testing::star_cluster(devices, 1e10, 1, 16e9));
  }
}

// Property: stopped by its time limit on graphs far too large to finish (80
// ops: its per-device bound takes head quantiles beyond 64 ops), branch and
// bound's bound (the least of the nodes it left) is at most every random
// placement's simulated step, and labelled unproven.
TEST(Milp, BranchAndBoundStoppedEarlyKeepsAValidBound) {
  AnalyticSimulator sim;
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 3; ++trial) {
    const int n = 80;
    const int D = 2 + trial % 2;
    const OpGraph g = testing::layered_dag(n, 70 + trial, 4);
    const Cluster c = testing::star_cluster(D, trial == 2 ? 1e10 : 1e9, 1, 16e9);
    MilpOptions o;
    o.mode = "exact";
    o.time_limit_s = 1;
    const MilpResult r = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
    EXPECT_EQ(r.status, "time limit");
    EXPECT_GT(r.nodes, 1);
    EXPECT_GE(r.bound_us, certified_bound(g, c).best_us() * (1 - 1e-12));
    EXPECT_LE(r.bound_us, r.step_us * (1 + 1e-12));
    for (int k = 0; k < 200; ++k) {
      Placement p{std::vector<int>(n)};
      for (int op = 0; op < n; ++op) p[op] = static_cast<int>(rng() % D);
      ASSERT_LE(r.bound_us, sim.evaluate(g, c, p).step_time_us * (1 + 1e-12)) << "trial " << trial;
    }
  }
}

// Memory forces two parameter-heavy ops apart: the exact placer finds the split
// and proves it best.
TEST(Milp, MemoryForcesASplit) {
  OpGraph g("split");
  g.add_op(testing::timed_op("a", 100, 1e6, 0.6e9));
  g.add_op(testing::timed_op("b", 100, 1000, 0.6e9));
  g.add_op(testing::timed_op("c", 50, 1000));
  g.add_edge(0, 1);
  g.add_edge(1, 2);
  const Cluster c = testing::star_cluster(2, 1e9, 1, 1e9);
  AnalyticSimulator sim;
  const MilpResult r = run_exact(g, c, sim);
  ASSERT_TRUE(r.feasible);
  EXPECT_TRUE(r.proven);
  EXPECT_NE(r.placement[0], r.placement[1]);
  EXPECT_NEAR(r.step_us, brute_force_best(g, c, sim), 1e-9);
}

// Property: the relaxed solve's proven bound is never above any placement's
// simulated step, and never below the solver-free bound it starts from.
TEST(Milp, RelaxedBoundNeverExceedsASimulatedStep) {
  AnalyticSimulator sim;
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 6; ++trial) {
    const int n = 20 + 8 * trial;
    const int D = 2 + trial % 3;
    const OpGraph g = testing::layered_dag(n, 40 + trial, 4);
    const Cluster c = testing::star_cluster(D, 1e9, 1, 16e9);
    MilpOptions o;
    o.mode = "relaxed";
    o.time_limit_s = 2;
    const MilpResult r = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
    EXPECT_GE(r.bound_us, certified_bound(g, c).best_us() * (1 - 1e-12));
    EXPECT_LE(r.bound_us, r.step_us * (1 + 1e-12));
    for (int k = 0; k < 100; ++k) {
      Placement p{std::vector<int>(n)};
      for (int op = 0; op < n; ++op) p[op] = static_cast<int>(rng() % D);
      ASSERT_LE(r.bound_us, sim.evaluate(g, c, p).step_time_us * (1 + 1e-12)) << "trial " << trial;
    }
  }
}

// The polish: a window as large as the graph is the whole search space with
// nothing fixed, so the windows alone (mode "windows", from the one-device
// starts) find the brute-force optimum. In relaxed mode the polish never
// leaves the best worse than the solve alone.
TEST(Milp, PolishWithAWindowOfEveryUnitFindsTheOptimum) {
  const OpGraph g = testing::layered_dag(10, 2, 5);
  const Cluster c = testing::star_cluster(2, 1e10, 1, 16e9);
  AnalyticSimulator sim;
  const double best = brute_force_best(g, c, sim);
  MilpOptions o;
  o.mode = "windows";
  o.time_limit_s = 4;
  o.window = 10;
  const MilpResult w = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
  EXPECT_NEAR(w.step_us, best, 1e-9 * best);
  EXPECT_GE(w.windows, 1);
  EXPECT_EQ(w.source, "window");
  EXPECT_NEAR(sim.evaluate(g, c, w.placement).step_time_us, w.step_us, 1e-9 * best);
  EXPECT_LE(w.bound_us, best * (1 + 1e-9));
  o.mode = "relaxed";
  const MilpResult r = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
  o.polish = false;
  const MilpResult solve_only = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
  EXPECT_EQ(solve_only.windows, 0);
  EXPECT_LE(r.step_us, solve_only.step_us * (1 + 1e-12));
}

// The time limit holds while the LP relaxation is being solved: CBC 2.10's own
// root solve did not watch it (the whole Inception-V3 model ran 5 min 49 s under
// a 60 s limit). Here the relaxation of 400 ops on four devices needs far more
// than the 20 ms given; the solve stops, says so, and returns the start.
TEST(Milp, TheTimeLimitStopsTheRelaxation) {
  const OpGraph g = testing::layered_dag(400, 11, 8);
  const Cluster c = testing::star_cluster(4, 1e9, 1, 16e9);
  AnalyticSimulator sim;
  MilpOptions o;
  o.mode = "relaxed";
  o.polish = false;
  o.time_limit_s = 0.02;
  const MilpResult r = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
  EXPECT_EQ(r.status, "time limit (the LP relaxation did not finish)");
  EXPECT_LT(r.seconds, 5.0);
  expect_the_start_unproven(r, g, c);
}

// coarse=fused: the fused graph's solve first, then windows over every op from
// its placement; the result is never worse than the fused stage's and the report
// says which stage it came from.
TEST(Milp, CoarseStageThenWindowsOverEveryOp) {
  const OpGraph g = testing::layered_dag(60, 21, 4);
  const Cluster c = testing::star_cluster(3, 1e9, 1, 16e9);
  AnalyticSimulator sim;
  const std::string report = std::string(::testing::TempDir()) + "/milp-coarse.json";
  PlaceContext context = registry_context(
      sim, {{"report", report}, {"time_limit", "4"}, {"coarse", "fused"}, {"coarse_share", "0.25"}, {"mode", "relaxed"}});
  const Placement p = PlacerRegistry::instance().create("milp")->place(g, c, context);
  std::ifstream in(report);
  ASSERT_TRUE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("mode"), "coarse+windows");
  const double step = sim.evaluate(g, c, p).step_time_us;
  EXPECT_NEAR(j.at("step_us").get<double>(), step, 1e-9 * step);
  EXPECT_LE(step, j.at("coarse_step_us").get<double>() * (1 + 1e-12));
  EXPECT_GE(j.at("windows").get<int>(), 1);
  EXPECT_LE(j.at("bound_us").get<double>(), step);
  EXPECT_GT(j.at("seconds").get<double>(), 3.5);  // the windows run to the time limit
  EXPECT_LT(j.at("seconds").get<double>(), 10.0);
  // coarse=auto leaves a graph of 60 units to the relaxed solve of the whole graph.
  context.options["coarse"] = "auto";
  context.options["time_limit"] = "0.5";
  PlacerRegistry::instance().create("milp")->place(g, c, context);
  std::ifstream again(report);
  EXPECT_EQ(nlohmann::json::parse(again).at("mode"), "relaxed");
  context.options = {{"coarse", "coarsest"}};
  EXPECT_THROW(PlacerRegistry::instance().create("milp")->place(g, c, context), ConfigError);
}

// A time limit of zero: the start comes back, labelled not proven.
TEST(Milp, TimeLimitZeroReturnsTheStartUnproven) {
  const OpGraph g = testing::layered_dag(10, 5, 3);
  const Cluster c = testing::star_cluster(2, 1e9, 1, 16e9);
  AnalyticSimulator sim;
  MilpOptions o;
  o.time_limit_s = 0;
  const Placement start(std::vector<int>(10, 1));
  o.start = &start;
  const MilpResult r = solve_milp(g, c, sim, OpCostMatrix(g, c), o);
  EXPECT_EQ(r.status, "time limit");
  EXPECT_EQ(r.rounds, 0);
  expect_the_start_unproven(r, g, c);
}

// Through the registry: the report file carries the bound and the proof; bad
// options are one ConfigError each.
TEST(Milp, PlacerWritesItsReportAndRefusesBadOptions) {
  const OpGraph g = testing::layered_dag(8, 9, 3);
  const Cluster c = testing::star_cluster(2, 1e9, 1, 16e9);
  AnalyticSimulator sim;
  const std::string report = std::string(::testing::TempDir()) + "/milp-report.json";
  PlaceContext context = registry_context(sim, {{"report", report}, {"time_limit", "30"}});
  const Placement p = PlacerRegistry::instance().create("milp")->place(g, c, context);
  std::ifstream in(report);
  ASSERT_TRUE(in.good());
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("mode"), "exact");
  EXPECT_TRUE(j.at("proven").get<bool>());
  EXPECT_NEAR(j.at("step_us").get<double>(), sim.evaluate(g, c, p).step_time_us, 1e-9);
  EXPECT_NEAR(j.at("gap").get<double>(), 1.0, 1e-5);

  for (const Options& bad : {Options{{"mode", "bogus"}}, Options{{"time_limit", "-1"}},
                             Options{{"start", "somewhere"}}, Options{{"depth", "3"}}}) {
    context.options = bad;
    EXPECT_THROW(PlacerRegistry::instance().create("milp")->place(g, c, context), ConfigError)
        << bad.begin()->first;
  }
}

}  // namespace
}  // namespace aware
