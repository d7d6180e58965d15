#include "agents/rl/env.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.h"
#include "core/progress.h"

namespace aware::rl {

namespace {
constexpr double kUsPerS = 1e6;
constexpr double kInfeasibleS = 100.0;
}  // namespace

double penalised_step_us(const StepResult& result, const Cluster& cluster, PenaltyKind kind) {
  if (kind == PenaltyKind::kFixed100s) return result.feasible ? result.step_time_us : kInfeasibleS * kUsPerS;
  // Placeto: the over-capacity gigabytes, summed over devices, cost 2 s each, at most 10 s.
  double over_gb = 0;
  for (int d = 0; d < cluster.num_devices() && d < static_cast<int>(result.peak_memory_bytes.size()); ++d)
    over_gb += std::max(0.0, (result.peak_memory_bytes[d] - cluster.device(d).memory_bytes) / 1e9);
  const bool memory_only = result.feasible || over_gb > 0;
  if (!memory_only) return kInfeasibleS * kUsPerS;
  return result.step_time_us + std::min(10.0, 2.0 * over_gb) * kUsPerS;
}

PlacementEnv::PlacementEnv(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator,
                           PenaltyKind penalty, long long budget_evals, double budget_seconds,
                           ProgressObserver* progress)
    : graph_(&graph),
      cluster_(&cluster),
      evaluator_(&evaluator),
      penalty_(penalty),
      budget_evals_(budget_evals),
      budget_seconds_(budget_seconds),
      progress_(progress),
      begin_(std::chrono::steady_clock::now()) {}

double PlacementEnv::evaluate(const Placement& placement, Trace* trace) {
  const auto t0 = std::chrono::steady_clock::now();
  const StepResult r = evaluator_->evaluate(*graph_, *cluster_, placement, trace);
  return record(placement, r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

double PlacementEnv::evaluate_move(const Placement& prev, const std::vector<OpMove>& moves) {
  const auto t0 = std::chrono::steady_clock::now();
  const StepResult r = evaluator_->evaluate_move(*graph_, *cluster_, prev, moves);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Placement moved = prev;
  apply_moves(*graph_, *cluster_, moved, moves);
  ++move_evaluations_;
  return record(moved, r, seconds);
}

double PlacementEnv::record(const Placement& placement, const StepResult& r, double seconds) {
  simulate_s_ += seconds;
  ++evaluations_;
  const double pen = penalised_step_us(r, *cluster_, penalty_);
  last_ = placement;
  last_penalised_us_ = pen;
  last_step_us_ = r.step_time_us;
  last_feasible_ = r.feasible;
  const bool better = best_.size() == 0 || (r.feasible && !best_feasible_) ||
                      (r.feasible == best_feasible_ && pen < best_penalised_us_);
  if (better) {
    best_ = placement;
    best_penalised_us_ = pen;
    best_step_us_ = r.step_time_us;
    best_feasible_ = r.feasible;
  }
  return pen;
}

void PlacementEnv::set_graph(const OpGraph& graph) {
  if (&graph == graph_) return;
  graph_ = &graph;
  best_ = Placement();
  best_penalised_us_ = std::numeric_limits<double>::infinity();
  best_step_us_ = std::numeric_limits<double>::infinity();
  best_feasible_ = false;
}

bool PlacementEnv::cancelled() const { return progress_ != nullptr && progress_->cancelled(); }

bool PlacementEnv::exhausted() const {
  if (budget_evals_ > 0 && evaluations_ >= budget_evals_) return true;
  if (budget_seconds_ > 0 && elapsed_s() >= budget_seconds_) return true;
  return cancelled();
}

double PlacementEnv::elapsed_s() const {
  return elapsed_offset_s_ +
         std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
}

void PlacementEnv::restore(long long evaluations, double elapsed_s, const Placement& best,
                           double best_penalised_us, double best_step_us, bool best_feasible) {
  evaluations_ = evaluations;
  begin_ = std::chrono::steady_clock::now();
  elapsed_offset_s_ = elapsed_s;
  best_ = best;
  best_penalised_us_ = best_penalised_us;
  best_step_us_ = best_step_us;
  best_feasible_ = best_feasible;
}

std::vector<double> reward_to_go(const std::vector<double>& rewards, double discount) {
  std::vector<double> out(rewards.size());
  double acc = 0;
  for (int i = static_cast<int>(rewards.size()) - 1; i >= 0; --i) {
    acc = rewards[i] + discount * acc;
    out[i] = acc;
  }
  return out;
}

std::vector<double> PerStepMeanBaseline::values(int length) const {
  std::vector<double> out(length, 0.0);
  for (int i = 0; i < length; ++i) {
    double sum = 0;
    int count = 0;
    for (const auto& h : history_)
      if (i < static_cast<int>(h.size())) {
        sum += h[i];
        ++count;
      }
    if (count > 0) out[i] = sum / count;
  }
  return out;
}

void PerStepMeanBaseline::add(const std::vector<double>& returns) {
  history_.push_back(returns);
  while (static_cast<int>(history_.size()) > window_) history_.pop_front();
}

std::vector<std::vector<double>> leave_one_out_advantages(const std::vector<std::vector<double>>& returns) {
  size_t longest = 0;
  for (const auto& r : returns) longest = std::max(longest, r.size());
  std::vector<double> sum(longest, 0.0);
  std::vector<int> count(longest, 0);
  for (const auto& r : returns)
    for (size_t i = 0; i < r.size(); ++i) {
      sum[i] += r[i];
      ++count[i];
    }
  std::vector<std::vector<double>> out;
  for (const auto& r : returns) {
    std::vector<double> a(r.size(), 0.0);
    for (size_t i = 0; i < r.size(); ++i)
      if (count[i] > 1) a[i] = r[i] - (sum[i] - r[i]) / (count[i] - 1);
    out.push_back(std::move(a));
  }
  return out;
}

void finish_advantages(const std::vector<std::vector<double>>& returns, const std::vector<bool>& sequential,
                       bool leave_one_out, bool standardize, std::vector<std::vector<double>>& advantages) {
  if (leave_one_out) {
    std::vector<std::vector<double>> samples;
    for (size_t e = 0; e < returns.size(); ++e) {
      if (sequential[e]) {
        samples.push_back(returns[e]);
      } else {
        for (double r : returns[e]) samples.push_back({r});
      }
    }
    if (samples.size() >= 2) {
      const std::vector<std::vector<double>> loo = leave_one_out_advantages(samples);
      size_t k = 0;
      for (size_t e = 0; e < returns.size(); ++e) {
        if (sequential[e]) {
          advantages[e] = loo[k++];
        } else {
          for (double& a : advantages[e]) a = loo[k++][0];
        }
      }
    }
  }
  if (standardize) {
    // The update's size then no longer depends on the reward's scale (which
    // differs between graphs and shrinks as the policy converges), only on the
    // ranking inside the batch.
    double sum = 0, sum_sq = 0, count = 0;
    for (const auto& adv : advantages)
      for (double a : adv) {
        sum += a;
        sum_sq += a * a;
        ++count;
      }
    const double mean = count > 0 ? sum / count : 0;
    const double var = count > 1 ? std::max(0.0, sum_sq / count - mean * mean) : 0;
    const double sd = std::sqrt(var);
    for (auto& adv : advantages)
      for (double& a : adv) a = sd > 1e-12 ? (a - mean) / sd : 0.0;
  }
}

double EmaBaseline::advance(double reward) {
  if (!initialised_) {
    value_ = reward;
    initialised_ = true;
    return reward;
  }
  const double before = value_;
  value_ = decay_ * value_ + (1 - decay_) * reward;
  return before;
}

int SampleRng::categorical(const float* probs, int n) {
  double total = 0;
  for (int i = 0; i < n; ++i) total += std::max(0.0f, probs[i]);
  AWARE_CHECK(total > 0 && std::isfinite(total), "categorical over no positive weight");
  const double u = unit() * total;
  double acc = 0;
  int last = 0;
  for (int i = 0; i < n; ++i) {
    if (probs[i] <= 0) continue;
    acc += probs[i];
    last = i;
    if (u < acc) return i;
  }
  return last;
}

// Load-aware rounding of the policy's choices (decode=balanced; see env.h).
std::vector<int64_t> balanced_rows(const std::vector<float>& probs, int cols, const std::vector<double>& weights,
                                   BalancedDecode& state) {
  const size_t rows = weights.size();
  AWARE_CHECK(cols >= 1 && probs.size() == rows * static_cast<size_t>(cols),
              "balanced_rows: probabilities and weights disagree");
  if (state.quota.empty()) {
    state.quota.assign(cols, 0.0);
    state.used.assign(cols, 0.0);
  }
  AWARE_CHECK(static_cast<int>(state.quota.size()) == cols, "balanced_rows: another device count");
  for (size_t r = 0; r < rows; ++r) {
    state.total += weights[r];
    for (int d = 0; d < cols; ++d) state.quota[d] += weights[r] * static_cast<double>(probs[r * cols + d]);
  }
  const double slack = 1e-12 * state.total;  // the quotas' rounding
  std::vector<double>& quota = state.quota;
  std::vector<double>& used = state.used;
  std::vector<int> order(cols);
  std::vector<int64_t> out(rows);
  for (size_t r = 0; r < rows; ++r) {
    const float* row = probs.data() + r * cols;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    int pick = -1;
    for (int d : order)
      if (used[d] + 0.5 * weights[r] <= quota[d] + slack) {
        pick = d;
        break;
      }
    if (pick < 0) {
      pick = 0;
      for (int d = 1; d < cols; ++d)
        if (quota[d] - used[d] > quota[pick] - used[pick]) pick = d;
    }
    used[pick] += weights[r];
    out[r] = pick;
  }
  return out;
}

}  // namespace aware::rl
