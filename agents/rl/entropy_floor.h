// An entropy floor held by dual ascent (TrainOptions::entropy_floor; ours, not
// the papers').
//
// The elite step (elite.h) is a cross-entropy method, and the cross-entropy
// method converges early: its distribution narrows onto the first good samples
// and stops exploring. Szita and Lőrincz ("Learning Tetris Using the Noisy
// Cross-Entropy Method", Neural Computation 18(12), 2006) keep it searching by
// adding noise to the fitted distribution's variance at every step. A policy
// network has no variance to add to; what it has is its entropy, and an entropy
// bonus whose weight can be made to hold a target, as Soft Actor-Critic tunes
// its temperature (Haarnoja et al., "Soft Actor-Critic Algorithms and
// Applications", 2018, section 5: the weight is the Lagrange multiplier of a
// minimum-entropy constraint, moved by gradient steps on the dual).
//
// Here the constraint is: the policy's mean entropy per decision stays at or
// above `fraction` of what it was at the first update, while less than `until`
// of the budget is spent. Each update, before its loss:
//   e = (fraction * H0 - H) / H0,   lambda <- clamp(lambda + step * e, 0, max)
// where H is this batch's mean entropy per decision, and the bonus weight is
// the preset's (or --entropy's, or --entropy-end's schedule's) plus lambda plus kProportionalGain x max(e, 0).
// Past `until` lambda is 0 and the bonus is the preset's alone: the policy may
// then narrow onto its best. The trainer refuses it with Aware's `around`
// (whose samples' entropy is a mixture's). In data-parallel training (worker
// threads or MPI ranks) each process has its own controller, fed by its own
// share of the batch, and checkpoints it with its own state (resumed with
// another number of processes, each takes the processes' mean: mean_state).
// The processes share one network, so each share's entropy estimates the same
// policy's; but this is not the single-process controller on the job's batch:
// the proportional part and the clamp are not linear, so near the floor the
// noisier half-batches give a somewhat larger mean weight, and each process has
// its own start entropy. A controller fed by the job's batch (two more sums
// each update) would be the single-process one; the runs of 2026-12-07 were
// made with one per process (--workers 2), so that is what is kept. A run
// resumed with the floor from a checkpoint written without it takes its start
// entropy from its first update after the resume.
// The error is taken relative to H0 so that `step` means the same on two
// devices (H0 = ln 2) as on eight (ln 8).
//
// Torch-free, so that the controller and its checkpoint are tested alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace aware::rl {

class EntropyFloor {
 public:
  static constexpr double kMaxMultiplier = 100.0;
  // The proportional part: the multiplier alone (pure dual ascent) answers a
  // shortfall only as fast as it accumulates, and the policy answers the weight
  // a few updates later, so the entropy overshoots the floor downwards first;
  // a term in the shortfall itself pushes back at once (a PI controller).
  static constexpr double kProportionalGain = 10.0;

  EntropyFloor() = default;
  EntropyFloor(double fraction, double until, double step) : fraction_(fraction), until_(until), step_(step) {
    if (!(fraction >= 0 && fraction < 1))
      throw ConfigError("entropy floor must be a fraction of the start entropy in [0, 1), got " + std::to_string(fraction));
    if (!(until >= 0 && until <= 1))
      throw ConfigError("entropy floor's end must be a fraction of the budget in [0, 1], got " + std::to_string(until));
    if (!(step > 0 && std::isfinite(step)))
      throw ConfigError("entropy floor's step must be a positive number, got " + std::to_string(step));
  }

  bool active() const { return fraction_ > 0; }

  // The entropy bonus weight for this update: `base` plus the multiplier after
  // this batch's step. `entropy` is the batch's mean entropy per decision (nats),
  // `spent` the fraction of the budget used (0..1). The first call records the
  // start entropy.
  double weight(double base, double entropy, double spent) {
    if (!active() || !std::isfinite(entropy)) return base;
    if (start_ < 0) start_ = entropy;
    if (spent >= until_ || start_ <= 0) {
      multiplier_ = 0;
      return base;
    }
    const double error = (fraction_ * start_ - entropy) / start_;
    multiplier_ = std::clamp(multiplier_ + step_ * error, 0.0, kMaxMultiplier);
    return base + multiplier_ + kProportionalGain * std::max(0.0, error);
  }

  double multiplier() const { return multiplier_; }
  double start() const { return start_; }

  nlohmann::json state() const { return {{"start", start_}, {"multiplier", multiplier_}}; }
  // Several processes' states as one (a checkpoint of data-parallel training
  // resumed with another number of processes): the mean start over those that
  // had one (none: not yet) and the mean multiplier, so that the job's bonus
  // weight (the processes' weights averaged with their gradients) goes on near
  // where it was.
  static nlohmann::json mean_state(const std::vector<nlohmann::json>& states) {
    double start = 0, multiplier = 0;
    int started = 0;
    for (const nlohmann::json& s : states) {
      const double x = s.at("start").get<double>();
      if (x >= 0) {
        start += x;
        ++started;
      }
      multiplier += s.at("multiplier").get<double>();
    }
    return {{"start", started > 0 ? start / started : -1.0},
            {"multiplier", states.empty() ? 0.0 : multiplier / static_cast<double>(states.size())}};
  }
  void restore(const nlohmann::json& j) {
    start_ = j.at("start").get<double>();
    multiplier_ = j.at("multiplier").get<double>();
  }

 private:
  double fraction_ = 0, until_ = 0.5, step_ = 1.0;
  double start_ = -1;     // the first update's entropy per decision; < 0: not yet
  double multiplier_ = 0;
};

}  // namespace aware::rl
