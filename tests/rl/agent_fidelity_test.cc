// The learned agents against their papers (issue: faithful agents). Each test
// checks one defect of the earlier trainer and agents by hand-computed values:
// the entropy bonus and the policy term on one normaliser, PPO's ratio per
// decision, the learning rate by update count, leave-one-out advantages,
// Aware's bounded logits and exploration floor, and the presets themselves.
// Hierarchical's are in hierarchical_fidelity_test.cc.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agents/rl/agent.h"
#include "agents/rl/networks.h"
#include "agents/rl/settings.h"
#include "agents/rl/thread_training.h"
#include "agents/rl/trainer.h"
#include "agents/rl/trainer_impl.h"
#include "builtins/builtins.h"
#include "core/errors.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

using testing::star_cluster;
using testing::two_chains_graph;

// One episode of one step whose decisions are the rows of `logits` (each row a
// categorical choice of action 0), with advantage `a`.
Episode one_step_episode(const torch::Tensor& logits, double reward = 0) {
  const CategoricalTerms t = categorical_terms(logits, std::vector<int64_t>(logits.size(0), 0));
  Step s;
  s.log_prob = t.log_prob;
  s.entropy = t.entropy;
  s.decision_log_probs = t.log_probs;
  s.decisions = static_cast<int>(logits.size(0));
  s.reward = reward;
  Episode e;
  e.sequential = false;
  e.steps.push_back(s);
  return e;
}

// Defect 1: the entropy bonus had a per-decision mean against a policy term
// summed over decisions, so its weight fell with the episode's length. The
// gradient of the bonus on each decision's logits must not depend on how many
// decisions the episode has.
TEST(AgentFidelity, EntropyGradientPerDecisionIsTheSameForTwoAndTwentyDecisions) {
  const std::vector<float> row = {0.3f, -0.7f, 1.1f};
  std::vector<torch::Tensor> grads;
  for (int decisions : {2, 20}) {
    torch::Tensor logits = torch::tensor(row).repeat({decisions, 1}).set_requires_grad(true);
    const std::vector<Episode> batch = {one_step_episode(logits)};
    const torch::Tensor loss = detail::policy_loss(batch, {{0.0}}, nullptr, 0.2, 0.5, nullptr);
    loss.backward();
    grads.push_back(logits.grad().select(0, 0).clone());
  }
  // Hand computation: d(-c H)/dz_j = c p_j (log p_j + H) for one row.
  const torch::Tensor p = torch::softmax(torch::tensor(row), 0);
  const torch::Tensor h = -(p * p.log()).sum();
  const torch::Tensor expected = 0.5 * p * (p.log() + h);
  for (const torch::Tensor& g : grads)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(g[j].item<double>(), expected[j].item<double>(), 1e-6);
}

// The policy term and the bonus share the normaliser: per episode a sum over its
// decisions, then the mean over the update's episodes.
TEST(AgentFidelity, LossIsTheMeanOverEpisodesOfSumsOverDecisions) {
  torch::Tensor a = torch::tensor({{0.0f, 1.0f}, {2.0f, 0.0f}});
  torch::Tensor b = torch::tensor({{1.0f, 1.0f}});
  const std::vector<Episode> batch = {one_step_episode(a), one_step_episode(b)};
  double mean_entropy = 0;
  const double coef = 0.1;
  const torch::Tensor loss = detail::policy_loss(batch, {{2.0}, {-1.0}}, nullptr, 0.2, coef, &mean_entropy);
  auto lp = [](const torch::Tensor& l) { return torch::log_softmax(l, 1).select(1, 0).sum().item<double>(); };
  auto ent = [](const torch::Tensor& l) {
    const torch::Tensor q = torch::log_softmax(l, 1);
    return -(q.exp() * q).sum().item<double>();
  };
  const double expected = ((-2.0 * lp(a) - coef * ent(a)) + (1.0 * lp(b) - coef * ent(b))) / 2;
  EXPECT_NEAR(loss.item<double>(), expected, 1e-6);
  EXPECT_NEAR(mean_entropy, (ent(a) + ent(b)) / 3, 1e-6);  // the curve's figure: per decision
}


// An agent's own regulariser (Step::penalty, Aware's logit penalty) enters the
// loss as it is, under the same mean over episodes, with PPO's ratios as without.
TEST(AgentFidelity, StepPenaltyIsAddedToTheLossAsItIs) {
  torch::Tensor a = torch::tensor({{0.0f, 1.0f}, {2.0f, 0.0f}});
  torch::Tensor b = torch::tensor({{1.0f, 1.0f}});
  std::vector<Episode> batch = {one_step_episode(a), one_step_episode(b)};
  const std::vector<std::vector<double>> adv = {{2.0}, {-1.0}};
  std::vector<std::vector<torch::Tensor>> old;
  for (const Episode& e : batch) old.push_back({e.steps[0].decision_log_probs.detach()});
  const double plain = detail::policy_loss(batch, adv, nullptr, 0.2, 0.1, nullptr).item<double>();
  const double plain_ppo = detail::policy_loss(batch, adv, &old, 0.2, 0.1, nullptr).item<double>();
  batch[0].steps[0].penalty = torch::tensor(0.3);
  batch[1].steps[0].penalty = torch::tensor(0.5);
  // (0.3 + 0.5) / 2 episodes.
  EXPECT_NEAR(detail::policy_loss(batch, adv, nullptr, 0.2, 0.1, nullptr).item<double>() - plain, 0.4, 1e-6);
  EXPECT_NEAR(detail::policy_loss(batch, adv, &old, 0.2, 0.1, nullptr).item<double>() - plain_ppo, 0.4, 1e-6);
}
// Defect 2: PPO clipped the joint ratio exp(Σ Δ log π) of an episode. With one
// ratio per decision, a decision inside the clip range keeps its gradient while
// one outside loses it; the joint ratio here (e^0.5) is outside and would have
// zeroed all three.
TEST(AgentFidelity, PpoClipsEachDecisionsRatio) {
  const std::vector<double> old_lp = {-1.0, -0.5, -2.0};
  const std::vector<double> delta = {0.1, 0.5, -0.1};
  for (const double advantage : {1.0, -1.0}) {
    std::vector<float> now;
    for (size_t d = 0; d < 3; ++d) now.push_back(static_cast<float>(old_lp[d] + delta[d]));
    torch::Tensor x = torch::tensor(now).set_requires_grad(true);
    Step s;
    s.decision_log_probs = x;
    s.log_prob = x.sum();
    s.entropy = torch::zeros({});
    s.decisions = 3;
    Episode e;
    e.sequential = false;
    e.steps.push_back(s);
    const std::vector<std::vector<torch::Tensor>> old = {{torch::tensor(std::vector<float>(old_lp.begin(), old_lp.end()))}};
    const torch::Tensor loss = detail::policy_loss({e}, {{advantage}}, &old, 0.2, 0.0, nullptr);
    loss.backward();
    for (size_t d = 0; d < 3; ++d) {
      const double r = std::exp(delta[d]);
      // -min(r A, clip(r) A): the clipped branch (gradient 0) is the smaller one
      // when A > 0 and r > 1.2, or A < 0 and r < 0.8; else d/dx = -r A.
      const bool clipped = (advantage > 0 && r > 1.2) || (advantage < 0 && r < 0.8);
      const double expected = clipped ? 0.0 : -r * advantage;
      EXPECT_NEAR(x.grad()[static_cast<int64_t>(d)].item<double>(), expected, 1e-5)
          << "decision " << d << ", advantage " << advantage;
    }
  }
}

// Defect 3: the learning rate followed the fraction of the budget spent.
TEST(AgentFidelity, LearningRateFollowsTheUpdateCount) {
  LrSchedule linear;
  linear.kind = LrSchedule::Kind::kLinear;
  linear.end_factor = 0.1;
  linear.updates = 100;
  EXPECT_DOUBLE_EQ(linear.at(1e-3, 0), 1e-3);
  EXPECT_NEAR(linear.at(1e-3, 50), 5.5e-4, 1e-15);
  EXPECT_NEAR(linear.at(1e-3, 100), 1e-4, 1e-15);
  EXPECT_NEAR(linear.at(1e-3, 5000), 1e-4, 1e-15);  // held at the end
  LrSchedule stairs;
  stairs.kind = LrSchedule::Kind::kStaircase;
  stairs.start = 400;
  stairs.every = 50;
  stairs.factor = 0.95;
  EXPECT_DOUBLE_EQ(stairs.at(0.1, 400), 0.1);
  EXPECT_DOUBLE_EQ(stairs.at(0.1, 449), 0.1);
  EXPECT_NEAR(stairs.at(0.1, 450), 0.095, 1e-15);
  EXPECT_NEAR(stairs.at(0.1, 500), 0.1 * 0.95 * 0.95, 1e-15);
}

// ... so a run's first updates are the same whatever its budget: training with
// 200 and with 400 evaluations gives the same curve over the first 200.
TEST(AgentFidelity, TheFirstUpdatesDoNotDependOnTheBudget) {
  register_builtins();
  const OpGraph g = two_chains_graph(4);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  std::vector<std::vector<CurvePoint>> curves;
  for (long long budget : {200LL, 400LL}) {
    TrainOptions t;
    t.budget_evals = budget;
    t.seed = 4;
    t.greedy_eval = false;
    curves.push_back(train_agent("aware", g, c, sim, t).curve);
  }
  ASSERT_GE(curves[0].size(), 10u);
  ASSERT_GT(curves[1].size(), curves[0].size());
  // The shorter run's last update may be cut by its budget: the ones before it.
  for (size_t i = 0; i + 1 < curves[0].size(); ++i) {
    EXPECT_EQ(curves[0][i].mean_step_us, curves[1][i].mean_step_us) << "update " << i;
    EXPECT_EQ(curves[0][i].loss, curves[1][i].loss) << "update " << i;
  }
}

// Defect 4: with the reward's zero at the reference (one device) and a baseline
// of the recent rewards, a policy collapsed there saw advantages of exactly 0.
// Leave-one-out advantages compare each sample with the others of its batch.
TEST(AgentFidelity, LeaveOneOutAdvantagesByHand) {
  const auto a = leave_one_out_advantages({{1}, {2}, {3}, {6}});
  ASSERT_EQ(a.size(), 4u);
  EXPECT_NEAR(a[0][0], 1 - 11.0 / 3, 1e-12);
  EXPECT_NEAR(a[1][0], 2 - 10.0 / 3, 1e-12);
  EXPECT_NEAR(a[2][0], 3 - 9.0 / 3, 1e-12);
  EXPECT_NEAR(a[3][0], 6 - 6.0 / 3, 1e-12);
  // A batch at the reference but for one worse sample: every sample carries
  // signal (the collapsed ones +1/6, the worse one -1/2), where a baseline of a
  // history of zeros gave the collapsed ones exactly 0.
  const auto c = leave_one_out_advantages({{0}, {0}, {0}, {-0.5}});
  for (int e = 0; e < 3; ++e) EXPECT_NEAR(c[e][0], 0.5 / 3, 1e-12);
  EXPECT_NEAR(c[3][0], -0.5, 1e-12);
  // Sequential episodes: per step index, over the episodes that have it.
  const auto s = leave_one_out_advantages({{4, 1}, {2}, {0, 3}});
  EXPECT_NEAR(s[0][0], 4 - 1.0, 1e-12);
  EXPECT_NEAR(s[0][1], 1 - 3.0, 1e-12);
  EXPECT_NEAR(s[1][0], 2 - 2.0, 1e-12);
  EXPECT_NEAR(s[2][1], 3 - 1.0, 1e-12);
}

// PPO's replay recomputes, at unchanged weights, exactly the per-decision
// log-probabilities the episode was sampled with (every agent).
TEST(AgentFidelity, ReplayReproducesTheSampledDecisionLogProbs) {
  register_builtins();
  const OpGraph g = two_chains_graph(5);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  for (const std::string agent_name : {"placeto", "hierarchical", "aware"}) {
    torch::manual_seed(6);
    Options config;
    if (agent_name == "hierarchical") config = {{"groups", "4"}, {"samples", "3"}};
    if (agent_name == "placeto") config = {{"chunk", "2"}, {"evaluate", "step"}};
    auto agent = AgentRegistry::instance().create(agent_name, config, 2);
    agent->prepare(g, c);
    PlacementEnv env(g, c, sim, PenaltyKind::kPlacetoMemory, 0, 0, nullptr);
    SampleRng rng(8);
    Episode ep = agent->run_episode(env, rng, false);
    ASSERT_FALSE(ep.steps.empty()) << agent_name;
    std::vector<torch::Tensor> sampled;
    for (const Step& s : ep.steps) {
      ASSERT_TRUE(s.decision_log_probs.defined()) << agent_name;
      EXPECT_EQ(s.decision_log_probs.numel(), s.decisions) << agent_name;
      EXPECT_NEAR(s.decision_log_probs.sum().item<double>(), s.log_prob.item<double>(), 1e-5) << agent_name;
      sampled.push_back(s.decision_log_probs.detach().clone());
    }
    agent->replay(ep);
    for (size_t i = 0; i < ep.steps.size(); ++i)
      EXPECT_TRUE(torch::allclose(ep.steps[i].decision_log_probs, sampled[i], 1e-5, 1e-6))
          << agent_name << " step " << i;
  }
}

// Placeto's per-step gradients (one decision a step, as its paper preset plays):
// taken while playing, they give the same loss value and the same gradient of
// every weight as the batched replay of the whole episode at its end, for a loss
// that weights every step's log-probability and entropy differently.
// Both networks: ours and Placeto's own (net=paper).
TEST(AgentFidelity, PlacetoStepwiseGradientsEqualTheBatchedReplay) {
  register_builtins();
  const OpGraph g = two_chains_graph(5);
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  for (const char* net : {"ours", "paper"}) {
  SCOPED_TRACE(std::string("net=") + net);
  torch::manual_seed(13);
  auto agent = AgentRegistry::instance().create(
      "placeto", {{"chunk", "1"}, {"evaluate", "step"}, {"features", "paper"}, {"start", "fixed"}, {"net", net}}, 3);
  agent->prepare(g, c);
  PlacementEnv env(g, c, sim, PenaltyKind::kPlacetoMemory, 0, 0, nullptr);
  SampleRng rng(21);
  Episode ep = agent->run_episode(env, rng, false);
  ASSERT_GT(ep.steps.size(), 3u);
  EXPECT_EQ(env.evaluations(), 1 + static_cast<long long>(ep.steps.size()));  // the start, then every step
  EXPECT_GT(env.backward_s(), 0) << "the per-step gradients were taken while playing";
  std::vector<double> played_lp, played_ent;
  for (const Step& st : ep.steps) played_lp.push_back(st.log_prob.item<double>()), played_ent.push_back(st.entropy.item<double>());
  auto loss_and_grads = [&](std::vector<torch::Tensor>& grads) {
    agent->module().zero_grad();
    torch::Tensor loss = torch::zeros({});
    for (size_t i = 0; i < ep.steps.size(); ++i)
      loss = loss - (0.3 + 0.7 * i) * ep.steps[i].decision_log_probs.sum() - (1.1 - 0.2 * i) * ep.steps[i].entropy;
    loss.backward();
    grads.clear();
    for (const auto& p : agent->module().parameters()) grads.push_back(p.grad().clone());
    return loss.item<double>();
  };
  std::vector<torch::Tensor> stepwise, batched;
  const double a = loss_and_grads(stepwise);
  agent->replay(ep);  // the batched pass over the episode's recorded states
  for (size_t i = 0; i < ep.steps.size(); ++i) {
    EXPECT_NEAR(played_lp[i], ep.steps[i].log_prob.item<double>(), 1e-5) << "step " << i;
    EXPECT_NEAR(played_ent[i], ep.steps[i].entropy.item<double>(), 1e-5) << "step " << i;
  }
  const double b = loss_and_grads(batched);
  EXPECT_NEAR(a, b, 1e-5 * std::max(1.0, std::abs(b)));
  ASSERT_EQ(stepwise.size(), batched.size());
  double norm = 0;
  for (size_t k = 0; k < batched.size(); ++k) {
    EXPECT_TRUE(torch::allclose(stepwise[k], batched[k], 1e-4, 1e-6)) << "parameter " << k;
    norm += batched[k].pow(2).sum().item<double>();
  }
  EXPECT_GT(norm, 0);  // the check compares gradients, not zeros
  }
}

// Defect 6: Aware's logits were unbounded, with no exploration floor. With
// bound=C they stay within ±C; with explore=ε every device keeps at least ε/D.
TEST(AgentFidelity, ExplorationFloorKeepsEveryDeviceSampleable) {
  const torch::Tensor logits = torch::tensor({{80.0f, -80.0f, -80.0f, -80.0f}});
  const double eps = 0.01;
  for (int64_t action = 0; action < 4; ++action) {
    const CategoricalTerms t = categorical_terms(logits, {action}, eps);
    const double p = std::exp(t.log_prob.item<double>());
    const double expected = action == 0 ? 1 - eps + eps / 4 : eps / 4;
    EXPECT_NEAR(p, expected, 1e-6) << "action " << action;
  }
  // Sampled often enough, the floor shows: 10,000 draws at ε/D = 0.25% each
  // give about 25 of each other device (never 0; the unmixed policy gives 0).
  SampleRng rng(7);
  const torch::Tensor many = logits.repeat({10000, 1});
  std::vector<int> counts(4, 0);
  for (int64_t a : sample_rows(many, rng, false, eps)) ++counts[a];
  for (int d = 1; d < 4; ++d) {
    EXPECT_GT(counts[d], 5);
    EXPECT_LT(counts[d], 60);
  }
  SampleRng rng2(7);
  std::vector<int> plain(4, 0);
  for (int64_t a : sample_rows(many, rng2, false, 0.0)) ++plain[a];
  EXPECT_EQ(plain[0], 10000);
}

TEST(AgentFidelity, AwareLogitsAreBoundedByDefault) {
  register_builtins();
  const OpGraph g = two_chains_graph(4);
  const Cluster c = star_cluster(2);
  torch::manual_seed(5);
  auto agent = AgentRegistry::instance().create("aware", {{"fusion", "off"}}, 2);
  agent->prepare(g, c);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : agent->module().parameters()) p.mul_(50.0);
  }
  AnalyticSimulator sim;
  PlacementEnv env(g, c, sim, PenaltyKind::kPlacetoMemory, 0, 0, nullptr);
  SampleRng rng(1);
  const Episode ep = agent->run_episode(env, rng, false);
  ASSERT_EQ(ep.steps.size(), 1u);
  // Every decision's probability is at least e^(-2·5) / (1 + e^(-2·5)) (two
  // devices, logits within ±5); unbounded, weights this large give ~e^-100.
  const double floor = std::exp(-10.0) / (1 + std::exp(-10.0));
  const torch::Tensor lp = ep.steps[0].decision_log_probs;
  EXPECT_EQ(lp.numel(), ep.steps[0].decisions);
  EXPECT_GE(lp.min().item<double>(), std::log(floor) - 1e-5);
}

// The presets: every agent has default and paper; an unknown one is named.
TEST(AgentFidelity, PresetsAreNamedAndUnknownOnesRefused) {
  for (const char* agent : {"placeto", "hierarchical", "aware"}) {
    EXPECT_EQ(agent_preset_names(agent), (std::vector<std::string>{"default", "paper"}));
    EXPECT_EQ(agent_settings(agent, "").preset, "default");
  }
  EXPECT_THROW(agent_settings("aware", "fast"), ConfigError);
  EXPECT_THROW(agent_settings("nope", "paper"), ConfigError);
  const AgentSettings p = agent_settings("placeto", "paper");
  EXPECT_EQ(p.agent_options.at("chunk"), "1");
  EXPECT_EQ(p.agent_options.at("evaluate"), "step");
  EXPECT_EQ(p.agent_options.at("start"), "fixed");
  EXPECT_DOUBLE_EQ(p.entropy_coef, 1.0);
  EXPECT_DOUBLE_EQ(p.grad_clip, 1.25);
  EXPECT_NEAR(p.schedule.at(p.learning_rate, p.schedule.updates), 1e-4, 1e-15);
}

}  // namespace
}  // namespace aware::rl

namespace aware::rl {
namespace {

// docs/agents.md tabulates every setting of every preset with its source; the
// table is read back here and must agree with agent_setting_rows(), the code's
// one source of truth, row for row (a setting missing from the table fails too).
TEST(AgentFidelity, DocsTableAgreesWithTheSettingsInCode) {
  register_builtins();
  const std::string path = std::string(AWARE_SOURCE_DIR) + "/docs/agents.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  // agent -> key -> {paper, default}
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> table;
  std::string agent, line;
  auto trim = [](std::string s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '`')) s.erase(s.begin());
    while (!s.empty() && (s.back() == ' ' || s.back() == '`')) s.pop_back();
    return s;
  };
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      agent.clear();
      for (const char* a : {"placeto", "hierarchical", "aware", "aware-guided"})
        if (line.find(std::string("(`") + a + "`)") != std::string::npos) agent = a;
      continue;
    }
    if (agent.empty() || line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(trim(cell));
    ASSERT_GE(cells.size(), 3u) << line;
    table[agent][cells[0]] = {cells[1], cells[2]};
  }
  // aware-guided (ours alone) tabulates `| setting | ours | note |` for the
  // settings that are its own; every other one must be Aware's default.
  {
    const auto aware_rows = agent_setting_rows("aware", "default");
    for (const SettingRow& row : agent_setting_rows("aware-guided", "default")) {
      const auto it = table["aware-guided"].find(row.key);
      if (it != table["aware-guided"].end()) {
        EXPECT_EQ(it->second.first, row.value) << "aware-guided " << row.key;
        continue;
      }
      const auto same = std::find_if(aware_rows.begin(), aware_rows.end(),
                                     [&](const SettingRow& r) { return r.key == row.key; });
      if (same == aware_rows.end() || same->value != row.value)
        ADD_FAILURE() << "docs/agents.md has no aware-guided row for `" << row.key << "` (" << row.value
                      << "), which is not Aware's default";
    }
    EXPECT_GE(table["aware-guided"].size(), 5u) << "the guided hybrid's own settings are tabulated";
  }
  for (const char* a : {"placeto", "hierarchical", "aware"}) {
    const auto paper = agent_setting_rows(a, "paper");
    const auto ours = agent_setting_rows(a, "default");
    ASSERT_EQ(paper.size(), ours.size());
    for (size_t i = 0; i < paper.size(); ++i) {
      const auto it = table[a].find(paper[i].key);
      if (it == table[a].end()) {
        ADD_FAILURE() << "docs/agents.md has no row for " << a << "'s `" << paper[i].key << "`: | `"
                      << paper[i].key << "` | " << paper[i].value << " | " << ours[i].value << " | ... |";
        continue;
      }
      EXPECT_EQ(it->second.first, paper[i].value) << a << " " << paper[i].key << " (paper)";
      EXPECT_EQ(it->second.second, ours[i].value) << a << " " << paper[i].key << " (default)";
    }
  }
}

}  // namespace
}  // namespace aware::rl

namespace aware::rl {
namespace {

// PPO's later epochs recompute an update's log-probabilities: Aware does it for
// all its episodes in one stacked pass per chunk, the same values as one by one.
TEST(AgentFidelity, AwareBatchedReplayIsTheOneByOneReplay) {
  register_builtins();
  const OpGraph g = two_chains_graph(6);
  const Cluster c = star_cluster(3);
  torch::manual_seed(11);
  auto agent = AgentRegistry::instance().create("aware", {{"fusion", "off"}}, 3);
  agent->prepare(g, c);
  AnalyticSimulator sim;
  PlacementEnv env(g, c, sim, PenaltyKind::kPlacetoMemory, 0, 0, nullptr);
  SampleRng rng(3);
  std::vector<Episode> batch = agent->run_episodes(env, rng, 5);
  ASSERT_EQ(batch.size(), 5u);
  std::vector<Episode> one_by_one = batch;
  agent->replay_all(batch);
  for (Episode& e : one_by_one) agent->replay(e);
  for (size_t e = 0; e < batch.size(); ++e) {
    EXPECT_TRUE(torch::allclose(batch[e].steps[0].decision_log_probs, one_by_one[e].steps[0].decision_log_probs,
                                1e-5, 1e-5))
        << "episode " << e;
    EXPECT_NEAR(batch[e].steps[0].entropy.item<double>(), one_by_one[e].steps[0].entropy.item<double>(), 1e-4);
  }
}

}  // namespace
}  // namespace aware::rl

namespace aware::rl {
namespace {

// Part 2's footing: budgets in complete placements sampled (episodes). Aware's
// episode is one placement; the last update plays only what is left.
TEST(AgentFidelity, AnEpisodeBudgetPlaysExactlyThatManyEpisodes) {
  register_builtins();
  const OpGraph g = testing::two_chains_graph(4);
  const Cluster c = testing::star_cluster(2);
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_episodes = 40;
  t.episodes_per_update = 16;
  t.seed = 2;
  const TrainResult r = train_agent("aware", g, c, sim, t);
  EXPECT_EQ(r.episodes, 40);
  EXPECT_EQ(r.updates, 3);  // 16 + 16 + 8
  // One evaluation per episode, the reference state's and the greedy episode's.
  EXPECT_EQ(r.evaluations - r.greedy_evaluations, 40 + 1);
  // Data-parallel on two worker threads: the job's episodes, split.
  const TrainResult w = train_agent_workers("aware", g, c, sim, t, 2);
  EXPECT_EQ(w.episodes, 40);
  t.budget_episodes = -1;
  EXPECT_THROW(train_agent("aware", g, c, sim, t), ConfigError);
}

// Placeto's per-node episode (chunk=1, evaluate=step) evaluates after every
// node's step: an episode of a 6-op graph is its start and 6 evaluations.
TEST(AgentFidelity, APlacetoEpisodeCostsOneEvaluationPerNode) {
  register_builtins();
  const OpGraph g = testing::two_chains_graph(3);
  const Cluster c = testing::star_cluster(2);
  AnalyticSimulator sim;
  TrainOptions t;
  t.budget_episodes = 3;
  t.preset = "paper";
  t.seed = 5;
  const TrainResult r = train_agent("placeto", g, c, sim, t);
  EXPECT_EQ(r.episodes, 3);
  EXPECT_EQ(r.evaluations - r.greedy_evaluations, 3 * (1 + g.num_ops()));
}

}  // namespace
}  // namespace aware::rl
