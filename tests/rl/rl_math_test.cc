// Hand-computed policy-gradient arithmetic (no LibTorch needed) and the penalties.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "agents/rl/elite.h"
#include "agents/rl/entropy_floor.h"
#include "agents/rl/env.h"
#include "agents/rl/trainer.h"
#include "core/errors.h"
#include "core/placement.h"
#include "tests/test_graphs.h"

namespace aware::rl {
namespace {

TEST(Returns, RewardToGoUndiscounted) {
  const std::vector<double> r = reward_to_go({1, 2, 3});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0], 6);
  EXPECT_DOUBLE_EQ(r[1], 5);
  EXPECT_DOUBLE_EQ(r[2], 3);
}

TEST(Returns, RewardToGoDiscounted) {
  const std::vector<double> r = reward_to_go({1, 2, 3}, 0.5);
  EXPECT_DOUBLE_EQ(r[0], 1 + 0.5 * 2 + 0.25 * 3);
  EXPECT_DOUBLE_EQ(r[1], 2 + 0.5 * 3);
  EXPECT_DOUBLE_EQ(r[2], 3);
}

// The elite step's window (elite.h): the last `capacity` samples, the fastest
// ceil(fraction x size) of them fastest first, the earlier sampled first on ties.
TEST(EliteWindow, KeepsTheLastSamplesAndPicksTheFastestCeilFraction) {
  EliteWindow w(4);
  const auto p = [](int d) { return Placement(std::vector<int>{d, d}); };
  const auto devices = [](const std::vector<const Placement*>& e) {
    std::vector<int> out;
    for (const Placement* x : e) out.push_back((*x)[0]);
    return out;
  };
  EXPECT_TRUE(w.elite(0.5).empty());
  w.add(p(0), 50);
  w.add(p(1), 20);
  w.add(p(2), 40);
  w.add(Placement(), 1);                                     // no placement: not a sample
  w.add(p(3), std::numeric_limits<double>::infinity());       // an infinite step: not kept
  EXPECT_EQ(w.size(), 3u);
  EXPECT_EQ(devices(w.elite(0.34)), (std::vector<int>{1, 2})) << "ceil(0.34 x 3) = 2";
  EXPECT_EQ(devices(w.elite(1.0 / 3)), (std::vector<int>{1})) << "exactly one third of 3 is 1";
  w.add(p(4), 20);  // ties with device 1, sampled later
  w.add(p(5), 10);  // the window holds 4: device 0's sample (the oldest) leaves
  EXPECT_EQ(w.size(), 4u);
  EXPECT_EQ(devices(w.elite(1)), (std::vector<int>{5, 1, 4, 2}));
  EXPECT_EQ(devices(w.elite(0.5)), (std::vector<int>{5, 1}));
  // The checkpoint's state brings back the same window, in order.
  EliteWindow back(4);
  back.restore(w.state());
  EXPECT_EQ(devices(back.elite(1)), devices(w.elite(1)));
  EXPECT_THROW(w.elite(0), ConfigError);
  EXPECT_THROW(w.elite(1.5), ConfigError);
  EXPECT_THROW(EliteWindow(0), ConfigError);
}

// The entropy floor's controller (entropy_floor.h), by hand: floor 0.5 of the
// first update's entropy 2.0 (target 1.0), step 0.5, until 0.5 of the budget.
// e = (1.0 - H) / 2.0; lambda <- clamp(lambda + 0.5 e, 0, 100); the weight is
// base + lambda + 10 max(e, 0).
TEST(EntropyFloor, DualAscentOnTheShortfallRelativeToTheStart) {
  ASSERT_EQ(EntropyFloor::kProportionalGain, 10.0);
  EntropyFloor f(0.5, 0.5, 0.5);
  EXPECT_DOUBLE_EQ(f.weight(0.01, 2.0, 0.0), 0.01) << "above the target: lambda stays at 0";
  EXPECT_DOUBLE_EQ(f.start(), 2.0);
  EXPECT_DOUBLE_EQ(f.weight(0.01, 0.2, 0.1), 0.01 + 0.2 + 10 * 0.4) << "e = 0.4, lambda 0.2";
  EXPECT_DOUBLE_EQ(f.weight(0.01, 0.6, 0.2), 0.01 + 0.3 + 10 * 0.2) << "e = 0.2, lambda + 0.1";
  EXPECT_DOUBLE_EQ(f.weight(0.01, 1.8, 0.3), 0.01 + 0.1) << "e = -0.4: lambda - 0.2, no proportional part";
  EXPECT_DOUBLE_EQ(f.weight(0.01, 2.0, 0.4), 0.01) << "lambda never below 0";
  EXPECT_DOUBLE_EQ(f.weight(0.01, 0.0, 0.45), 0.01 + 0.25 + 10 * 0.5);
  // The checkpoint's state resumes the same controller.
  EntropyFloor back(0.5, 0.5, 0.5);
  back.restore(f.state());
  EXPECT_DOUBLE_EQ(back.start(), 2.0);
  EXPECT_DOUBLE_EQ(back.multiplier(), 0.25);
  EXPECT_DOUBLE_EQ(back.weight(0.01, 0.0, 0.46), f.weight(0.01, 0.0, 0.46));
  // Past `until` the floor lets go: the weight is the base alone.
  EXPECT_DOUBLE_EQ(f.weight(0.01, 0.0, 0.5), 0.01);
  EXPECT_DOUBLE_EQ(f.multiplier(), 0.0);
  // The multiplier is bounded above.
  EntropyFloor hard(0.9, 1.0, 1e6);
  hard.weight(0, 1.0, 0);
  hard.weight(0, 0.0, 0.1);
  EXPECT_DOUBLE_EQ(hard.multiplier(), EntropyFloor::kMaxMultiplier);
  // Off (fraction 0) it is the base weight, whatever the entropy.
  EntropyFloor off;
  EXPECT_FALSE(off.active());
  EXPECT_DOUBLE_EQ(off.weight(0.3, 0.0, 0.1), 0.3);
  EXPECT_THROW(EntropyFloor(1.0, 0.5, 1), ConfigError);
  EXPECT_THROW(EntropyFloor(-0.1, 0.5, 1), ConfigError);
  EXPECT_THROW(EntropyFloor(0.2, 1.5, 1), ConfigError);
  EXPECT_THROW(EntropyFloor(0.2, 0.5, 0), ConfigError);
  // Several processes' controllers as one (a resume with another process
  // count): the mean start over those that have one, the mean multiplier.
  const nlohmann::json mean = EntropyFloor::mean_state(
      {{{"start", 2.0}, {"multiplier", 0.4}}, {{"start", 1.0}, {"multiplier", 0.2}}, {{"start", -1.0}, {"multiplier", 0.0}}});
  EXPECT_DOUBLE_EQ(mean.at("start").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(mean.at("multiplier").get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(EntropyFloor::mean_state({{{"start", -1.0}, {"multiplier", 0.0}}}).at("start").get<double>(), -1.0)
      << "none had started";
}

TEST(Baselines, PerStepMeanOverRecentEpisodes) {
  PerStepMeanBaseline b(2);
  EXPECT_EQ(b.values(3), (std::vector<double>{0, 0, 0}));
  b.add({6, 5, 3});
  b.add({2, 1});
  // Index 2 only exists in the first episode.
  EXPECT_EQ(b.values(3), (std::vector<double>{4, 3, 3}));
  b.add({0, 0, 0});  // window 2: the first episode drops out
  EXPECT_EQ(b.values(3), (std::vector<double>{1, 0.5, 0}));
}

// The trainer's last step on an update's advantages: Hierarchical's k samples of
// one grouping (one non-sequential episode of 3 steps) and a second grouping's 1
// are four samples for leave-one-out; a lone sample keeps the baseline's.
TEST(Baselines, FinishAdvantagesSplitsNonSequentialEpisodesIntoSamples) {
  std::vector<std::vector<double>> adv = {{9, 9, 9}, {9}};
  finish_advantages({{1, 2, 3}, {6}}, {false, false}, /*leave_one_out=*/true, /*standardize=*/false, adv);
  EXPECT_NEAR(adv[0][0], 1 - 11.0 / 3, 1e-12);
  EXPECT_NEAR(adv[0][2], 3 - 9.0 / 3, 1e-12);
  EXPECT_NEAR(adv[1][0], 6 - 2.0, 1e-12);
  // One sequential episode of two steps is one sample: alone, it keeps its advantages.
  std::vector<std::vector<double>> lone = {{0.5, -0.5}};
  finish_advantages({{4, 1}}, {true}, true, false, lone);
  EXPECT_EQ(lone, (std::vector<std::vector<double>>{{0.5, -0.5}}));
  // Standardised: zero mean, unit (population) deviation over the batch's steps.
  std::vector<std::vector<double>> st = {{1, 3}, {5}};
  finish_advantages({{1, 3}, {5}}, {true, true}, false, true, st);
  const double sd = std::sqrt(8.0 / 3);
  EXPECT_NEAR(st[0][0], -2 / sd, 1e-12);
  EXPECT_NEAR(st[1][0], 2 / sd, 1e-12);
}

TEST(Baselines, ReinforceAdvantagesOnATinyRewardList) {
  // Two episodes of rewards; advantages = reward-to-go minus per-step baseline.
  PerStepMeanBaseline b(10);
  const auto r1 = reward_to_go({1, -1, 2});  // 2, 1, 2
  const auto b1 = b.values(3);
  b.add(r1);
  const auto r2 = reward_to_go({0, 1, 0});  // 1, 1, 0
  const auto b2 = b.values(3);
  EXPECT_EQ(b1, (std::vector<double>{0, 0, 0}));
  EXPECT_DOUBLE_EQ(r2[0] - b2[0], 1 - 2);
  EXPECT_DOUBLE_EQ(r2[1] - b2[1], 1 - 1);
  EXPECT_DOUBLE_EQ(r2[2] - b2[2], 0 - 2);
}

TEST(Baselines, EmaDecayPointNine) {
  EmaBaseline b(0.9);
  EXPECT_DOUBLE_EQ(b.advance(1.0), 1.0);  // first reward is its own baseline
  EXPECT_DOUBLE_EQ(b.advance(2.0), 1.0);
  EXPECT_DOUBLE_EQ(b.value(), 0.9 * 1.0 + 0.1 * 2.0);
  EXPECT_DOUBLE_EQ(b.advance(0.0), 1.1);
  EXPECT_NEAR(b.value(), 0.99, 1e-12);
}

TEST(Penalty, PlacetoMemoryTwoSecondsPerGbCappedAtTen) {
  const Cluster c = testing::star_cluster(2, 1e9, 1, 1e9);  // 1 GB per device
  StepResult r;
  r.step_time_us = 1000;
  r.feasible = false;
  r.peak_memory_bytes = {1.5e9, 0.5e9};
  EXPECT_DOUBLE_EQ(penalised_step_us(r, c, PenaltyKind::kPlacetoMemory), 1000 + 1e6);
  r.peak_memory_bytes = {20e9, 0};
  EXPECT_DOUBLE_EQ(penalised_step_us(r, c, PenaltyKind::kPlacetoMemory), 1000 + 10e6);
  EXPECT_DOUBLE_EQ(penalised_step_us(r, c, PenaltyKind::kFixed100s), 100e6);
  r.feasible = true;
  r.peak_memory_bytes = {0.5e9, 0.5e9};
  EXPECT_DOUBLE_EQ(penalised_step_us(r, c, PenaltyKind::kPlacetoMemory), 1000);
  EXPECT_DOUBLE_EQ(penalised_step_us(r, c, PenaltyKind::kFixed100s), 1000);
}

TEST(SampleRng, CategoricalFollowsWeightsAndIsSeeded) {
  SampleRng a(7), b(7);
  const float w[3] = {0.0f, 1.0f, 3.0f};
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 4000; ++i) {
    const int x = a.categorical(w, 3);
    EXPECT_EQ(x, b.categorical(w, 3));
    ++counts[x];
  }
  EXPECT_EQ(counts[0], 0);
  EXPECT_NEAR(counts[2] / 4000.0, 0.75, 0.03);
}

// decode=balanced, by hand. Five rows of weight 1 leaning 0.6 / 0.4 to device 0:
// quotas 3 and 2; rows 0-2 fit on device 0 (used + 0.5 <= 3), rows 3-4 do not
// and take device 1. The argmax would put all five on device 0.
TEST(BalancedDecode, AnUnsurePolicyIsSplitByItsProbabilities) {
  BalancedDecode state;
  const std::vector<float> probs = {0.6f, 0.4f, 0.6f, 0.4f, 0.6f, 0.4f, 0.6f, 0.4f, 0.6f, 0.4f};
  EXPECT_EQ(balanced_rows(probs, 2, {1, 1, 1, 1, 1}, state), (std::vector<int64_t>{0, 0, 0, 1, 1}));
  EXPECT_DOUBLE_EQ(state.used[0], 3);
  EXPECT_DOUBLE_EQ(state.used[1], 2);
}

// A confident policy keeps its argmax: quotas 4.95 and 0.05, and the fifth row
// still fits on device 0 (4 + 0.5 <= 4.95).
TEST(BalancedDecode, AConfidentPolicyKeepsItsArgmax) {
  BalancedDecode state;
  std::vector<float> probs;
  for (int r = 0; r < 5; ++r) probs.insert(probs.end(), {0.99f, 0.01f});
  EXPECT_EQ(balanced_rows(probs, 2, {1, 1, 1, 1, 1}, state), (std::vector<int64_t>{0, 0, 0, 0, 0}));
  // Weightless rows (a fused group of no compute) take their most probable device.
  BalancedDecode light;
  EXPECT_EQ(balanced_rows({0.3f, 0.7f, 0.8f, 0.2f}, 2, {0, 0}, light), (std::vector<int64_t>{1, 0}));
}

// Quotas carry over the chunks of one episode: chunks of one row each (two
// chains, one fused group each) at 0.6 / 0.4. Chunk 1: quota 0.6 on device 0,
// 0 + 0.5 fits. Chunk 2: quotas 1.2 and 0.8; device 0 would hold 1 + 0.5 > 1.2,
// device 1 0 + 0.5 <= 0.8. Decoded chunk by chunk on their own, both rows would
// go to device 0.
TEST(BalancedDecode, QuotasCarryOverTheChunksOfAnEpisode) {
  BalancedDecode state;
  EXPECT_EQ(balanced_rows({0.6f, 0.4f}, 2, {1}, state), (std::vector<int64_t>{0}));
  EXPECT_EQ(balanced_rows({0.6f, 0.4f}, 2, {1}, state), (std::vector<int64_t>{1}));
  // Three devices, one heavy row that fits nowhere by half its weight: quotas
  // 2, 1.5, 1.5 (weight 5 at 0.4 / 0.3 / 0.3) -> the most quota left: device 0.
  BalancedDecode heavy;
  EXPECT_EQ(balanced_rows({0.4f, 0.3f, 0.3f}, 3, {5}, heavy), (std::vector<int64_t>{0}));
  // Then a light row at 0.1 / 0.2 / 0.7: device 2 has quota 1.5 + 0.7, used 0.
  EXPECT_EQ(balanced_rows({0.1f, 0.2f, 0.7f}, 3, {1}, heavy), (std::vector<int64_t>{2}));
  BalancedDecode bad;
  EXPECT_THROW(balanced_rows({0.5f, 0.5f}, 2, {1, 1}, bad), std::exception);
}

// The entropy schedule: constant without an end weight; otherwise the straight
// line from the start weight to the end one over the budget, clamped outside it.
TEST(EntropySchedule, IsLinearOverTheBudget) {
  EXPECT_DOUBLE_EQ(entropy_weight_at(0.01, -1, 0.5), 0.01);
  EXPECT_DOUBLE_EQ(entropy_weight_at(0.1, 0.0, 0.0), 0.1);
  EXPECT_DOUBLE_EQ(entropy_weight_at(0.1, 0.0, 0.25), 0.075);
  EXPECT_DOUBLE_EQ(entropy_weight_at(0.1, 0.02, 0.5), 0.06);
  EXPECT_DOUBLE_EQ(entropy_weight_at(0.1, 0.0, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(entropy_weight_at(0.1, 0.0, 1.5), 0.0);
  EXPECT_DOUBLE_EQ(entropy_weight_at(0.01, 0.05, 0.5), 0.03);  // rising works too
}

}  // namespace
}  // namespace aware::rl
