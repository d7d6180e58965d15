// Conformance of every registered baseline placer on generated graphs: complete,
// feasible when the graph fits, deterministic per seed, errors on impossible
// graphs and bad options; anneal never ends worse than its start.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agents/baselines/register.h"
#include "agents/common/placer_common.h"
#include "builtins/builtins.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"
#include "core/placer.h"
#include "core/progress.h"
#include "core/random_dag.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/expect_error.h"
#include "tests/test_graphs.h"

namespace aware {
namespace {

using testing::layered_dag;
using testing::zero_latency_star;
using testing::with_memory;

std::vector<std::string> all_methods() {
  register_builtins();
  return baseline_placer_names();
}

PlaceContext context_for(Evaluator* evaluator, std::uint64_t seed = 7) {
  PlaceContext context;
  context.evaluator = evaluator;
  context.seed = seed;
  context.budget_evals = 40;  // keeps the search methods quick
  return context;
}

TEST(BaselinesConformance, RegistersEveryMethod) {
  for (const std::string& m : all_methods()) EXPECT_TRUE(PlacerRegistry::instance().has(m)) << m;
  register_builtins();
  EXPECT_EQ(PlacerRegistry::instance().create("heft")->name(), "heft");
}

// Ample memory, and tight memory (no single device holds the graph).
class BaselinesOnDag : public ::testing::TestWithParam<bool> {};

TEST_P(BaselinesOnDag, CompleteFeasibleAndAboveBound) {
  const bool tight = GetParam();
  for (std::uint64_t seed : {1u, 2u}) {
    const OpGraph g = layered_dag(150, seed);
    double total = 0;
    for (const Op& op : g.ops()) total += placing::op_memory_bytes(op);
    const Cluster c = zero_latency_star(4, tight ? total / 2.5 : 64e9);
    AnalyticSimulator sim;
    const double bound = lower_bound(g, c).bound_us();
    for (const std::string& m : all_methods()) {
      SCOPED_TRACE(m + " seed " + std::to_string(seed) + (tight ? " tight" : " ample"));
      const Placement p = PlacerRegistry::instance().create(m)->place(g, c, context_for(&sim));
      ASSERT_NO_THROW(check_placement(g, c, p, m));
      const StepResult r = sim.evaluate(g, c, p);
      EXPECT_TRUE(r.feasible) << r.infeasible_reason;
      EXPECT_GE(r.step_time_us, bound * (1 - 1e-9));
      if (tight && m == "single") {
        std::set<int> used(p.device_of_op.begin(), p.device_of_op.end());
        EXPECT_GT(used.size(), 1u);
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Memory, BaselinesOnDag, ::testing::Bool());

TEST(BaselinesConformance, RespectsColocationGroups) {
  OpGraph g = layered_dag(90, 5);
  for (int op = 0; op < g.num_ops(); op += 3)
    g.mutable_op(op).colocation_group = "group" + std::to_string(op % 4);
  const Cluster c = zero_latency_star(3);
  AnalyticSimulator sim;
  for (const std::string& m : all_methods()) {
    const Placement p = PlacerRegistry::instance().create(m)->place(g, c, context_for(&sim));
    EXPECT_NO_THROW(check_placement(g, c, p, m)) << m;
  }
}

TEST(BaselinesConformance, SameSeedSamePlacement) {
  const OpGraph g = layered_dag(120, 4);
  const Cluster c = zero_latency_star(4);
  for (const std::string& m : all_methods()) {
    AnalyticSimulator sim_a, sim_b;
    const Placement a = PlacerRegistry::instance().create(m)->place(g, c, context_for(&sim_a, 11));
    const Placement b = PlacerRegistry::instance().create(m)->place(g, c, context_for(&sim_b, 11));
    EXPECT_EQ(a, b) << m;
  }
}

TEST(BaselinesConformance, GraphTooBigThrowsFromEveryMethod) {
  OpGraph g = layered_dag(30, 6);
  for (int op = 0; op < g.num_ops(); ++op) g.mutable_op(op).param_bytes = 4e9;  // 120 GB
  const Cluster c = zero_latency_star(4, 16e9);
  AnalyticSimulator sim;
  for (const std::string& m : all_methods()) {
    SCOPED_TRACE(m);
    testing::expect_error<ConfigError>(
        [&] { PlacerRegistry::instance().create(m)->place(g, c, context_for(&sim)); },
        {"needs", "in total"});
  }
}

TEST(BaselinesConformance, BadOptionsThrowConfigError) {
  const OpGraph g = layered_dag(30, 6);
  const Cluster c = zero_latency_star(2);
  AnalyticSimulator sim;
  for (const std::string& m : all_methods()) {
    PlaceContext unknown = context_for(&sim);
    unknown.options["no-such-option"] = "1";
    EXPECT_THROW(PlacerRegistry::instance().create(m)->place(g, c, unknown), ConfigError) << m;
    PlaceContext negative = context_for(&sim);
    negative.budget_evals = -5;
    EXPECT_THROW(PlacerRegistry::instance().create(m)->place(g, c, negative), ConfigError) << m;
  }
  PlaceContext no_evaluator;
  EXPECT_THROW(PlacerRegistry::instance().create("anneal")->place(g, c, no_evaluator), ConfigError);
  PlaceContext bad_value = context_for(&sim);
  bad_value.options["imbalance"] = "0.5";
  EXPECT_THROW(PlacerRegistry::instance().create("metis")->place(g, c, bad_value), ConfigError);
}

class CountingObserver : public ProgressObserver {
 public:
  void on_progress(const Progress& p) override {
    ++calls;
    last = p;
  }
  int calls = 0;
  Progress last;
};

TEST(BaselinesSearch, AnnealNeverEndsWorseThanItsStart) {
  register_builtins();
  const Cluster c = zero_latency_star(4);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const OpGraph g = layered_dag(100, seed + 10);
    AnalyticSimulator sim;
    const Placement start = round_robin_placement(g, c);
    const double start_us = sim.evaluate(g, c, start).step_time_us;
    PlaceContext context = context_for(&sim, seed);
    context.start = &start;
    context.budget_evals = 150;
    context.options["temperature"] = "0.5";  // hot: accepts many worse moves
    CountingObserver observer;
    context.progress = &observer;
    const Placement best = PlacerRegistry::instance().create("anneal")->place(g, c, context);
    const StepResult r = sim.evaluate(g, c, best);
    EXPECT_TRUE(r.feasible);
    EXPECT_LE(r.step_time_us, start_us);
    EXPECT_GT(observer.calls, 0);
    EXPECT_EQ(observer.last.done, 150);
    EXPECT_EQ(observer.last.total, 150);
  }
}

TEST(BaselinesSearch, CancelStopsEarly) {
  register_builtins();
  const OpGraph g = layered_dag(60, 3);
  const Cluster c = zero_latency_star(2);
  AnalyticSimulator sim;
  CountingObserver observer;
  observer.cancel();
  PlaceContext context = context_for(&sim);
  context.budget_evals = 100000;
  context.progress = &observer;
  for (const char* m : {"anneal", "random-search", "random-sampling"}) {
    const Placement p = PlacerRegistry::instance().create(m)->place(g, c, context);
    EXPECT_NO_THROW(check_placement(g, c, p, m));
    EXPECT_LT(observer.last.done, 10) << m;
  }
}

// Counts evaluations, whichever evaluator (or clone of it) makes them.
class CountingProgress final : public ProgressObserver {
 public:
  void on_progress(const Progress& p) override { last = p; }
  Progress last;
};

TEST(BaselinesSearch, RandomSearchOnSeveralThreadsFindsTheOneThreadResult) {
  const OpGraph g = random_layered_dag(120, 5);
  const Cluster c = make_cluster_preset("k40x4");
  AnalyticSimulator sim;
  for (const char* m : {"random-search", "random-sampling"}) {
    PlaceContext one = context_for(&sim, 11);
    one.budget_evals = 150;  // not a multiple of a batch: the last batch is short
    CountingProgress one_progress, many_progress;
    one.progress = &one_progress;
    const Placement serial = PlacerRegistry::instance().create(m)->place(g, c, one);
    for (const char* threads : {"2", "3"}) {
      PlaceContext many = one;
      many.options["threads"] = threads;
      many.progress = &many_progress;
      const Placement parallel = PlacerRegistry::instance().create(m)->place(g, c, many);
      EXPECT_EQ(parallel, serial) << m << " on " << threads << " threads";
      EXPECT_EQ(many_progress.last.done, one_progress.last.done) << m;
      EXPECT_EQ(many_progress.last.done, 150) << m;
      EXPECT_EQ(many_progress.last.best_step_us, one_progress.last.best_step_us) << m;
    }
    PlaceContext bad = one;
    bad.options["threads"] = "0";
    EXPECT_THROW(PlacerRegistry::instance().create(m)->place(g, c, bad), ConfigError) << m;
  }
}

// Anneal on several threads evaluates, beside each move, the proposals that would
// follow its rejection: the same placement, evaluation count and best as on one
// thread, and some of its evaluations come from those batches. Also on a cluster
// where memory binds (infeasible proposals are rejected without drawing, which
// the speculation guesses wrong).
TEST(BaselinesSearch, AnnealOnSeveralThreadsFindsTheOneThreadResult) {
  const OpGraph g = random_layered_dag(120, 5);
  const Cluster roomy = make_cluster_preset("k40x4");
  AnalyticSimulator sim;
  const StepResult one_device = sim.evaluate(g, roomy, Placement(std::vector<int>(g.num_ops(), 0)));
  const Cluster tight = with_memory(roomy, 0.45 * one_device.peak_memory_bytes[0]);
  ASSERT_FALSE(sim.evaluate(g, tight, Placement(std::vector<int>(g.num_ops(), 0))).feasible);
  for (const Cluster* c : {&roomy, &tight}) {
    for (const char* m : {"anneal", "anneal-graph"}) {
      PlaceContext one = context_for(&sim, 11);
      one.budget_evals = 301;
      CountingProgress one_progress;
      one.progress = &one_progress;
      const Placement serial = PlacerRegistry::instance().create(m)->place(g, *c, one);
      for (const char* threads : {"2", "3"}) {
        const std::string what = std::string(m) + " on " + c->name() + ", " + threads + " threads";
        PlaceContext many = one;
        many.options["threads"] = threads;
        CountingProgress many_progress;
        many.progress = &many_progress;
        const Placement parallel = PlacerRegistry::instance().create(m)->place(g, *c, many);
        EXPECT_EQ(parallel, serial) << what;
        EXPECT_EQ(many_progress.last.done, 301) << what;
        EXPECT_EQ(one_progress.last.done, 301) << what;
        EXPECT_EQ(many_progress.last.best_step_us, one_progress.last.best_step_us) << what;
        // "done; H of 301 evaluations were speculated (...)"
        const std::string& message = many_progress.last.message;
        ASSERT_EQ(message.rfind("done; ", 0), 0u) << what << ": " << message;
        const long long hits = std::stoll(message.substr(6));
        EXPECT_GT(hits, 0) << what << ": " << message;
        EXPECT_LT(hits, 301) << what << ": " << message;
      }
    }
  }
  PlaceContext bad = context_for(&sim, 11);
  bad.options["threads"] = "0";
  EXPECT_THROW(PlacerRegistry::instance().create("anneal-graph")->place(g, roomy, bad), ConfigError);
}

}  // namespace
}  // namespace aware
