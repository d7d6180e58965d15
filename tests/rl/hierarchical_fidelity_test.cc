// Hierarchical against its paper and TensorFlow's controller (issue: faithful
// agents; the AgentFidelity suite continues agent_fidelity_test.cc): its
// C·tanh(x/T), the paper preset's k, C and T, the controller's networks,
// encoder order and logit noise, and our exploration floor.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agents/rl/agent.h"
#include "agents/rl/networks.h"
#include "agents/rl/settings.h"
#include "agents/rl/trainer.h"
#include "builtins/builtins.h"
#include "sim/analytic/analytic_simulator.h"
#include "tests/rl/rl_test_graphs.h"

namespace aware::rl {
namespace {

using testing::star_cluster;
using testing::two_chains_graph;

// Defect 5: Hierarchical squashed C·tanh(x)/T, whose bound is C/T; the paper
// and hierarchical_controller.py:905-907 have C·tanh(x/T), bound C.
TEST(AgentFidelity, HierarchicalSquashesWithTheTemperatureInsideTheTanh) {
  torch::manual_seed(1);
  GroupPlacer placer(6, 8, 3, /*tanh=*/5.0, /*temperature=*/10.0);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : placer->parameters()) p.mul_(200.0);  // raw logits in the hundreds
  }
  const DecodeResult d = placer->decode(torch::randn({2, 4, 6}), nullptr, true);
  const double largest = d.logits.abs().max().item<double>();
  EXPECT_LE(largest, 5.0 + 1e-5);
  EXPECT_GT(largest, 0.5 + 1e-3);  // beyond C/T: only C·tanh(x/T) reaches it
}

// The paper's k = 4 placer samples per grouping, its C = 5, T = 10, and the
// controller's noise until step 750.
TEST(AgentFidelity, HierarchicalPaperPresetSamplesFourPlacementsPerGrouping) {
  register_builtins();
  const AgentSettings paper = agent_settings("hierarchical", "paper");
  EXPECT_EQ(paper.agent_options.at("samples"), "4");
  EXPECT_EQ(paper.agent_options.at("tanh"), "5");
  EXPECT_EQ(paper.agent_options.at("temperature"), "10");
  EXPECT_DOUBLE_EQ(paper.ema_start, -10.0);
  const OpGraph g = two_chains_graph(4);
  const Cluster c = star_cluster(2);
  Options config = paper.agent_options;
  config["groups"] = "4";
  config["hidden"] = "16";
  auto agent = AgentRegistry::instance().create("hierarchical", config, 2);
  agent->prepare(g, c);
  AnalyticSimulator sim;
  PlacementEnv env(g, c, sim, paper.penalty, 100, 0, nullptr);
  SampleRng rng(3);
  const Episode ep = agent->run_episode(env, rng, false);
  EXPECT_EQ(ep.steps.size(), 4u);
  EXPECT_EQ(env.evaluations(), 4);
  for (const Step& s : ep.steps) EXPECT_EQ(s.decision_log_probs.numel(), s.decisions);
}

// The logit noise (hierarchical_controller.py:908-918): at the decoder's first
// step both runs read the same inputs, so the noisy logits differ from the clean
// ones by the noise alone, of std noise × the logits' root mean square.
TEST(AgentFidelity, HierarchicalLogitNoiseHasItsScale) {
  torch::manual_seed(4);
  GroupPlacer placer(6, 8, 4, 5.0, 10.0);
  const torch::Tensor emb = torch::randn({64, 3, 6});
  SampleRng a(9), b(9);
  const DecodeResult clean = placer->decode(emb, &a, false, nullptr, 0.0);
  const DecodeResult noisy = placer->decode(emb, &b, false, nullptr, 3.0);
  const torch::Tensor first = clean.logits.select(1, 0), diff = noisy.logits.select(1, 0) - first;
  const double ratio = diff.pow(2).mean().sqrt().item<double>() / first.pow(2).mean().sqrt().item<double>();
  EXPECT_GT(ratio, 3.0 * 0.8);
  EXPECT_LT(ratio, 3.0 * 1.2);
  EXPECT_LT(std::abs(diff.mean().item<double>()), 0.3 * ratio * first.pow(2).mean().sqrt().item<double>());
}

// The paper preset's networks are the controller's (net=paper): a grouper of two
// bias-free matrices with nothing between them (so linear in its input), and a
// placer whose matrices have the code's shapes, whose forget biases start at 1,
// whose cell is an LSTM, whose squash bounds its logits by C, and whose replay
// scores the placements it sampled with the logits it sampled them from.
TEST(AgentFidelity, HierarchicalPaperNetworksAreTheControllers) {
  register_builtins();
  torch::manual_seed(6);
  Options config = agent_settings("hierarchical", "paper").agent_options;
  EXPECT_EQ(config.at("net"), "paper");
  EXPECT_EQ(config.at("hidden"), "512");
  config["groups"] = "5";
  config["hidden"] = "16";
  auto agent = AgentRegistry::instance().create("hierarchical", config, 3);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : agent->module().named_parameters()) shapes[item.key()] = item.value().sizes().vec();
  EXPECT_EQ(shapes.count("grouper.l1.bias"), 0u);
  EXPECT_EQ(shapes.count("grouper.l2.bias"), 0u);
  const int64_t E = group_embedding_dim(5) - 1;  // deviations=off: no "work before" column
  EXPECT_EQ(shapes["placer.encoder_forward"], (std::vector<int64_t>{E + 8, 32}));
  EXPECT_EQ(shapes["placer.encoder_backward"], (std::vector<int64_t>{E + 8, 32}));
  EXPECT_EQ(shapes["placer.decoder"], (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(shapes["placer.device_embeddings"], (std::vector<int64_t>{3, 16}));
  EXPECT_EQ(shapes["placer.attn_w_1"], (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(shapes["placer.out"], (std::vector<int64_t>{32, 3}));
  for (const auto& item : agent->module().named_parameters())
    if (item.key().find("forget_bias") != std::string::npos) EXPECT_EQ(item.value().item<float>(), 1.0f);

  Grouper linear(7, 6, 4, /*linear=*/true);
  const torch::Tensor x = torch::randn({3, 7}), y = torch::randn({3, 7});
  EXPECT_TRUE(torch::allclose(linear->forward(x + 2 * y), linear->forward(x) + 2 * linear->forward(y), 1e-4, 1e-5));
  Grouper ours(7, 6, 4);
  EXPECT_FALSE(torch::allclose(ours->forward(-x), -ours->forward(x), 1e-4, 1e-5));

  // The cell against torch's LSTMCell with the same weights: the code orders the
  // gates input, forget, output, candidate; torch input, forget, candidate, output,
  // and adds the forget bias as a bias.
  const int64_t in = 5, H = 4;
  const torch::Tensor w = torch::randn({in + H, 4 * H}), fb = torch::full({1}, 0.7);
  torch::nn::LSTMCell ref(in, H);
  {
    torch::NoGradGuard no_grad;
    const auto g = w.t().chunk(4, 0);  // each [H x (in + H)]
    const torch::Tensor torch_order = torch::cat({g[0], g[1], g[3], g[2]});
    ref->weight_ih.copy_(torch_order.narrow(1, 0, in));
    ref->weight_hh.copy_(torch_order.narrow(1, in, H));
    ref->bias_ih.zero_();
    ref->bias_hh.zero_();
    ref->bias_ih.narrow(0, H, H).fill_(0.7);
  }
  const torch::Tensor xi = torch::randn({2, in}), c0 = torch::randn({2, H}), h0 = torch::randn({2, H});
  const auto [c1, h1] = GroupPlacerPaperImpl::cell(xi, c0, h0, w, fb);
  const auto [h_ref, c_ref] = ref->forward(xi, std::make_tuple(h0, c0));
  EXPECT_TRUE(torch::allclose(c1, c_ref, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(h1, h_ref, 1e-5, 1e-6));

  GroupPlacerPaperImpl placer(6, 8, 4, /*tanh=*/5.0, /*temperature=*/10.0);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : placer.parameters()) p.mul_(200.0);
  }
  SampleRng rng(2);
  const torch::Tensor emb = torch::randn({3, 5, 6});
  const DecodeResult sampled = placer.decode(emb, &rng, false);
  EXPECT_LE(sampled.logits.abs().max().item<double>(), 5.0 + 1e-5);
  EXPECT_GT(sampled.logits.abs().max().item<double>(), 0.5 + 1e-3);
  const DecodeResult scored = placer.decode(emb, nullptr, false, &sampled.actions);
  EXPECT_EQ(scored.actions, sampled.actions);
  EXPECT_TRUE(torch::allclose(scored.logits, sampled.logits, 1e-5, 1e-6));
}

// The controller's encoder pairs forward step i with backward step i (the state
// after groups G-1 ... G-1-i), not with group i's own backward state: the first
// decoder step's logits, rebuilt here from the cell and the module's weights with
// that pairing, equal decode()'s, and differ with the aligned one.
TEST(AgentFidelity, HierarchicalPaperEncoderPairsStepsAsTheController) {
  torch::manual_seed(8);
  GroupPlacerPaperImpl placer(3, 4, 2, /*tanh=*/5.0, /*temperature=*/1.0);
  std::map<std::string, torch::Tensor> w;
  for (const auto& item : placer.named_parameters()) w[item.key()] = item.value().detach();
  const int64_t G = 3;
  const torch::Tensor emb = torch::randn({1, G, 3});
  const DecodeResult d = placer.decode(emb, nullptr, /*greedy=*/true);
  auto first_logits = [&](bool controller_pairing) {
    torch::Tensor cf = torch::zeros({1, 2}), hf = torch::zeros({1, 2}), cb = cf, hb = hf;
    std::vector<torch::Tensor> fw, bw(G);
    for (int64_t t = 0; t < G; ++t) {
      std::tie(cf, hf) = GroupPlacerPaperImpl::cell(emb.select(1, t), cf, hf, w["encoder_forward"],
                                                    w["encoder_forget_bias"]);
      std::tie(cb, hb) = GroupPlacerPaperImpl::cell(emb.select(1, G - 1 - t), cb, hb, w["encoder_backward"],
                                                    w["encoder_forget_bias"]);
      fw.push_back(hf);
      bw[controller_pairing ? t : G - 1 - t] = hb;
    }
    std::vector<torch::Tensor> rows;
    for (int64_t t = 0; t < G; ++t) rows.push_back(torch::cat({fw[t], bw[t]}, 1));
    const torch::Tensor memory = torch::stack(rows, 1).matmul(w["attn_w_1"]);
    auto [c, h] = GroupPlacerPaperImpl::cell(w["device_go_embedding"], torch::cat({cf, cb}, 1),
                                             torch::cat({hf, hb}, 1), w["decoder"], w["decoder_forget_bias"]);
    const torch::Tensor score = torch::tanh(h.matmul(w["attn_w_2"]).unsqueeze(1) + memory).matmul(w["attn_v"]);
    const torch::Tensor weights = torch::softmax(score.squeeze(2), 1);
    const torch::Tensor context = (memory * weights.unsqueeze(2)).sum(1);
    return 5.0 * torch::tanh(torch::cat({h, context}, 1).matmul(w["out"]));
  };
  const torch::Tensor decoded = d.logits.select(1, 0).detach();
  EXPECT_TRUE(torch::allclose(decoded, first_logits(true), 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(decoded, first_logits(false), 1e-5, 1e-6));
}

// The controller's noise scale: each placer sample's own root mean square (it
// draws one placement at a time), and a tensor the loss's gradient passes through.
TEST(AgentFidelity, HierarchicalNoiseScaleIsEachSamplesAndCarriesGradient) {
  const torch::Tensor logits =
      torch::tensor({{1.0f, -1.0f, 1.0f}, {10.0f, -10.0f, 10.0f}}).requires_grad_(true);
  SampleRng a(5), b(5);
  const torch::Tensor per_row = logit_noise(logits, 0.5, a, /*per_row=*/true);
  const torch::Tensor pooled = logit_noise(logits, 0.5, b, /*per_row=*/false);
  // The same draws, scaled by row 0's root mean square (1), row 1's (10), or the
  // pooled one (sqrt((3 + 300) / 6)).
  const double all = std::sqrt(303.0 / 6);
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_NEAR(per_row[0][j].item<double>(), pooled[0][j].item<double>() / all, 1e-5);
    EXPECT_NEAR(per_row[1][j].item<double>(), 10 * pooled[1][j].item<double>() / all, 1e-4);
  }
  // d/dx_j of eps_j' · 0.5 · rms(row) summed over the row: 0.5 · (Σ eps) · x_j / (3 rms).
  per_row.sum().backward();
  for (int64_t r = 0; r < 2; ++r) {
    const double rms = r == 0 ? 1.0 : 10.0;
    const double eps_sum = per_row[r].sum().item<double>() / (0.5 * rms);
    for (int64_t j = 0; j < 3; ++j) {
      const double x = logits[r][j].item<double>();
      EXPECT_NEAR(logits.grad()[r][j].item<double>(), 0.5 * eps_sum * x / (3 * rms), 1e-4) << r << "," << j;
    }
  }
}

// ... on while the update count is at most noise_until, and nothing after.
TEST(AgentFidelity, HierarchicalLogitNoiseStopsAfterItsStep) {
  register_builtins();
  const OpGraph g = two_chains_graph(6);
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  auto sample = [&](const std::string& noise, long long update) {
    torch::manual_seed(2);
    Options config = {{"groups", "6"}, {"hidden", "8"}, {"samples", "2"}, {"noise", noise},
                      {"noise_until", "10"}, {"deviations", "off"}, {"tanh", "5"}, {"temperature", "10"}};
    auto agent = AgentRegistry::instance().create("hierarchical", config, 3);
    agent->prepare(g, c);
    agent->on_update(update);
    PlacementEnv env(g, c, sim, PenaltyKind::kFixed100s, 0, 0, nullptr);
    SampleRng rng(9);
    const Episode ep = agent->run_episode(env, rng, false);
    return ep.steps[0].log_prob.item<double>();
  };
  EXPECT_NE(sample("3", 10), sample("0", 10));
  EXPECT_EQ(sample("3", 11), sample("0", 11));  // past noise_until: the same episode
}

// Hierarchical's exploration floor (ours, option explore): with weights large
// enough to saturate the squash, every sampled decision still has at least
// ε/D (placer) or ε/G (grouper) probability, and the replay scores the same
// mixture the episode was sampled from.
TEST(AgentFidelity, HierarchicalExplorationFloorKeepsEveryDecisionSampleable) {
  register_builtins();
  const OpGraph g = two_chains_graph(6);
  const Cluster c = star_cluster(3);
  AnalyticSimulator sim;
  const double eps = 0.1;
  torch::manual_seed(5);
  Options config = {{"groups", "6"}, {"hidden", "8"}, {"samples", "8"}, {"deviations", "off"},
                    {"explore", "0.1"}};
  auto agent = AgentRegistry::instance().create("hierarchical", config, 3);
  agent->prepare(g, c);
  {
    torch::NoGradGuard no_grad;
    for (auto& p : agent->module().parameters()) p.mul_(50.0);
  }
  PlacementEnv env(g, c, sim, PenaltyKind::kFixed100s, 0, 0, nullptr);
  SampleRng rng(1);
  Episode ep = agent->run_episode(env, rng, false);
  ASSERT_EQ(ep.steps.size(), 8u);
  std::vector<torch::Tensor> sampled;
  for (const Step& s : ep.steps) {
    const torch::Tensor placer = s.decision_log_probs.narrow(0, 0, 6);
    const torch::Tensor grouper = s.decision_log_probs.narrow(0, 6, s.decisions - 6);
    EXPECT_GE(placer.min().item<double>(), std::log(eps / 3) - 1e-5);
    EXPECT_GE(grouper.min().item<double>(), std::log(eps / 6) - 1e-5);
    // ... and none above 1 − ε + ε/D: without the floor the saturated policy
    // gives its likeliest action 1 − 2e⁻¹⁰ and more (log-probability ≈ 0).
    EXPECT_LE(placer.max().item<double>(), std::log(1 - eps + eps / 3) + 1e-5);
    EXPECT_LE(grouper.max().item<double>(), std::log(1 - eps + eps / 6) + 1e-5);
    sampled.push_back(s.decision_log_probs.detach().clone());
  }
  agent->replay(ep);
  for (size_t b = 0; b < ep.steps.size(); ++b)
    EXPECT_TRUE(torch::allclose(ep.steps[b].decision_log_probs, sampled[b], 1e-5, 1e-6)) << "sample " << b;
}

}  // namespace
}  // namespace aware::rl
