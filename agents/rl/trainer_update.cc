// The policy-gradient loss and one update of the shared trainer: returns,
// baselines and advantages, the REINFORCE or PPO loss with its entropy bonus,
// self-imitation's and the elite step's terms, the optimizer step and the
// curve's point (the loop that calls it is trainer.cc's). Includes LibTorch.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "agents/rl/trainer_impl.h"
#include "core/errors.h"

namespace aware::rl::detail {

torch::Tensor decision_log_probs(const Step& step) {
  if (!step.decision_log_probs.defined()) {
    // A step of several decisions must give each one's log-probability, or PPO
    // would clip their joint ratio again.
    AWARE_CHECK(step.decisions == 1, "a step of several decisions without its decision_log_probs");
    return step.log_prob.reshape({1});
  }
  AWARE_CHECK(step.decision_log_probs.numel() == step.decisions, "decision_log_probs must hold one per decision");
  return step.decision_log_probs;
}

torch::Tensor policy_loss(const std::vector<Episode>& episodes, const std::vector<std::vector<double>>& advantages,
                          const std::vector<std::vector<torch::Tensor>>* old, double clip, double entropy_coef,
                          double* mean_entropy) {
  torch::Tensor pg = torch::zeros({});
  torch::Tensor entropy = torch::zeros({});
  torch::Tensor penalty = torch::zeros({});
  double decisions = 0;
  for (size_t e = 0; e < episodes.size(); ++e) {
    for (size_t i = 0; i < episodes[e].steps.size(); ++i) {
      const Step& s = episodes[e].steps[i];
      const double a = advantages[e][i];
      if (old == nullptr) {
        pg = pg - a * s.log_prob;
      } else {
        // One ratio per decision (Schulman et al. 2017 take the ratio of one
        // action; an episode's joint ratio over hundreds of decisions leaves the
        // clip range at the first step).
        const torch::Tensor ratio = torch::exp(decision_log_probs(s) - (*old)[e][i]);
        const torch::Tensor clipped = torch::clamp(ratio, 1 - clip, 1 + clip);
        pg = pg - torch::min(ratio * a, clipped * a).sum();
      }
      entropy = entropy + s.entropy;
      if (s.penalty.defined()) penalty = penalty + s.penalty;
      decisions += s.decisions;
    }
  }
  if (mean_entropy != nullptr) *mean_entropy = entropy.item<double>() / std::max(1.0, decisions);
  const double n = static_cast<double>(std::max<size_t>(1, episodes.size()));
  return (pg - entropy_coef * entropy + penalty) / n;
}

void Trainer::update(std::vector<Episode>& episodes) {
  // The learning rate follows the number of updates made, never the budget's
  // fraction (a run of 20,000 evaluations then decays no faster than one of
  // 2,000 did: the same update count gives the same rate).
  const double spent = parallel_ != nullptr ? parallel_->maximum(fraction_spent()) : fraction_spent();
  for (auto& group : adam_->param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(defaults_.schedule.at(base_lr_, counters_.updates));
  // Self-imitation's target (collective in data-parallel training), this
  // update's samples included.
  const Placement self_target = opt_.self_imitation > 0 ? self_imitation_target(episodes) : Placement();
  bool self_imitated = false;
  // The elite step's window takes this update's samples first (Post takes its
  // elite from the samples since its last step, these included).
  if (opt_.elite > 0)
    for (const Episode& ep : episodes) elite_window().add(ep.placement, ep.final_step_us);
  if (episodes.empty()) {
    // Data-parallel only: this process's share ran out of budget before the
    // others'; it still takes part in the step, with no policy gradient of its
    // own (self-imitation's term is every process's).
    AWARE_CHECK(parallel_ != nullptr, "an update of no episodes");
    for (int epoch = 0; epoch < (ppo_ ? std::max(1, ppo_epochs_) : 1); ++epoch) {
      adam_->zero_grad();
      if (self_target.size() > 0) {
        const torch::Tensor loss = self_imitation_loss(self_target, self_imitated);
        if (loss.requires_grad()) loss.backward();
      }
      average_gradients();
      torch::nn::utils::clip_grad_norm_(agent_->module().parameters(), grad_clip_);
      adam_->step();
    }
    if (self_imitated) ++self_imitation_updates_;
    ++counters_.updates;
    return;
  }
  // Returns and advantages (constants), per episode and step.
  std::vector<std::vector<double>> advantages, all_returns;
  double mean_step = 0;
  double min_step = std::numeric_limits<double>::infinity(), max_step = -min_step;
  for (auto& ep : episodes) {
    min_step = std::min(min_step, ep.final_step_us);
    max_step = std::max(max_step, ep.final_step_us);
    std::vector<double> rewards;
    for (const auto& s : ep.steps) rewards.push_back(s.reward);
    std::vector<double> returns = ep.sequential ? reward_to_go(rewards, discount_) : rewards;
    std::vector<double> adv(returns.size());
    if (defaults_.baseline == BaselineKind::kPerStepMean) {
      PerStepMeanBaseline& baseline = step_baselines_[current_];
      if (defaults_.baseline_includes_current) baseline.add(returns);
      const std::vector<double> b = baseline.values(static_cast<int>(returns.size()));
      for (size_t i = 0; i < returns.size(); ++i) adv[i] = returns[i] - b[i];
      if (!defaults_.baseline_includes_current) baseline.add(returns);
    } else {
      EmaBaseline& baseline = ema_baselines_[current_];
      for (size_t i = 0; i < returns.size(); ++i) adv[i] = returns[i] - baseline.advance(returns[i]);
    }
    advantages.push_back(std::move(adv));
    mean_step += ep.final_step_us / episodes.size();
    all_returns.push_back(std::move(returns));
  }
  std::vector<bool> sequential;
  for (const Episode& ep : episodes) sequential.push_back(ep.sequential);
  finish_advantages(all_returns, sequential, defaults_.advantage == AdvantageKind::kLeaveOneOut, standardize_,
                    advantages);

  double entropy_coef = entropy_weight_at(entropy_coef_, opt_.entropy_end, spent);
  if (opt_.entropy_floor > 0) {
    // The floor's controller reads this batch's entropy per decision, as sampled
    // (entropy_floor.h), before the loss that its weight enters.
    double sum = 0, decisions = 0;
    for (const Episode& ep : episodes)
      for (const Step& s : ep.steps) {
        sum += s.entropy.item<double>();
        decisions += s.decisions;
      }
    entropy_coef = entropy_floors_.at(current_).weight(entropy_coef, sum / std::max(1.0, decisions), spent);
  }
  auto compute_loss = [&](const std::vector<std::vector<torch::Tensor>>* old, double* entropy_out) {
    torch::Tensor loss = policy_loss(episodes, advantages, old, ppo_clip_, entropy_coef, entropy_out);
    if (self_target.size() > 0) loss = loss + self_imitation_loss(self_target, self_imitated);
    if (opt_.elite > 0) loss = loss + elite_loss();
    return loss;
  };

  double entropy = 0;
  double loss_value = 0;
  auto step = [&](const torch::Tensor& loss) {
    adam_->zero_grad();
    const auto t0 = Clock::now();
    loss.backward();
    profile_.backward_s += seconds_since(t0);
    if (parallel_ != nullptr) average_gradients();  // before the clip: the clip of the mean
    torch::nn::utils::clip_grad_norm_(agent_->module().parameters(), grad_clip_);
    adam_->step();
    loss_value = loss.item<double>();
  };
  if (!ppo_) {
    step(compute_loss(nullptr, &entropy));
  } else {
    std::vector<std::vector<torch::Tensor>> old;
    for (const auto& ep : episodes) {
      old.emplace_back();
      for (const auto& s : ep.steps) old.back().push_back(decision_log_probs(s).detach());
    }
    for (int epoch = 0; epoch < std::max(1, ppo_epochs_); ++epoch) {
      if (epoch > 0) agent_->replay_all(episodes);
      step(compute_loss(&old, &entropy));
    }
  }
  if (self_imitated) ++self_imitation_updates_;
  if (opt_.elite > 0 && elite_window().size() > 0) ++elite_updates_;
  ++counters_.updates;
  CurvePoint p;
  p.evaluations = env_->evaluations();
  p.seconds = env_->elapsed_s();
  p.mean_step_us = mean_step;
  p.min_step_us = min_step;
  p.max_step_us = max_step;
  p.best_step_us = env_->best_penalised_us();
  p.entropy = entropy;
  p.loss = loss_value;
  if (graphs_.size() > 1) p.graph = graphs_[current_]->name();
  curve_.push_back(p);
  if (debug_) {
    double norm = 0;
    {
      torch::NoGradGuard no_grad;
      for (const auto& t : agent_->module().parameters()) norm += t.abs().sum().item<double>();
    }
    std::fprintf(stderr,
                 "%s update %lld%s%s: evals %lld mean %.1f best %.1f entropy %.4f (weight %.4g) loss %.4f "
                 "|params| %.4f\n",
                 name_.c_str(), counters_.updates, p.graph.empty() ? "" : " on ", p.graph.c_str(),
                 p.evaluations, p.mean_step_us, p.best_step_us, p.entropy, entropy_coef, p.loss, norm);
  }
}

}  // namespace aware::rl::detail
