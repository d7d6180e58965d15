// The learned agents: network shapes, gradient flow, policy files, checkpoints,
// and that each agent really learns a placement whose optimum is known.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agents/rl/agent.h"
#include "agents/rl/networks.h"
#include "agents/rl/register.h"
#include "agents/rl/trainer.h"
#include "core/errors.h"
#include "core/placer.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

namespace fs = std::filesystem;
using testing::diamond_graph;
using testing::star_cluster;
using testing::two_chains_graph;

std::string temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("aware_rl_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::vector<int> row(const torch::Tensor& mask) {
  std::vector<int> out;
  for (int64_t j = 0; j < mask.size(0); ++j)
    if (mask[j].item<float>() > 0) out.push_back(static_cast<int>(j));
  return out;
}

TEST(PlacetoNet, AncestorDescendantParallelMasksOnADiamond) {
  // a -> {b, c} -> d
  const OpGraph g = diamond_graph();
  const PlacetoGraphTensors t = placeto_graph_tensors(g);
  const int b = g.find("b"), a = g.find("a"), c = g.find("c"), d = g.find("d");
  const PoolMasks m = placeto_pool_masks(t, torch::tensor(std::vector<int64_t>{b, a}));
  EXPECT_EQ(row(m.ancestors[0]), std::vector<int>{a});
  EXPECT_EQ(row(m.descendants[0]), std::vector<int>{d});
  EXPECT_EQ(row(m.parallel[0]), std::vector<int>{c});
  EXPECT_TRUE(row(m.ancestors[1]).empty());
  EXPECT_EQ(row(m.descendants[1]), (std::vector<int>{b, c, d}));
  EXPECT_TRUE(row(m.parallel[1]).empty());
  // Rows are means: a's three descendants weigh 1/3 each.
  EXPECT_FLOAT_EQ(m.descendants[1][d].item<float>(), 1.0f / 3);
}

TEST(PlacetoNet, OutputShape) {
  torch::manual_seed(1);
  const OpGraph g = diamond_graph();
  const PlacetoGraphTensors t = placeto_graph_tensors(g);
  PlacetoNet net(kPlacetoBaseFeatures + 3, 8, 2, 3);
  const torch::Tensor logits =
      net->forward(torch::rand({4, kPlacetoBaseFeatures + 3}), t, torch::tensor(std::vector<int64_t>{1, 2}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(net->embed(torch::rand({4, kPlacetoBaseFeatures + 3}), t).sizes(),
            (std::vector<int64_t>{4, 16}));
}

TEST(HierarchicalNets, GrouperAndPlacerShapes) {
  torch::manual_seed(1);
  Grouper grouper(kGrouperFeatures, 16, 8);
  EXPECT_EQ(grouper->forward(torch::rand({10, kGrouperFeatures})).sizes(), (std::vector<int64_t>{10, 8}));
  GroupPlacer placer(group_embedding_dim(8), 12, 4, 5.0, 1.0);
  SampleRng rng(3);
  const DecodeResult r = placer->decode(torch::rand({3, 8, group_embedding_dim(8)}), &rng, false);
  EXPECT_EQ(r.logits.sizes(), (std::vector<int64_t>{3, 8, 4}));
  ASSERT_EQ(r.actions.size(), 3u);
  for (const auto& a : r.actions) {
    ASSERT_EQ(a.size(), 8u);
    for (int64_t d : a) EXPECT_TRUE(d >= 0 && d < 4);
  }
  // Logits are squashed into [-5, 5].
  EXPECT_LE(r.logits.abs().max().item<float>(), 5.0f + 1e-5f);
  // Forced decoding reproduces the sampled logits.
  const DecodeResult f = placer->decode(torch::rand({3, 8, group_embedding_dim(8)}) * 0 +
                                            torch::ones({3, 8, group_embedding_dim(8)}),
                                        nullptr, false, &r.actions);
  EXPECT_EQ(f.actions, r.actions);
}

class AgentTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AgentTest, GradientReachesEveryParameter) {
  const OpGraph g = two_chains_graph(4);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  torch::manual_seed(3);
  Options config;
  if (GetParam() == "hierarchical") config["groups"] = "4";
  auto agent = AgentRegistry::instance().create(GetParam(), config, 2);
  agent->prepare(g, c);
  PlacementEnv env(g, c, sim, agent->defaults().penalty, 1000, 0, nullptr);
  SampleRng rng(5);
  Episode ep = agent->run_episode(env, rng, false);
  ASSERT_FALSE(ep.steps.empty());
  torch::Tensor loss = torch::zeros({});
  double sign = 1;
  for (const auto& s : ep.steps) {
    loss = loss - sign * s.log_prob - 0.1 * s.entropy;
    sign = -sign * 1.5;
  }
  loss.backward();
  int without = 0;
  for (const auto& p : agent->module().named_parameters()) {
    if (!p.value().grad().defined() || p.value().grad().abs().sum().item<double>() == 0) {
      ADD_FAILURE() << "no gradient reaches " << p.key();
      ++without;
    }
  }
  EXPECT_EQ(without, 0);
}

TEST_P(AgentTest, SaveLoadGivesIdenticalOutputs) {
  const std::string dir = temp_dir("saveload_" + GetParam());
  const OpGraph g = two_chains_graph(4);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  Options config;
  if (GetParam() == "hierarchical") config["groups"] = "4";
  torch::manual_seed(11);
  auto a = AgentRegistry::instance().create(GetParam(), config, 2);
  torch::manual_seed(12);
  auto b = AgentRegistry::instance().create(GetParam(), config, 2);
  a->prepare(g, c);
  b->prepare(g, c);
  const std::string path = dir + "/policy.pt";
  save_policy(*a, a->module(), path);
  load_policy(*b, path);
  auto pa = a->module().named_parameters();
  auto pb = b->module().named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << p.key();
  PlacementEnv ea(g, c, sim, PenaltyKind::kFixed100s, 100, 0, nullptr);
  PlacementEnv eb(g, c, sim, PenaltyKind::kFixed100s, 100, 0, nullptr);
  SampleRng ra(1), rb(1);
  const Episode xa = a->run_episode(ea, ra, true);
  const Episode xb = b->run_episode(eb, rb, true);
  ASSERT_EQ(xa.steps.size(), xb.steps.size());
  for (size_t i = 0; i < xa.steps.size(); ++i)
    EXPECT_FLOAT_EQ(xa.steps[i].log_prob.item<float>(), xb.steps[i].log_prob.item<float>());
  EXPECT_EQ(ea.best_placement(), eb.best_placement());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Agents, AgentTest, ::testing::Values("placeto", "hierarchical"));

TrainOptions small_run(long long evals, std::uint64_t seed = 1) {
  TrainOptions t;
  t.budget_evals = evals;
  t.seed = seed;
  return t;
}

TEST(PolicyFile, WrongAgentOrDeviceCountIsRefused) {
  const std::string dir = temp_dir("policy");
  const OpGraph g = two_chains_graph(3);
  const Cluster c2 = star_cluster(2), c3 = star_cluster(3);
  AnalyticSimulator sim;
  TrainOptions t = small_run(20);
  t.save_policy = dir + "/placeto.pt";
  train_agent("placeto", g, c2, sim, t);
  EXPECT_EQ(read_policy_info(t.save_policy).agent, "placeto");
  EXPECT_EQ(read_policy_info(t.save_policy).devices, 2);
  TrainOptions u = small_run(20);
  u.init_policy = t.save_policy;
  EXPECT_THROW(train_agent("hierarchical", g, c2, sim, u), ConfigError);
  try {
    train_agent("placeto", g, c3, sim, u);
    ADD_FAILURE() << "a 2-device policy loaded on 3 devices";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("2 devices"), std::string::npos) << e.what();
  }
  // A policy generalises to another graph with the same devices.
  EXPECT_NO_THROW(train_agent("placeto", diamond_graph(), c2, sim, u));
  // Garbage is a ParseError.
  std::ofstream(dir + "/junk.pt") << "not a torch archive";
  u.init_policy = dir + "/junk.pt";
  EXPECT_THROW(train_agent("placeto", g, c2, sim, u), ParseError);
  fs::remove_all(dir);
}

TEST(Trainer, ZeroBudgetIsRefused) {
  AnalyticSimulator sim;
  EXPECT_THROW(train_agent("placeto", diamond_graph(), star_cluster(2), sim, small_run(0)), ConfigError);
  EXPECT_THROW(train_agent("nope", diamond_graph(), star_cluster(2), sim, small_run(10)), ConfigError);
}

TEST(Checkpoint, CorruptCheckpointIsAnErrorAndNothingIsOverwritten) {
  const std::string dir = temp_dir("corrupt");
  const std::string file = dir + "/checkpoint.pt";
  std::ofstream(file) << "garbage";
  AnalyticSimulator sim;
  TrainOptions t = small_run(20);
  t.resume_dir = dir;
  t.curve_csv = dir + "/curve.csv";
  EXPECT_THROW(train_agent("placeto", two_chains_graph(3), star_cluster(2), sim, t), ParseError);
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "garbage");
  EXPECT_FALSE(fs::exists(dir + "/curve.csv"));
  fs::remove_all(dir);
}

TEST(Checkpoint, ResumeContinuesCounters) {
  const std::string dir = temp_dir("resume");
  const OpGraph g = two_chains_graph(3);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  TrainOptions t = small_run(40, 5);
  t.resume_dir = dir;
  const TrainResult first = train_agent("placeto", g, c, sim, t);
  EXPECT_FALSE(first.resumed);
  EXPECT_GE(first.evaluations, 40);
  ASSERT_TRUE(fs::exists(dir + "/checkpoint.pt"));
  t.budget_evals = 80;
  const TrainResult second = train_agent("placeto", g, c, sim, t);
  EXPECT_TRUE(second.resumed);
  EXPECT_GE(second.evaluations, 80);
  EXPECT_GT(second.updates, first.updates);
  EXPECT_GE(second.episodes, first.episodes);
  ASSERT_GT(second.curve.size(), first.curve.size());
  for (size_t i = 0; i < first.curve.size(); ++i)
    EXPECT_EQ(second.curve[i].evaluations, first.curve[i].evaluations);
  EXPECT_LE(second.best_step_us, first.best_step_us);
  // Another agent's checkpoint is refused with a message.
  EXPECT_THROW(train_agent("hierarchical", g, c, sim, t), ConfigError);
  fs::remove_all(dir);
}

TEST(Placers, RegisteredUnderTheirNames) {
  register_rl_agents();
  EXPECT_TRUE(PlacerRegistry::instance().has("placeto"));
  EXPECT_TRUE(PlacerRegistry::instance().has("hierarchical"));
  auto p = PlacerRegistry::instance().create("placeto");
  AnalyticSimulator sim;
  PlaceContext ctx;
  ctx.evaluator = &sim;
  ctx.budget_evals = 30;
  ctx.options["chunk"] = "2";
  const OpGraph g = two_chains_graph(3);
  const Placement pl = p->place(g, star_cluster(2), ctx);
  EXPECT_EQ(pl.size(), g.num_ops());
}

// Two heavy independent chains on two devices: the best placement puts one chain
// on each device (~6 ms instead of 12 ms on one device).
class LearnsTwoChains : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(LearnsTwoChains, FindsOneChainPerDevice) {
  const auto [agent, seed] = GetParam();
  const OpGraph g = two_chains_graph(6, 0.5e6);
  const Cluster c = star_cluster(2);
  AnalyticSimulator sim;
  const double single = sim.evaluate(g, c, single_device_placement(g, 0)).step_time_us;
  Placement best(std::vector<int>(g.num_ops(), 0));
  for (int i = 6; i < 12; ++i) best[i] = 1;
  const double optimum = sim.evaluate(g, c, best).step_time_us;
  ASSERT_LT(optimum, 0.55 * single);
  TrainOptions t = small_run(agent == "placeto" ? 2000 : 1000, seed);
  if (const char* lr = std::getenv("AWARE_RL_TEST_LR")) t.learning_rate = std::atof(lr);
  if (const char* e = std::getenv("AWARE_RL_TEST_EPU")) t.episodes_per_update = std::atoi(e);
  if (agent == "hierarchical") t.agent_options["groups"] = "8";
  const TrainResult r = train_agent(agent, g, c, sim, t);
  if (std::getenv("AWARE_RL_TEST_VERBOSE") != nullptr)
    for (const auto& p : r.curve)
      std::printf("%s %d: evals %lld mean %.0f best %.0f entropy %.3f loss %.4f\n", agent.c_str(), seed,
                  p.evaluations, p.mean_step_us, p.best_step_us, p.entropy, p.loss);
  // Within 10% of one chain per device (half of one device's time). On this
  // symmetric problem neither agent's *sampled* mean improves reliably within a
  // CI budget (see agents/rl/README.md, "Known limits"); the best-ever does.
  EXPECT_LE(r.best_step_us, 1.10 * optimum) << agent << " seed " << seed;
  EXPECT_LE(r.best_step_us, 0.6 * single) << agent << " seed " << seed;
  ASSERT_GE(r.curve.size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, LearnsTwoChains,
                         ::testing::Combine(::testing::Values("placeto", "hierarchical"),
                                            ::testing::Values(1, 2, 3)));

}  // namespace
}  // namespace aware::rl
