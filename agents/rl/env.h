// The environment every learned agent trains against, and the policy-gradient
// arithmetic that does not need LibTorch (returns, baselines). Torch-free.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/op_graph.h"
#include "core/placement.h"
#include "core/rng.h"

namespace aware {
class ProgressObserver;
namespace rl {

// How an infeasible placement is scored.
enum class PenaltyKind {
  // Placeto: step += 2 s x sum over devices of max(0, peak GB - memory GB), at most +10 s;
  // infeasible for another reason than memory: 100 s.
  kPlacetoMemory,
  // Hierarchical planner: any infeasible placement counts as 100 s.
  kFixed100s,
};

// Penalised step time, µs, of `result` on `cluster`.
double penalised_step_us(const StepResult& result, const Cluster& cluster, PenaltyKind kind);

// Wraps the evaluator: counts evaluations against the budget, applies the penalty,
// keeps the best placement ever seen (feasible before infeasible, then by step time).
// Not thread-safe.
class PlacementEnv {
 public:
  PlacementEnv(const OpGraph& graph, const Cluster& cluster, Evaluator& evaluator,
               PenaltyKind penalty, long long budget_evals, double budget_seconds,
               ProgressObserver* progress);

  const OpGraph& graph() const { return *graph_; }
  const Cluster& cluster() const { return *cluster_; }
  int num_devices() const { return cluster_->num_devices(); }
  // The evaluator it scores with (a search run on the env's behalf uses it too).
  Evaluator& evaluator() const { return *evaluator_; }

  // Evaluates `placement` (one evaluation against the budget); returns the penalised
  // step time, µs. Fills `trace` when non-null.
  double evaluate(const Placement& placement, Trace* trace = nullptr);
  // The same for `prev` with every op of `moves` on its new device, through
  // Evaluator::evaluate_move (the same result, bit for bit, re-simulating only
  // from where a move can matter): one evaluation against the budget, counted
  // apart in move_evaluations() too. last_placement() becomes the moved one.
  double evaluate_move(const Placement& prev, const std::vector<OpMove>& moves);

  // True when the evaluation or time budget is spent, or the observer cancelled.
  bool exhausted() const;
  bool cancelled() const;
  long long evaluations() const { return evaluations_; }
  // Of evaluations(), those made incrementally by evaluate_move().
  long long move_evaluations() const { return move_evaluations_; }
  long long budget_evals() const { return budget_evals_; }
  double budget_seconds() const { return budget_seconds_; }
  // Seconds since construction plus the offset restored from a checkpoint.
  double elapsed_s() const;

  // The placement of the latest evaluate() call and its penalised step time, µs
  // (empty / +inf before the first).
  const Placement& last_placement() const { return last_; }
  double last_penalised_us() const { return last_penalised_us_; }
  // The unpenalised step time and feasibility of last_placement().
  double last_step_us() const { return last_step_us_; }
  bool last_feasible() const { return last_feasible_; }

  const Placement& best_placement() const { return best_; }
  double best_penalised_us() const { return best_penalised_us_; }
  double best_step_us() const { return best_step_us_; }
  bool best_feasible() const { return best_feasible_; }

  // Multi-graph training: plays `graph` from now on (not owned; must outlive the
  // env). Counters, budget and clock carry on; the best-so-far restarts (it is
  // per graph).
  void set_graph(const OpGraph& graph);

  // Wall-clock seconds spent inside the evaluator, and those the agent reported
  // for building its networks' inputs (add_features_s), since construction.
  double simulate_s() const { return simulate_s_; }
  double features_s() const { return features_s_; }
  void add_features_s(double seconds) { features_s_ += seconds; }
  // Backward passes an agent makes while playing (Placeto's per-step gradients),
  // part of the episodes' time, reported with the update's backward passes.
  double backward_s() const { return backward_s_; }
  void add_backward_s(double seconds) { backward_s_ += seconds; }
  // Counts `n` evaluations made on this env's behalf by someone else (a placer
  // finding an imitation target) against the budget; negative: hands evaluations
  // on to other processes of a data-parallel job.
  void count_external(long long n) { evaluations_ += n; }

  // For resuming from a checkpoint.
  void restore(long long evaluations, double elapsed_s, const Placement& best,
               double best_penalised_us, double best_step_us, bool best_feasible);

 private:
  // Counts `result` of `placement` and keeps it as the last and, when better, the best.
  double record(const Placement& placement, const StepResult& result, double seconds);

  const OpGraph* graph_;
  const Cluster* cluster_;
  Evaluator* evaluator_;
  PenaltyKind penalty_;
  long long budget_evals_;
  double budget_seconds_;
  ProgressObserver* progress_;
  std::chrono::steady_clock::time_point begin_;
  double elapsed_offset_s_ = 0;
  long long evaluations_ = 0;
  long long move_evaluations_ = 0;
  double simulate_s_ = 0, features_s_ = 0, backward_s_ = 0;
  Placement last_;
  double last_penalised_us_ = std::numeric_limits<double>::infinity();
  double last_step_us_ = std::numeric_limits<double>::infinity();
  bool last_feasible_ = false;
  Placement best_;
  double best_penalised_us_ = std::numeric_limits<double>::infinity();
  double best_step_us_ = std::numeric_limits<double>::infinity();
  bool best_feasible_ = false;
};

// Undiscounted reward-to-go: out[i] = sum_{j >= i} rewards[j] (discount 1), or
// with `discount` < 1, sum_{j >= i} discount^(j-i) rewards[j].
std::vector<double> reward_to_go(const std::vector<double>& rewards, double discount = 1.0);

// Leave-one-out advantages of an update's samples: out[e][i] = returns[e][i] −
// the mean of returns[f][i] over the other samples f that have a step i (0 when
// no other has). They sum to zero over the samples at every step index.
std::vector<std::vector<double>> leave_one_out_advantages(const std::vector<std::vector<double>>& returns);

// An update's advantages, after the baselines gave them (`advantages`, per
// episode and step, from `returns`): with `leave_one_out`, replaced by each
// sample's return against the batch's other samples (a sequential episode is one
// sample of several steps; each step of a non-sequential one, such as
// Hierarchical's k placements of one grouping, is a sample of its own; a batch
// of fewer than two samples keeps the baselines'); with `standardize`, then
// made zero-mean, unit-std over the batch's steps (all 0 when they are equal).
void finish_advantages(const std::vector<std::vector<double>>& returns, const std::vector<bool>& sequential,
                       bool leave_one_out, bool standardize, std::vector<std::vector<double>>& advantages);

// Adds the seconds of its lifetime to a counter (PlacementEnv::add_features_s).
class FeatureTimer {
 public:
  explicit FeatureTimer(PlacementEnv& env) : env_(env), begin_(std::chrono::steady_clock::now()) {}
  ~FeatureTimer() {
    env_.add_features_s(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count());
  }
  FeatureTimer(const FeatureTimer&) = delete;
  FeatureTimer& operator=(const FeatureTimer&) = delete;

 private:
  PlacementEnv& env_;
  std::chrono::steady_clock::time_point begin_;
};

// Placeto's baseline: per step index, the mean return of that index over the last
// `window` episodes (those long enough to have the index). Before any history: 0.
class PerStepMeanBaseline {
 public:
  explicit PerStepMeanBaseline(int window = 10) : window_(window) {}
  // Baseline values for an episode of `length` steps (uses history only).
  std::vector<double> values(int length) const;
  // Adds an episode's returns to the history.
  void add(const std::vector<double>& returns);
  std::vector<std::vector<double>> history() const { return {history_.begin(), history_.end()}; }
  void set_history(const std::vector<std::vector<double>>& h) { history_.assign(h.begin(), h.end()); }

 private:
  int window_;
  std::deque<std::vector<double>> history_;
};

// The Hierarchical planner's baseline: b <- decay * b + (1 - decay) * reward,
// initialised to the first reward seen.
class EmaBaseline {
 public:
  explicit EmaBaseline(double decay = 0.9) : decay_(decay) {}
  double value() const { return value_; }
  bool initialised() const { return initialised_; }
  // Baseline to use for `reward` (the value before the update; the first reward
  // itself when nothing was seen yet), then folds `reward` in.
  double advance(double reward);
  void set(double value, bool initialised) {
    value_ = value;
    initialised_ = initialised;
  }

 private:
  double decay_;
  double value_ = 0;
  bool initialised_ = false;
};

// Portable seeded sampling: core's splitmix64 generator (unit(), below(),
// state()/set_state(): checkpointable as one integer) seeded from `seed`, plus the
// categorical draw the agents sample actions with.
class SampleRng : public SplitMixRng {
 public:
  explicit SampleRng(std::uint64_t seed = 1)
      : SplitMixRng(seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL) {}
  // Index drawn from unnormalised non-negative weights (the last positive one on round-off).
  int categorical(const float* probs, int n);
};

// Load-aware decoding (Aware's decode=balanced), instead of the argmax of every
// row, over the chunks of one episode in order. `probs` holds a chunk's rows x
// cols probabilities (row-major) and `weights` each row's load. Each device's
// quota is the load the policy expects it to get so far (the sum, over this and
// the earlier chunks' rows, of weight x probability); the rows, in order, take
// their most probable device (lowest id on ties) whose load so far plus half the
// row's weight is within its quota, and a row that fits nowhere takes the device
// with the most quota left. A confident policy keeps its argmax; an unsure one
// that leans to one device for every row (the mode a greedy decode collapses to)
// is split in proportion to its probabilities.
struct BalancedDecode {
  std::vector<double> quota, used;  // per device, over the chunks decoded so far
  double total = 0;                 // their rows' summed weight
};
std::vector<int64_t> balanced_rows(const std::vector<float>& probs, int cols, const std::vector<double>& weights,
                                   BalancedDecode& state);


}  // namespace rl
}  // namespace aware
