// INTERNAL (includes LibTorch): the Trainer behind train_agent(), shared by the
// .cc files that implement it: trainer.cc (the loop, the greedy episode),
// trainer_update.cc (the loss and one update), trainer_checkpoint.cc
// (checkpoints) and trainer_imitation.cc (behaviour cloning before training,
// self-imitation and the elite step during it).
#pragma once

#include <chrono>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "agents/rl/agent.h"
#include "agents/rl/elite.h"
#include "agents/rl/entropy_floor.h"
#include "agents/rl/guide.h"
#include "agents/rl/trainer.h"

namespace aware::rl::detail {

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Counters {
  long long updates = 0;
  long long episodes = 0;
};


// The policy-gradient loss of an update (trainer_update.cc), on one normaliser: per
// episode, the sum over its decisions of the policy term and of −entropy_coef ×
// the decision's entropy, averaged over the episodes. `advantages[e][i]` is step
// i of episode e's. Without `old`, REINFORCE: −A·log π of each step. With `old`
// (each step's decision log-probabilities when the batch was sampled, detached),
// PPO's clipped surrogate with one ratio per decision: −min(r·A, clip(r, 1 ± clip)·A)
// summed over the step's decisions. `mean_entropy` (may be null) receives the
// entropy per decision over the batch, for the curve.
torch::Tensor policy_loss(const std::vector<Episode>& episodes, const std::vector<std::vector<double>>& advantages,
                          const std::vector<std::vector<torch::Tensor>>* old, double clip, double entropy_coef,
                          double* mean_entropy);
// A step's decisions' log-probabilities, [decisions] (the step's log_prob as one
// decision when the agent gave none).
torch::Tensor decision_log_probs(const Step& step);

// The curve as checkpoints store it, and back (trainer_checkpoint.cc).
nlohmann::json curve_to_json(const std::vector<CurvePoint>& curve);
std::vector<CurvePoint> curve_from_json(const nlohmann::json& j);

class Trainer {
 public:
  Trainer(std::string agent_name, std::vector<const OpGraph*> graphs, const Cluster& cluster,
          Evaluator& evaluator, const TrainOptions& options)
      : name_(std::move(agent_name)), graphs_(std::move(graphs)), graph_(*graphs_.at(0)),
        cluster_(cluster), evaluator_(evaluator), opt_(options) {}

  TrainResult run();

 private:
  std::string checkpoint_path() const { return (std::filesystem::path(opt_.resume_dir) / "checkpoint.pt").string(); }
  // Collective in data-parallel training (rank 0 writes every process's state).
  void write_checkpoint();
  // This process's own part of a checkpoint: evaluations, episodes, sampling
  // RNG, best, baselines, the agent's extra state.
  nlohmann::json own_state() const;
  // Restores this process's part from a checkpoint's `state` (any process count).
  void restore_own_state(const nlohmann::json& state);
  // `bytes`: the file as read by rank 0 (data-parallel); null: read `path` here.
  nlohmann::json read_checkpoint_state(torch::serialize::InputArchive& archive, const std::string& path,
                             const std::string* bytes);
  void update(std::vector<Episode>& episodes);
  double fraction_spent() const;
  // Makes graphs_[index] the one the env and the agent play.
  void use_graph(size_t index);
  // One greedy episode on graphs_[index], outside the budget.
  void greedy_placement(size_t index, TrainResult& result);

  std::string name_;
  std::vector<const OpGraph*> graphs_;
  const OpGraph& graph_;  // graphs_[0]: what single-graph checkpoints record
  const Cluster& cluster_;
  Evaluator& evaluator_;
  TrainOptions opt_;
  Options config_;
  std::unique_ptr<Agent> agent_;
  AgentSettings defaults_;  // the preset's settings (agents/rl/settings.h)
  std::unique_ptr<torch::optim::Adam> adam_;
  std::unique_ptr<PlacementEnv> env_;
  SampleRng rng_;
  // Per graph (index as graphs_); single-graph runs use [0].
  std::vector<PerStepMeanBaseline> step_baselines_;
  std::vector<EmaBaseline> ema_baselines_;
  size_t current_ = 0;
  bool prepare_next_graph_ = false;  // use_graph() prepares even the current graph (a multi-graph resume)
  Counters counters_;
  std::vector<CurvePoint> curve_;
  double base_lr_ = 1e-3, entropy_coef_ = 0.01, grad_clip_ = 1.0, discount_ = 1.0;
  bool standardize_ = false;
  int episodes_per_update_ = 1;
  bool ppo_ = false;
  int ppo_epochs_ = 4;
  double ppo_clip_ = 0.2;
  bool debug_ = false;
  long long reserve_greedy_ = 0;  // evaluations of the budget kept for the greedy episode
  long long job_budget_evals_ = 0, job_evaluations_ = 0;  // data-parallel: the whole job's
  TrainProfile profile_;
  // Behaviour cloning before training (TrainOptions::imitate), into `result`.
  void imitate(TrainResult& result);
  Placement imitation_target(TrainResult& result);
  // Self-imitation: the best placement so far (the job's,
  // data-parallel; with `samples`, `episodes` first count toward the sampled
  // best), or empty before there is one.
  Placement self_imitation_target(const std::vector<Episode>& episodes);
  // opt_.self_imitation x the imitation loss of `target` while its mean
  // probability is below the cap (`used` set), else 0. Collective when data-parallel.
  torch::Tensor self_imitation_loss(const Placement& target, bool& used);
  long long self_imitation_updates_ = 0;
  // self_imitation_from=samples: the best placement this process's episodes
  // sampled (penalised time), checkpointed.
  Placement sampled_best_;
  double sampled_best_us_ = std::numeric_limits<double>::infinity();
  double self_imitation_probability_ = 0;
  // The elite step (TrainOptions::elite): a window of sampled placements per
  // graph (index as graphs_; checkpointed), and opt_.elite_weight x the current
  // graph's elite's mean imitation loss, each summed over its decisions (0 while
  // its window is empty). Several graphs keep their windows apart, as they keep
  // their baselines: a placement is only an imitation target on its own graph.
  std::vector<EliteWindow> elite_windows_;
  // The entropy floor's controllers (TrainOptions::entropy_floor), one a graph
  // (index as graphs_; checkpointed).
  std::vector<EntropyFloor> entropy_floors_;
  EliteWindow& elite_window() { return elite_windows_.at(current_); }
  long long elite_updates_ = 0;
  double elite_probability_ = 0;
  torch::Tensor elite_loss();
  // agent_->prepare, timed.
  void prepare(const OpGraph& graph);
  ParallelTraining* parallel_ = nullptr;  // data-parallel over processes; null: alone
  // The guided hybrid's local search (aware-guided; null when guide_share is 0).
  std::unique_ptr<Guide> guide_;
  // Data-parallel: the gradients' mean over the processes, in place.
  void average_gradients();
  // Data-parallel: the parameters flattened (for the start's broadcast and the end's check).
  std::vector<float> flat_parameters();
};


}  // namespace aware::rl::detail
