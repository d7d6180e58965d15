// The elite set of a cross-entropy step (TrainOptions::elite; ours, after
// Post: Gao, Chen and Li, "Post: Device Placement with Cross-Entropy
// Minimization and Proximal Policy Optimization", NeurIPS 2018).
//
// Post keeps the placements sampled since its last cross-entropy step, takes
// the fastest ρ of them (the elite), and moves its placement distribution to
// the maximum-likelihood fit of the elite (its Algorithm 1, lines 9-12, and
// eq. 10: for per-group categoricals the fit is the elite's frequencies, in
// closed form). Our policy is a network, so there is no closed form: each
// update's loss gains one term, the elite's mean imitation loss, and the
// gradient step moves towards that fit (trainer_update.cc). The elite is taken from a
// sliding window of the last `capacity` sampled placements rather than from a
// batch that is then emptied, so that every update has one.
//
// Torch-free, so that the selection and its checkpoint are tested alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/placement.h"

namespace aware::rl {

class EliteWindow {
 public:
  explicit EliteWindow(int capacity = 64) : capacity_(capacity) {
    if (capacity < 1) throw ConfigError("elite window must hold at least one placement, got " + std::to_string(capacity));
  }

  // A sampled placement and its (penalised) step; the oldest leaves past capacity.
  void add(const Placement& placement, double step_us) {
    if (placement.size() == 0 || !std::isfinite(step_us)) return;
    entries_.emplace_back(placement, step_us);
    while (static_cast<int>(entries_.size()) > capacity_) entries_.pop_front();
  }

  // The ceil(fraction x size) fastest placements held, fastest first (equal
  // steps: the earlier sampled first). fraction in (0, 1].
  std::vector<const Placement*> elite(double fraction) const {
    if (!(fraction > 0 && fraction <= 1)) throw ConfigError("elite fraction must lie in (0, 1], got " + std::to_string(fraction));
    std::vector<size_t> order(entries_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return entries_[a].second < entries_[b].second; });
    const size_t k = std::min(order.size(), static_cast<size_t>(std::ceil(fraction * static_cast<double>(order.size()) - 1e-9)));
    std::vector<const Placement*> out;
    for (size_t i = 0; i < k; ++i) out.push_back(&entries_[order[i]].first);
    return out;
  }

  size_t size() const { return entries_.size(); }
  int capacity() const { return capacity_; }
  void clear() { entries_.clear(); }

  // Checkpoint state: the window, oldest first.
  nlohmann::json state() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [p, us] : entries_) j.push_back({{"placement", p.device_of_op}, {"us", us}});
    return j;
  }
  void restore(const nlohmann::json& j) {
    entries_.clear();
    for (const auto& e : j) add(Placement(e.at("placement").get<std::vector<int>>()), e.at("us").get<double>());
  }

 private:
  int capacity_;
  std::deque<std::pair<Placement, double>> entries_;
};

}  // namespace aware::rl
