// INTERNAL (includes LibTorch): Placeto's per-step gradients, for
// placeto_agent.cc alone (header-only, so it adds no LibTorch translation unit).
#pragma once

#include <chrono>
#include <vector>

#include <torch/torch.h>

#include "agents/rl/agent.h"
#include "agents/rl/env.h"
#include "core/errors.h"

namespace aware::rl {

// Placeto's per-step gradients. Placeto's code computes, at every step of an
// episode, the gradient of the step's log-probability and of its entropy with
// respect to the weights in the same pass that samples the action
// (progressive_placer.py:748-775 with `dont_repeat_ff`, model gradients
// `logprob_grad_outs` and `ent_grad_outs`), keeps them, and combines them with
// the advantages at the episode's end (progressive_placer.py:787-860). We do the
// same: one forward and two backward passes per step, the gradients kept as rows
// of [steps x parameters] (Inception-V3: 1,159 x 13,924 floats, 65 MB each), and
// no second forward. The episode's log-probabilities and entropies are then
// handed to the trainer as exact first-order stand-ins
//     log_prob_t = value_t + g_t . (theta - stop_gradient(theta)),
// equal to the step's value and whose gradient is the step's gradient g_t, so
// the trainer's loss and its backward pass are unchanged. Before, the episode's
// 1,159 states were replayed in one batched pass at its end: the same gradients
// (test: AgentFidelity.PlacetoStepwiseGradientsEqualTheBatchedReplay) at 11.7 GB
// and ~5x the time. PPO's later epochs replay (score_steps) at the new weights.
class StepGradients {
 public:
  void start(std::vector<torch::Tensor> params, int max_steps) {
    params_ = std::move(params);
    int64_t total = 0;
    for (const auto& p : params_) total += p.numel();
    lp_rows_ = torch::zeros({max_steps, total});
    ent_rows_ = torch::zeros({max_steps, total});
    lp_.clear();
    ent_.clear();
  }
  // One step of one decision: its logits (with grad) and the action taken.
  void add(PlacementEnv& env, const torch::Tensor& logits, const std::vector<int64_t>& actions) {
    AWARE_CHECK(actions.size() == 1 && logits.size(0) == 1, "stepwise gradients take one decision a step");
    AWARE_CHECK(static_cast<int64_t>(lp_.size()) < lp_rows_.size(0), "more steps than units");
    const torch::Tensor logp = torch::log_softmax(logits, 1);
    const torch::Tensor chosen = logp.select(1, actions[0]).sum();
    const torch::Tensor entropy = -(logp.exp() * logp).sum();
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t row = static_cast<int64_t>(lp_.size());
    store(torch::autograd::grad({chosen}, params_, {}, /*retain_graph=*/true, false, /*allow_unused=*/true),
          lp_rows_[row]);
    store(torch::autograd::grad({entropy}, params_, {}, false, false, true), ent_rows_[row]);
    env.add_backward_s(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    lp_.push_back(chosen.item<float>());
    ent_.push_back(entropy.item<float>());
  }
  // The stand-ins, one per step played (an episode cut short has none).
  void finish(Episode& ep) const {
    const int64_t S = static_cast<int64_t>(ep.steps.size());
    if (S == 0) return;
    AWARE_CHECK(S == static_cast<int64_t>(lp_.size()), "stepwise gradients: one row per step");
    std::vector<torch::Tensor> flat;
    for (const auto& p : params_) flat.push_back(p.reshape({-1}));
    const torch::Tensor theta = torch::cat(flat);
    const torch::Tensor delta = theta - theta.detach();  // zero, with the identity as gradient
    const torch::Tensor lp = torch::tensor(lp_) + lp_rows_.narrow(0, 0, S).mv(delta);
    const torch::Tensor ent = torch::tensor(ent_) + ent_rows_.narrow(0, 0, S).mv(delta);
    for (int64_t i = 0; i < S; ++i) {
      ep.steps[i].log_prob = lp[i];
      ep.steps[i].entropy = ent[i];
      ep.steps[i].decision_log_probs = lp.narrow(0, i, 1);
    }
  }

 private:
  void store(const std::vector<torch::Tensor>& g, torch::Tensor row) const {
    int64_t at = 0;
    for (size_t k = 0; k < params_.size(); ++k) {
      const int64_t m = params_[k].numel();
      if (g[k].defined()) row.narrow(0, at, m).copy_(g[k].reshape({-1}));
      at += m;
    }
  }
  std::vector<torch::Tensor> params_;
  torch::Tensor lp_rows_, ent_rows_;
  std::vector<float> lp_, ent_;
};

}  // namespace aware::rl
