// The guided hybrid (aware-guided; agents/rl/guide.h): the refiner's share of
// the evaluations, what a refinement returns, its first start, bad settings, and
// the trainer's use of it (budget, self-imitation, determinism, resume).
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agents/rl/guide.h"
#include "agents/rl/settings.h"
#include "agents/rl/trainer.h"
#include "builtins/builtins.h"
#include "core/errors.h"
#include "core/placer.h"
#include "core/rng.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

using testing::parallel_chains_graph;
using testing::star_cluster;

AgentSettings guided(double share = 0.5, long long evals = 40, const std::string& from = "proposal") {
  AgentSettings s = agent_settings("aware-guided");
  s.guide_share = share;
  s.guide_by = "evaluations";  // deterministic (time would depend on the machine)
  s.guide_evals = evals;
  s.guide_from = from;
  return s;
}

Placement random_placement(int ops, int devices, MersenneRng& rng) {
  std::vector<int> d(static_cast<size_t>(ops));
  for (int& x : d) x = rng.below(devices);
  return Placement(d);
}

// A stand-in for the policy: random placements, each one evaluation, offered to
// the guide, which refines when its share allows. The share holds after every
// round: the refiner's evaluations stay within share / (1 - share) of the
// policy's plus one refinement, and the env counts both, within the budget.
TEST(Guide, KeepsItsShareOfTheEvaluationsAndTheBudget) {
  register_builtins();
  const OpGraph g = parallel_chains_graph(4, 5);
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  const long long budget = 600;
  PlacementEnv env(g, c, sim, PenaltyKind::kPlacetoMemory, budget, 0, nullptr);
  Guide guide(guided(0.5, 40), 7);
  MersenneRng rng(3);
  long long policy = 0;
  while (!env.exhausted()) {
    const Placement p = random_placement(g.num_ops(), c.num_devices(), rng);
    guide.propose(p, env.evaluate(p));
    ++policy;
    if (guide.maybe_refine(env)) {
      EXPECT_LE(guide.evaluations(), policy + 40) << "after round " << guide.rounds();
      EXPECT_LE(guide.last().evaluations, 40);
    }
    ASSERT_EQ(env.evaluations(), policy + guide.evaluations());
  }
  EXPECT_EQ(env.evaluations(), budget);
  EXPECT_GE(guide.rounds(), 5);
  // Half of the budget, to within one refinement.
  EXPECT_NEAR(static_cast<double>(guide.evaluations()), budget / 2.0, 40.0);
}

// A refinement (an anneal-graph chain) returns the best it saw, its start
// included: never worse than the proposal it started from, and the env's best
// is at least as good as every find.
TEST(Guide, AFindIsNeverWorseThanItsStart) {
  register_builtins();
  const OpGraph g = parallel_chains_graph(4, 5);
  const Cluster c = star_cluster(4);
  AnalyticSimulator sim;
  PlacementEnv env(g, c, sim, PenaltyKind::kPlacetoMemory, 2000, 0, nullptr);
  Guide guide(guided(0.5, 60), 11);
  MersenneRng rng(5);
  int checked = 0;
  while (!env.exhausted()) {
    const Placement p = random_placement(g.num_ops(), c.num_devices(), rng);
    guide.propose(p, env.evaluate(p));
    if (!guide.maybe_refine(env) || guide.rounds() == 1) continue;
    const Refinement& r = guide.last();
    ASSERT_EQ(r.start.size(), g.num_ops());
    EXPECT_LE(r.found_us, r.start_us);
    EXPECT_LE(env.best_penalised_us(), r.found_us);
    ++checked;
  }
  EXPECT_GE(checked, 5);
  EXPECT_GT(guide.improvements(), 0);
  // The optimum by hand: one chain per device, 5 ops of 1 ms, no transfers.
  EXPECT_NEAR(env.best_step_us(), 5000, 1);
}

// The first refinement starts where the refiner itself does (anneal-graph: the
// best one-pass placer) whatever was proposed: its find is the placer's own
// result with that seed and budget.
TEST(Guide, TheFirstRefinementIsTheRefinersOwnRun) {
  register_builtins();
  // Six chains on three devices, 200 evaluations.
  const OpGraph g = parallel_chains_graph(6, 5, 1e5);
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  PlacementEnv env(g, c, sim, PenaltyKind::kPlacetoMemory, 1000, 0, nullptr);
  const std::uint64_t seed = 21;
  Guide guide(guided(0.5, 200), seed);
  const Placement single(std::vector<int>(static_cast<size_t>(g.num_ops()), 0));
  guide.propose(single, env.evaluate(single));
  ASSERT_TRUE(guide.maybe_refine(env));
  EXPECT_EQ(guide.last().start.size(), 0);
  // The same run by hand: the placer, its seed (the guide's first), 199 evaluations.
  PlaceContext context;
  context.evaluator = &sim;
  context.seed = seed + 0x9E3779B97F4A7C15ULL;
  context.budget_evals = 199;
  const Placement direct = PlacerRegistry::instance().create("anneal-graph")->place(g, c, context);
  EXPECT_EQ(guide.last().found.device_of_op, direct.device_of_op);
  EXPECT_EQ(guide.last().evaluations, 200);
  EXPECT_EQ(env.evaluations(), 1 + 200);
  // ... and not the same run from the proposal (the check can tell them apart).
  context.start = &single;
  const Placement other = PlacerRegistry::instance().create("anneal-graph")->place(g, c, context);
  EXPECT_NE(other.device_of_op, direct.device_of_op);
}

TEST(Guide, RefusesBadSettings) {
  register_builtins();
  EXPECT_THROW(Guide(guided(0.0), 1), ConfigError);
  EXPECT_THROW(Guide(guided(1.0), 1), ConfigError);
  EXPECT_THROW(Guide(guided(0.5, 2), 1), ConfigError);
  EXPECT_THROW(Guide(guided(0.5, 40, "elsewhere"), 1), ConfigError);
  AgentSettings s = guided();
  s.guide_refiner = "no-such-placer";
  EXPECT_THROW(Guide(s, 1), ConfigError);
  s.guide_refiner = "m-etf";  // one pass, no search
  EXPECT_THROW(Guide(s, 1), ConfigError);
}

// The run's settings: the preset's, the options given winning, and the
// options left to the preset filled in.
TEST(GuidedAgent, RunSettingsTakeThePresetsAndTheOptionsGiven) {
  TrainOptions t;
  const AgentSettings guided = run_settings("aware-guided", t);
  EXPECT_DOUBLE_EQ(t.self_imitation, 1.0);  // -1: the preset's
  EXPECT_EQ(t.algorithm, "reinforce");
  EXPECT_DOUBLE_EQ(guided.guide_share, 0.5);
  EXPECT_EQ(guided.guide_by, "time");
  TrainOptions given;
  given.self_imitation = 0;
  given.guide_share = 0.25;
  given.guide_by = "evaluations";
  given.guide_evals = 40;
  given.algorithm = "ppo";
  given.ppo_epochs = 7;
  const AgentSettings mine = run_settings("aware-guided", given);
  EXPECT_DOUBLE_EQ(given.self_imitation, 0.0);
  EXPECT_DOUBLE_EQ(mine.guide_share, 0.25);
  EXPECT_EQ(mine.guide_by, "evaluations");
  EXPECT_EQ(mine.guide_evals, 40);
  EXPECT_EQ(mine.ppo_epochs, 7);
  TrainOptions plain;
  EXPECT_DOUBLE_EQ(run_settings("aware", plain).guide_share, 0.0);
  EXPECT_DOUBLE_EQ(plain.self_imitation, 0.0);
  plain.guide_share = 0.5;
  EXPECT_THROW(run_settings("aware", plain), ConfigError);
  TrainOptions bad;
  bad.algorithm = "a2c";
  EXPECT_THROW(run_settings("aware", bad), ConfigError);
}

TrainOptions guided_run(long long budget, std::uint64_t seed = 3) {
  TrainOptions t;
  t.budget_evals = budget;
  t.seed = seed;
  t.episodes_per_update = 4;
  t.guide_evals = 30;
  t.guide_by = "evaluations";
  t.guide_from = "proposal";
  return t;
}

// The trainer: the hybrid spends exactly its budget, half of it refining, with
// self-imitation on by its preset; the same seed gives the same run; its best
// is at least as good as any refinement's find.
TEST(GuidedAgent, SpendsItsBudgetHalfRefiningAndIsDeterministic) {
  register_builtins();
  const OpGraph g = parallel_chains_graph(4, 5);
  const Cluster c = star_cluster(4);
  AnalyticSimulator sim;
  const TrainResult a = train_agent("aware-guided", g, c, sim, guided_run(400));
  const TrainResult b = train_agent("aware-guided", g, c, sim, guided_run(400));
  EXPECT_EQ(a.evaluations, 400);
  EXPECT_GE(a.guide_rounds, 4);
  EXPECT_NEAR(static_cast<double>(a.guide_evaluations), 200.0, 30.0 + 4);  // within a refinement and a batch
  EXPECT_DOUBLE_EQ(a.self_imitation_weight, 1.0);
  EXPECT_GT(a.self_imitation_updates, 0);
  EXPECT_EQ(a.best.device_of_op, b.best.device_of_op);
  EXPECT_EQ(a.guide_evaluations, b.guide_evaluations);
  ASSERT_EQ(a.curve.size(), b.curve.size());
  for (size_t i = 0; i < a.curve.size(); ++i) EXPECT_EQ(a.curve[i].loss, b.curve[i].loss) << "update " << i;
  // One chain per device is the optimum (5 chains' worth of 1 ms ops, no transfers).
  EXPECT_NEAR(a.best_step_us, 5000, 1);
  // Plain aware has neither.
  TrainOptions plain = guided_run(200);
  plain.guide_evals = 0;
  const TrainResult p = train_agent("aware", g, c, sim, plain);
  EXPECT_EQ(p.guide_rounds, 0);
  EXPECT_DOUBLE_EQ(p.self_imitation_weight, 0.0);
}

TEST(GuidedAgent, SettingsAndPoliciesAreAwares) {
  register_builtins();
  EXPECT_EQ(agent_preset_names("aware-guided"), std::vector<std::string>{"default"});
  EXPECT_THROW(agent_settings("aware-guided", "paper"), ConfigError);
  EXPECT_EQ(agent_network("aware-guided"), "aware");
  const OpGraph g = parallel_chains_graph(2, 4);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  // guide_share on an agent without a refiner is refused, not ignored.
  TrainOptions t = guided_run(60);
  t.guide_share = 0.5;
  EXPECT_THROW(train_agent("aware", g, c, sim, t), ConfigError);
  // An Aware policy trains on under aware-guided, and the other way round.
  const std::string dir = std::string(AWARE_TEST_TMPDIR) + "/guided-policy";
  std::filesystem::create_directories(dir);
  TrainOptions save = guided_run(60);
  save.guide_evals = 0;
  save.save_policy = dir + "/aware.pt";
  train_agent("aware", g, c, sim, save);
  TrainOptions init = guided_run(100);
  init.init_policy = save.save_policy;
  init.save_policy = dir + "/guided.pt";
  EXPECT_EQ(train_agent("aware-guided", g, c, sim, init).evaluations, 100);
  EXPECT_EQ(read_policy_info(init.save_policy).agent, "aware");
}

// A checkpoint keeps the refinements' count: the resumed run goes on with the
// refiner's share as it stood, and ends with the evaluations of the whole budget.
TEST(GuidedAgent, ResumeKeepsTheRefinersShare) {
  register_builtins();
  const OpGraph g = parallel_chains_graph(3, 4);
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  const std::string dir = std::string(AWARE_TEST_TMPDIR) + "/guided-resume";
  std::filesystem::remove_all(dir);
  TrainOptions first = guided_run(200);
  first.resume_dir = dir;
  const TrainResult a = train_agent("aware-guided", g, c, sim, first);
  ASSERT_GT(a.guide_evaluations, 0);
  TrainOptions second = guided_run(400);
  second.resume_dir = dir;
  const TrainResult b = train_agent("aware-guided", g, c, sim, second);
  EXPECT_TRUE(b.resumed);
  EXPECT_EQ(b.evaluations, 400);
  EXPECT_GE(b.guide_evaluations, a.guide_evaluations);
  EXPECT_NEAR(static_cast<double>(b.guide_evaluations), 200.0, 30.0 + 4);
}

}  // namespace
}  // namespace aware::rl
