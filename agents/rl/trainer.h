// The learned agents' shared training machinery, seen from outside agents/rl:
// options, results and one entry point. No LibTorch here; the networks and the
// optimiser live in agents/rl .cc files behind agents/rl/agent.h.
//
// Every agent ("placeto", "hierarchical", and later "aware") trains through the
// same Trainer, against the same PlacementEnv (evaluator, penalty, budget,
// best-so-far), with the same seeds, so their results compare on equal terms.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/evaluator.h"
#include "core/placement.h"
#include "core/registry.h"

namespace aware {

class OpGraph;
class Cluster;
class ProgressObserver;

namespace rl {

// Synchronous data-parallel training across processes (the ranks of an MPI
// job): every process runs the same trainer with the same options; each plays
// its share of every update's episodes with a sampling seed of its own and its
// share of the evaluation budget, the gradients of each step are averaged over
// all of them before the optimiser's step, so the policies stay equal (checked
// at the end). Every call is collective.
class ParallelTraining {
 public:
  virtual ~ParallelTraining() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Replaces `values` with their mean over the processes, the same bits on
  // every process (reduced on one and broadcast).
  virtual void average(std::vector<float>& values) = 0;
  // Rank 0's `values` on every process (sizes must agree).
  virtual void broadcast(std::vector<float>& values) = 0;
  virtual double minimum(double value) = 0;
  virtual double maximum(double value) = 0;
  virtual double sum(double value) = 0;
  // Rank 0's `text` on every process.
  virtual std::string broadcast_text(const std::string& text) = 0;
  // Every process's `text` in rank order, on rank 0; empty on the others.
  virtual std::vector<std::string> gather_text(const std::string& text) = 0;
};

// What the trainer does. Zero / empty fields take the agent's defaults.
struct TrainOptions {
  long long budget_evals = 0;   // evaluator calls allowed (any of the budgets may be set;
  double budget_seconds = 0;    // the first one reached stops training); all 0: refused
  // Complete placements sampled (episodes; the equal-episode footing:
  // Placeto's per-node episode makes one evaluation per node, Aware's one). The
  // last update plays only the episodes left. 0: none. Data-parallel: the job's,
  // split as the evaluations are.
  long long budget_episodes = 0;
  std::uint64_t seed = 1;       // torch::manual_seed and the agent's own sampling RNG
  int threads = 1;              // torch::set_num_threads
  // Preset of the agent's settings (agents/rl/settings.h): "" or "default" (ours),
  // "paper". Every field below that is zero / empty / negative takes its value.
  std::string preset;
  std::string algorithm;        // "reinforce" or "ppo"; empty: the preset's
  double learning_rate = 0;     // 0: agent default
  double entropy_coef = -1;     // < 0: agent default
  // Entropy schedule: >= 0, the bonus weight moves linearly from entropy_coef (or
  // the agent's default) at the start to this at the end of the budget
  // (entropy_weight_at); < 0: constant.
  double entropy_end = -1;
  // An entropy floor (ours; agents/rl/entropy_floor.h): while less than
  // entropy_floor_until of the budget is spent, the bonus weight gains a
  // multiplier moved by dual ascent (entropy_floor_step) that holds the mean
  // entropy per decision at or above entropy_floor x the first update's.
  // 0: off. One controller a graph.
  double entropy_floor = -1;  // -1: the preset's (AgentSettings::entropy_floor)
  double entropy_floor_until = 0.5;
  double entropy_floor_step = 1.0;
  double grad_clip = 0;         // global gradient-norm clip; 0: agent default
  int episodes_per_update = 0;  // 0: agent default
  int ppo_epochs = 0;           // PPO only: passes over each batch (0: the preset's, 4)
  double ppo_clip = 0;          // PPO only: per-decision ratio clip (0: the preset's, 0.2)
  std::string init_policy;      // load network weights from this policy file first
  std::string save_policy;      // write the trained policy here at the end
  std::string resume_dir;       // checkpoint directory: resumed from when it holds one
  double checkpoint_every_s = 30;       // checkpoint cadence, wall-clock seconds
  long long checkpoint_every_updates = 0;  // and/or every N updates (0: off)
  // Behaviour cloning before the reinforcement learning (one graph; not when
  // resuming): the policy is first trained to reproduce a target placement.
  // imitate: "" (off), "cheap" (the best of m-etf, heft, m-sct, expert, m-topo,
  // single and round-robin, each evaluated once), "PLACER" or "PLACER:N" (a
  // registered placer, a search given N evaluations, default a tenth of the
  // budget), or a placement file. Every evaluation it makes counts against the
  // budget. imitate_target (non-empty) is used instead, as given.
  std::string imitate;
  Placement imitate_target;
  int imitate_steps = 400;        // at most this many Adam steps of the imitation loss,
  double imitate_probability = 0.97;  // stopping once p(target action) averages this
  // Self-imitation (not the papers'; agents with an imitation loss, Aware): every
  // update's loss also holds self_imitation x -log p(the best placement found so
  // far) (the job's, in data-parallel training), summed over its decisions like
  // an episode's log-probability, while the policy gives that placement's actions
  // a mean probability below self_imitation_cap. 0: off.
  // -1: the preset's (0, off, for all but aware-guided); other negatives are refused.
  double self_imitation = -1;
  double self_imitation_cap = 0.9;
  // Which best it clones: "best", the best placement evaluated (the agent's
  // reference state included), or "samples", the best the policy sampled.
  std::string self_imitation_from = "best";
  // A cross-entropy step on the elite (ours, after Post, Gao et al. NeurIPS
  // 2018; agents/rl/elite.h): the loss of every update in which this process
  // sampled also holds elite_weight x the mean over the elite of -log p(its
  // actions), summed over each one's decisions like an episode's
  // log-probability; the elite is the fastest `elite` fraction of the last
  // elite_window (1 to 10,000) placements this process sampled on the graph.
  // 0: off (the papers'). One window a graph. < 0: the preset's
  // (AgentSettings::elite, elite_window).
  double elite = -1;
  int elite_window = -1;
  double elite_weight = 1;
  // The guided hybrid (aware-guided; agents/rl/guide.h): the refiner's share of
  // the evaluations or the wall-clock (guide_by) (< 0: the preset's; 0: off), the evaluations of one
  // refinement (0: the preset's), and where it starts ("" the preset's,
  // "proposal": the best sample since the last refinement, "best": the best so far).
  double guide_share = -1;
  std::string guide_by;         // "": the preset's; "evaluations" or "time"
  long long guide_evals = 0;
  std::string guide_from;
  std::string curve_csv;        // learning curve written here: rewritten (by rename) as the run
  double curve_every_s = 5;     // goes, at most every curve_every_s seconds, and at the end
  ProgressObserver* progress = nullptr;  // may be null; polled for cancel()
  Options agent_options;        // agent-specific ("chunk", "groups", "hidden", ...)
  bool verbose = false;         // one stderr line per checkpoint
  // Sequential (MDP) episodes: discount of the reward-to-go; < 0: agent default.
  double discount = -1;
  // Standardise advantages per update (zero mean, unit std over the batch's
  // steps): -1 agent default, 0 off, 1 on.
  int standardize_advantages = -1;
  // After training, play one greedy (argmax) episode and report its placement in
  // TrainResult::greedy; TrainResult::best is the better of it and the best
  // sample. On one graph, when the budget holds more than the greedy episode's
  // evaluations (Agent::greedy_evaluations), those are kept back for it; they are
  // counted in `evaluations`.
  bool greedy_eval = true;
  // Zero-shot only (both budgets 0 and an init policy): besides the greedy
  // placement, this many sampled episodes of the policy, the best of all
  // returned ("few-shot K", K more evaluations; 0: the greedy one alone).
  int few_shot = 0;
  // One stderr line per update (evaluations, mean sampled step, best, entropy,
  // loss): a diagnostic; also on when the environment sets AWARE_RL_DEBUG.
  bool debug = false;
  // Data-parallel training (not owned; null: this process alone). Then
  // budget_evals is the whole job's (split evenly), episodes_per_update too
  // (each process plays ceil(E / N), at least one), budget_seconds is refused,
  // and only rank 0 should be given outputs to write. resume_dir is every
  // process's: rank 0 reads the checkpoint and sends it to the others, and writes
  // it with every process's own state (sampling RNG, baselines, evaluations,
  // best); a checkpoint resumes with any number of processes (the same number:
  // each takes its own state back; another: the job's evaluations are split
  // anew, each takes the job's best and a fresh sampling seed).
  ParallelTraining* parallel = nullptr;
};

// The entropy bonus weight once `spent` (0..1) of the budget is used: `start`,
// or with end >= 0 the straight line from start to end.
inline double entropy_weight_at(double start, double end, double spent) {
  if (end < 0) return start;
  const double f = std::clamp(spent, 0.0, 1.0);
  return start + (end - start) * f;
}

// One row of the learning curve, written after every policy update.
struct CurvePoint {
  long long evaluations = 0;
  double seconds = 0;
  double mean_step_us = 0;   // mean (penalised) step time of the update's final placements
  double min_step_us = 0;    // the fastest and slowest of them: the spread of what the
  double max_step_us = 0;    // policy samples (both close when it has collapsed)
  double best_step_us = 0;   // best (penalised) step time ever seen
  double entropy = 0;        // mean policy entropy per decision (nats)
  double loss = 0;
  std::string graph;         // multi-graph training: the graph this update trained on
};

// Where a training run's wall-clock went (seconds). `episodes_s` is the time
// inside the agents' episodes; `simulate_s` and `features_s` are parts of it, so
// the policy's forward passes and sampling are episodes - simulate - features.
// `update_s` is the policy update (loss, backward, clip, Adam, and in
// data-parallel training the gradients' exchange); `backward_s` is part of it.
struct TrainProfile {
  double prepare_s = 0;   // the agents' per-graph preparation (fusion, tensors, anchor sets)
  double episodes_s = 0;  // playing episodes
  double features_s = 0;  // of which: building the networks' input features and anchor sets
  double simulate_s = 0;  // of which: the evaluator
  double update_s = 0;    // policy updates
  double backward_s = 0;  // of which: backward passes
  double episode_backward_s = 0;  // backward passes made while playing (part of episodes_s)
  double greedy_s = 0;    // the greedy episode after training
  double imitate_s = 0;   // behaviour cloning (finding the target and the imitation steps)
  double guide_s = 0;     // the guided hybrid's refinements (aware-guided)
  double total_s = 0;     // the whole call
  double forward_s() const { return std::max(0.0, episodes_s - simulate_s - features_s - episode_backward_s); }
};

struct TrainResult {
  Placement best;                // best placement evaluated, sampled or greedy (feasible ones first)
  double best_step_us = 0;       // its evaluator step time (no penalty)
  bool best_feasible = false;
  long long evaluations = 0;     // counting those before a resume
  long long updates = 0;
  long long episodes = 0;
  double seconds = 0;            // training wall-clock, counting those before a resume
  bool resumed = false;          // started from a checkpoint
  long long policy_parameters = 0;  // the network's weights (the floats each step's gradient averages)
  int episodes_per_update = 0;   // this process's episodes per update (data-parallel: its share)
  bool cancelled = false;        // the observer cancelled
  std::vector<CurvePoint> curve;
  // The trained policy's greedy (argmax) placement and its evaluator step time
  // (no penalty), from one episode after training (TrainOptions::greedy_eval).
  // Empty when greedy_eval is off. For train_agent_multi: on the first graph.
  Placement greedy;
  double greedy_step_us = 0;
  bool greedy_feasible = false;
  long long greedy_evaluations = 0;  // evaluations the greedy episode made (counted in `evaluations`)
  bool best_is_greedy = false;       // `best` is the greedy placement (it beat every sample)
  // Few-shot (TrainOptions::few_shot): the best sampled episode's step time and
  // the evaluations the samples made (in `evaluations`).
  double few_shot_best_us = 0;
  long long few_shot_evaluations = 0;
  TrainProfile profile;              // where this call's time went (this process's, in data-parallel runs)
  // Behaviour cloning (TrainOptions::imitate): the target's step time (µs), the
  // steps taken, the mean p(target action) and argmax accuracy reached, and the
  // evaluations that finding the target took (counted in `evaluations`).
  double imitation_target_us = 0;
  int imitation_steps = 0;
  double imitation_probability = 0, imitation_accuracy = 0;
  long long imitation_evaluations = 0;
  // Self-imitation (TrainOptions::self_imitation): the updates whose loss held the
  // term (a resumed run's count includes those before its checkpoint, as
  // `updates` does), and the mean probability of the best placement's actions at the last.
  long long self_imitation_updates = 0;
  double self_imitation_probability = 0;
  double self_imitation_weight = 0;  // the weight the run used (the preset's when none was given)
  // The elite step (TrainOptions::elite): the updates whose loss held it, and
  // the mean probability of the elite's actions at the last.
  long long elite_updates = 0;
  double elite_probability = 0;
  // The elite step as the run had it (the preset's or the user's): fraction (0: off) and window.
  double elite_fraction = 0;
  int elite_window = 0;
  // The entropy floor as the run had it (0: off), and its controller at the end
  // (the current graph's): the first update's entropy per decision and the multiplier.
  double entropy_floor = 0, entropy_floor_until = 0, entropy_floor_start = 0, entropy_floor_multiplier = 0;
  // The guided hybrid (aware-guided): refinements run, the evaluations they
  // made (in `evaluations`), and how many found a better placement than their start.
  long long guide_rounds = 0, guide_evaluations = 0, guide_improvements = 0;
};

// Trains agent `agent` ("placeto", "hierarchical", ...) on `graph` / `cluster`
// scored by `evaluator`, and returns the best placement seen. Writes the curve,
// checkpoints and the policy as `options` says. Throws ConfigError on bad options
// (unknown agent, zero budget, policy of another agent or device count),
// ParseError on a corrupt policy or checkpoint (nothing is overwritten then).
// Not thread-safe with itself (torch::set_num_threads is process-wide).
//
// Zero-shot: with both budgets 0 and an init_policy, nothing is trained; the
// policy's greedy episode places the graph (result.best = result.greedy).
TrainResult train_agent(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                        Evaluator& evaluator, const TrainOptions& options);

// Pre-training over a family: one policy (one agent, one Adam) trained across
// `graphs` (not owned; must outlive the call), cycling through them one update
// at a time (every episode of an update plays the same graph). The budget counts
// evaluations on all graphs together; baselines are kept per graph; curve rows
// carry the graph's name. result.best / best_step_us are the best placement of
// the last graph trained on; result.greedy is the greedy placement of graphs[0].
// A resume_dir checkpoint records every graph's baselines and names the graphs; it
// resumes only the same graph list. Throws as train_agent, and
// ConfigError for an empty list.
TrainResult train_agent_multi(const std::string& agent, const std::vector<const OpGraph*>& graphs,
                              const Cluster& cluster, Evaluator& evaluator,
                              const TrainOptions& options);

// Names of the registered learned agents.
std::vector<std::string> rl_agent_names();
// One-line description of a registered agent; throws ConfigError for an unknown one.
std::string rl_agent_description(const std::string& agent);
// Every registered agent: name, description, the options its config takes.
std::vector<RegistryInfo> rl_agent_entries();

// Header of a policy file, readable without knowing the agent (for messages).
struct PolicyInfo {
  std::string agent;
  int devices = 0;
  int format_version = 0;
  std::string header_json;  // the whole header
};
// Throws ParseError when `path` is not a readable policy file.
PolicyInfo read_policy_info(const std::string& path);

// Writes the curve as CSV (evaluations,seconds,mean_step_us,best_step_us,entropy,loss,
// plus a trailing graph column when any row names a graph), atomically.
void write_curve_csv(const std::vector<CurvePoint>& curve, const std::string& path);

}  // namespace rl
}  // namespace aware
