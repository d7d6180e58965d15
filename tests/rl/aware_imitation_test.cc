// The Aware agent's imitation terms, ours and not the paper's: behaviour
// cloning of a target placement, self-imitation of the best found, the elite
// step (a cross-entropy step on the fastest recent samples) and the entropy
// floor that holds the policy's entropy against it.
#include <algorithm>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "builtins/builtins.h"
#include "agents/rl/settings.h"
#include "agents/rl/trainer.h"
#include "core/cluster.h"
#include "core/errors.h"
#include "core/placer.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/resume_check.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

namespace fs = std::filesystem;
using testing::asymmetric_graph;
using testing::flat_chain;
using testing::parallel_chains_graph;
using testing::star_cluster;
using testing::strong_elite_on_the_flat_chain;
using testing::test_dir;
using testing::two_chains_graph;

Options off_fusion() { return {{"fusion", "off"}}; }

// Behaviour cloning: the greedy policy after imitating a placement is that
// placement, and every evaluation that finding a target takes is in the budget.
TEST(AwareAgent, BehaviourCloningReproducesATargetPlacement) {
  register_builtins();
  const OpGraph g = asymmetric_graph();
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  for (const std::vector<int>& devices : {std::vector<int>{2, 0, 1, 1, 0, 2, 2}, std::vector<int>{0, 1, 1, 2, 0, 0, 1}}) {
    TrainOptions t;
    t.budget_evals = 2;  // the reference state, then the greedy episode: nothing is reinforced
    t.seed = 4;
    t.agent_options = off_fusion();
    t.imitate_target = Placement(devices);
    t.imitate_probability = 0.99;
    const TrainResult r = train_agent("aware", g, c, sim, t);
    EXPECT_EQ(r.greedy, t.imitate_target);
    EXPECT_EQ(r.imitation_accuracy, 1.0);
    EXPECT_GE(r.imitation_probability, 0.99);
    EXPECT_LT(r.imitation_steps, t.imitate_steps) << "stopped when the target was reached";
    EXPECT_EQ(r.evaluations, 2);
  }
  // Targets found by placers: their evaluations are counted, the budget stays exact.
  const OpGraph big = parallel_chains_graph(4, 5, 2e6);
  for (const auto& [spec, cost] : std::vector<std::pair<std::string, long long>>{
           {"cheap", 7}, {"m-etf", 1}, {"anneal-graph:30", 31}}) {
    TrainOptions t;
    t.budget_evals = 60;
    t.seed = 2;
    t.imitate = spec;
    t.imitate_steps = 50;
    const TrainResult r = train_agent("aware", big, c, sim, t);
    EXPECT_EQ(r.imitation_evaluations, cost) << spec;
    EXPECT_EQ(r.evaluations, 60) << spec;
    EXPECT_LE(r.best_step_us, r.imitation_target_us) << spec << ": the target itself was evaluated";
  }
  TrainOptions bad;
  bad.budget_evals = 20;
  bad.imitate = "no-such-placer";
  EXPECT_THROW(train_agent("aware", big, c, sim, bad), ConfigError);
  bad.imitate = "anneal-graph:40";
  EXPECT_THROW(train_agent("aware", big, c, sim, bad), ConfigError) << "the target would take the budget";
  bad.imitate = "m-etf";
  EXPECT_THROW(train_agent("placeto", big, c, sim, bad), ConfigError) << "placeto cannot imitate";
}

// Self-imitation (not the paper's): every update also clones the best placement
// found so far, until the policy gives its actions the cap's mean probability.
TEST(AwareAgent, SelfImitationPullsThePolicyTowardTheBestPlacement) {
  register_builtins();
  const OpGraph g = flat_chain();
  const Cluster c = testing::zero_latency_star(3);
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_evals = 800;  // 100 updates of 8 episodes
  t.seed = 4;
  t.agent_options = off_fusion();
  t.self_imitation = 5;
  t.self_imitation_cap = 1;  // pull on every update
  const TrainResult r = train_agent("aware", g, c, sim, t);
  EXPECT_EQ(r.self_imitation_updates, r.updates);
  EXPECT_GT(r.self_imitation_probability, 0.6) << "from 1/3, uniform over three devices";
  EXPECT_EQ(r.evaluations, 800) << "the term costs no evaluations";
  // A cap just above uniform: the term stops once it is reached, and returns
  // only when the best placement changes or the policy drifts from it.
  t.self_imitation_cap = 0.4;
  const TrainResult capped = train_agent("aware", g, c, sim, t);
  EXPECT_GT(capped.self_imitation_updates, 0);
  EXPECT_LT(capped.self_imitation_updates, capped.updates);
  EXPECT_LT(capped.self_imitation_probability, r.self_imitation_probability);
  // From the samples only: the same pull, toward the best the policy sampled.
  t.self_imitation_cap = 1;
  t.self_imitation_from = "samples";
  const TrainResult sampled = train_agent("aware", g, c, sim, t);
  EXPECT_EQ(sampled.self_imitation_updates, sampled.updates);
  EXPECT_GT(sampled.self_imitation_probability, 0.6);
  t.self_imitation_from = "best";
  // The weight, the cap and the source are checked; agents without an imitation
  // loss refuse it.
  TrainOptions bad = t;
  bad.self_imitation_from = "reference";
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.self_imitation = -0.5;  // (-1 itself stands for the preset's weight)
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.self_imitation_cap = 0;
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.agent_options = {};
  EXPECT_THROW(train_agent("placeto", g, c, sim, bad), ConfigError);
}

// The elite step (ours, after Post; elite.h): every update also clones the
// fastest fraction of the last samples. On the flat chain every placement takes
// the same time, so the policy-gradient term is zero and only the elite term
// can move the policy: with a window of one it clones its own last sample and
// sharpens; with weight 0 it stays near uniform.
TEST(AwareAgent, EliteStepPullsThePolicyTowardItsFastestSamples) {
  register_builtins();
  const OpGraph g = flat_chain();
  const Cluster c = testing::zero_latency_star(3);
  AnalyticSimulator sim;
  TrainOptions t = strong_elite_on_the_flat_chain();
  const TrainResult r = train_agent("aware", g, c, sim, t);
  EXPECT_EQ(r.elite_updates, r.updates);
  EXPECT_GT(r.elite_probability, 0.6) << "from 1/3, uniform over three devices";
  EXPECT_EQ(r.evaluations, 800) << "the term costs no evaluations";
  t.elite_weight = 0;
  const TrainResult still = train_agent("aware", g, c, sim, t);
  EXPECT_LT(still.elite_probability, 0.45) << "no pull: the policy stays near 1/3";
  // The fraction, the window and the weight are checked; agents without an
  // imitation loss refuse it.
  TrainOptions bad = t;
  bad.elite = 1.5;
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.elite_window = 0;
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.elite_weight = -1;
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.agent_options = {};
  EXPECT_THROW(train_agent("placeto", g, c, sim, bad), ConfigError);
}

// The entropy floor (ours; entropy_floor.h) against the elite step that
// narrows the policy: on the flat chain with a window of one, the elite term
// alone sharpens the policy (the test above); with a floor of half the start
// entropy, held over the whole budget, the entropy of the run's second half
// stays near the floor, where without it the policy has collapsed far below.
TEST(AwareAgent, EntropyFloorHoldsTheEntropyAgainstTheEliteStep) {
  register_builtins();
  const OpGraph g = flat_chain();
  const Cluster c = testing::zero_latency_star(3);
  AnalyticSimulator sim;
  TrainOptions t = strong_elite_on_the_flat_chain();
  t.greedy_eval = false;
  auto lowest_late = [](const TrainResult& r) {
    double low = 1e9;
    for (size_t i = r.curve.size() / 2; i < r.curve.size(); ++i) low = std::min(low, r.curve[i].entropy);
    return low / r.curve.front().entropy;
  };
  const TrainResult free_run = train_agent("aware", g, c, sim, t);
  t.entropy_floor = 0.5;
  t.entropy_floor_until = 1.0;
  const TrainResult held = train_agent("aware", g, c, sim, t);
  ASSERT_GT(free_run.curve.size(), 8u);
  EXPECT_LT(lowest_late(free_run), 0.25) << "the elite step alone narrows the policy";
  EXPECT_GT(lowest_late(held), 0.3) << "the floor (0.5 of the start) holds it, give or take the controller's lag";
  EXPECT_EQ(held.entropy_floor, 0.5) << "the result says what ran";
  EXPECT_GT(held.entropy_floor_start, 0.9) << "the first update's entropy, near ln 3 = 1.10";
  // Released at a tenth of the budget, the floor no longer holds the second half.
  t.entropy_floor_until = 0.1;
  const TrainResult released = train_agent("aware", g, c, sim, t);
  EXPECT_LT(lowest_late(released), 0.25);
  TrainOptions bad = t;
  bad.entropy_floor = 1.0;
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.entropy_floor_until = 1.5;
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  bad = t;
  bad.agent_options["around"] = "0.97";  // the samples' entropy is a mixture's
  EXPECT_THROW(train_agent("aware", g, c, sim, bad), ConfigError);
  // The preset's floor (the default's) yields to `around` instead: the run
  // goes on without it, and its result says so.
  TrainOptions around = bad;
  around.entropy_floor = -1;
  around.budget_evals = 65;
  const TrainResult yielded = train_agent("aware", g, c, sim, around);
  EXPECT_EQ(yielded.entropy_floor, 0.0);
  EXPECT_EQ(yielded.entropy_floor_multiplier, 0.0);
  // Stopped and resumed, the run is the straight one: the controller (its start
  // entropy and multiplier) is in the checkpoint.
  t.entropy_floor_until = 1.0;
  t.budget_evals = 497;  // 1 + 16 x 31; stopped at 1 + 16 x 22, where the multiplier is at work
  testing::expect_resume_is_the_straight_run("aware", g, c, sim, t, 353, test_dir("resume_entropy_floor", 6),
                                             "entropy floor");
}

// The elite step is a preset setting: left unset (-1) a run takes its preset's
// (the default's since 2026-12-07: a tenth of a 64-placement window; none in the
// paper preset, none in aware-guided's) and the result says what ran; given, the
// user's wins.
TEST(AwareAgent, EliteStepDefaultsToThePresetsAndTheResultSaysWhatRan) {
  const std::tuple<const char*, const char*, double> cases[] = {
      {"aware", "default", 0.1}, {"aware", "paper", 0.0}, {"aware-guided", "default", 0.0}};
  for (const auto& [agent, preset, fraction] : cases) {
    TrainOptions unset;
    unset.preset = preset;
    const AgentSettings s = run_settings(agent, unset);
    EXPECT_EQ(unset.elite, s.elite) << agent << " " << preset;
    EXPECT_EQ(unset.elite_window, s.elite_window) << agent << " " << preset;
    EXPECT_EQ(s.elite, fraction) << agent << " " << preset;
    EXPECT_EQ(s.elite_window, 64) << agent << " " << preset;
  }
  TrainOptions given;
  given.elite = 0.25;
  given.elite_window = 8;
  run_settings("aware", given);
  EXPECT_EQ(given.elite, 0.25);
  EXPECT_EQ(given.elite_window, 8);
  // The entropy floor is a preset setting the same way (a fifth of the start
  // entropy in Aware's default since 2026-12-07; 0, off, in every other preset
  // and in aware-guided's, as measured): unset (-1) it is the preset's; given,
  // the user's.
  for (const char* agent : {"aware", "aware-guided", "placeto", "hierarchical"})
    for (const char* preset : {"default", "paper"}) {
      if (std::string(agent) == "aware-guided" && std::string(preset) == "paper") continue;
      TrainOptions unset;
      unset.preset = preset;
      const AgentSettings s = run_settings(agent, unset);
      EXPECT_EQ(unset.entropy_floor, s.entropy_floor) << agent << " " << preset;
      const bool aware_default = std::string(agent) == "aware" && std::string(preset) == "default";
      EXPECT_EQ(s.entropy_floor, aware_default ? 0.2 : 0.0) << agent << " " << preset;
    }
  given.entropy_floor = 0.2;
  run_settings("aware", given);
  EXPECT_EQ(given.entropy_floor, 0.2);

  register_builtins();
  const OpGraph g = flat_chain();
  const Cluster c = testing::zero_latency_star(3);
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_evals = 64;
  t.seed = 3;
  t.agent_options = off_fusion();
  const TrainResult preset = train_agent("aware", g, c, sim, t);
  EXPECT_EQ(preset.entropy_floor, 0.2) << "the default's floor ran";
  EXPECT_EQ(preset.elite_fraction, 0.1);
  EXPECT_EQ(preset.elite_window, 64);
  EXPECT_GT(preset.elite_updates, 0);
  t.elite = 0;
  const TrainResult off = train_agent("aware", g, c, sim, t);
  EXPECT_EQ(off.elite_fraction, 0.0);
  EXPECT_EQ(off.elite_window, 64);
  EXPECT_EQ(off.elite_updates, 0);
  t.elite = 0.5;
  t.elite_window = 16;
  const TrainResult on = train_agent("aware", g, c, sim, t);
  EXPECT_EQ(on.elite_fraction, 0.5);
  EXPECT_EQ(on.elite_window, 16);
  EXPECT_GT(on.elite_updates, 0);
}

// On several graphs (pre-training) each graph keeps its own window: an update
// on one graph clones only that graph's samples. The graphs here differ in op
// count, so a placement of one would be refused as the other's imitation target
// ("imitation target of another graph"); with one shared window the second
// graph's first update would clone the first graph's last sample.
TEST(AwareAgent, EliteStepKeepsAWindowPerGraph) {
  register_builtins();
  const OpGraph a = two_chains_graph(3), b = two_chains_graph(5);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_evals = 160;
  t.seed = 2;
  t.greedy_eval = false;
  t.agent_options = off_fusion();
  t.elite = 1;
  t.elite_window = 1;
  const TrainResult r = train_agent_multi("aware", {&a, &b}, c, sim, t);
  EXPECT_GE(r.updates, 4);
  EXPECT_EQ(r.elite_updates, r.updates) << "every update has its own graph's elite";
  EXPECT_GT(r.elite_probability, 0) << "the last update cloned a sample";
}

// The elite is the fastest of the window: where placements differ (two chains
// on two devices), an elite of one out of a window that holds the whole run is
// the best sample so far, and a strong pull makes the greedy decode reproduce
// it. Without the term the same run's greedy decode does not reach it (an elite
// of the slowest samples would pull it further away).
TEST(AwareAgent, EliteStepPullsTowardTheFastestNotTheLatest) {
  register_builtins();
  const OpGraph g = two_chains_graph(4);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_evals = 161;  // 10 updates of 16, and the greedy episode
  t.seed = 3;
  t.agent_options = off_fusion();
  t.elite = 0.001;      // ceil(0.001 x size): one member while the window holds under 1,000
  t.elite_window = 1000;
  t.elite_weight = 20;
  const TrainResult pulled = train_agent("aware", g, c, sim, t);
  EXPECT_GT(pulled.elite_probability, 0.7) << "from 1/2, uniform over two devices";
  EXPECT_DOUBLE_EQ(pulled.greedy_step_us, pulled.best_step_us) << "the greedy decode is the fastest sample";
  t.elite_weight = 0;
  const TrainResult free = train_agent("aware", g, c, sim, t);
  EXPECT_GT(free.greedy_step_us, free.best_step_us) << "without the pull, ten updates do not get there";
}

// Self-imitation from the samples checkpoints its target and resumes from it.
TEST(AwareAgent, SelfImitationFromTheSamplesResumes) {
  register_builtins();
  const OpGraph g = asymmetric_graph();
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  const fs::path dir = test_dir("self_imitation_resume", 4);
  TrainOptions t;
  t.seed = 4;
  t.agent_options = off_fusion();
  t.self_imitation = 5;
  t.self_imitation_cap = 1;
  t.self_imitation_from = "samples";
  t.resume_dir = dir.string();
  t.budget_evals = 200;
  const TrainResult half = train_agent("aware", g, c, sim, t);
  t.budget_evals = 400;
  const TrainResult resumed = train_agent("aware", g, c, sim, t);
  EXPECT_FALSE(half.resumed);
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.evaluations, 400);
  EXPECT_EQ(resumed.self_imitation_updates, resumed.updates) << "every update, those before the resume too";
  EXPECT_LE(resumed.best_step_us, half.best_step_us);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aware::rl
