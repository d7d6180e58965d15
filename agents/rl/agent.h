// INTERNAL (includes LibTorch): the interface a learned agent implements so the
// shared Trainer can train it, and the registry that names agents. Include only
// from agents/rl .cc files and tests/rl.
//
// An agent owns its networks (one torch::nn::Module holding every parameter) and
// knows how to play one episode against a PlacementEnv: it samples actions with
// the trainer's SampleRng (never torch's global generator, so a checkpoint holds
// the whole random state) and returns, per step, the log-probability of what it
// chose (with grad), the entropy of the distributions it sampled from, and the
// reward. The Trainer turns episodes into a loss (REINFORCE with a baseline, or
// PPO), steps Adam, and handles budgets, curves, checkpoints and policy files.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "agents/rl/agent_registry.h"
#include "agents/rl/env.h"
#include "agents/rl/settings.h"
#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/registry.h"
#include "core/op_graph.h"

namespace aware::rl {

// One decision of an episode (or several decisions that share one reward).
struct Step {
  torch::Tensor log_prob;  // scalar with grad: log-probability of the actions taken
  torch::Tensor entropy;   // scalar with grad: summed entropy of the sampled distributions
  int decisions = 1;       // how many categorical choices log_prob / entropy cover
  // [decisions] with grad: each choice's log-probability (log_prob is their sum);
  // PPO takes one ratio per decision from it. Undefined: the step is one decision.
  torch::Tensor decision_log_probs;
  // Scalar with grad added to the loss as it is (undefined: none): a regulariser
  // of the agent's own, e.g. Aware's logit penalty.
  torch::Tensor penalty;
  double reward = 0;
};

struct Episode {
  std::vector<Step> steps;
  // true: an MDP; each step's return is the reward to go (Placeto). false:
  // independent samples; each step's return is its own reward (Hierarchical).
  bool sequential = true;
  double final_step_us = 0;   // mean penalised step time of the placement(s) it ended with
  // One-shot agents (Aware): the placement the episode sampled and evaluated
  // (final_step_us is its time); empty for the others.
  Placement placement;
  std::shared_ptr<void> replay;  // what the agent needs to recompute log-probs (PPO)
};

// One behaviour-cloning pass (Agent::imitation_loss).
struct ImitationTerms {
  torch::Tensor loss;            // scalar with grad: mean -log p(target action) per decision
  double mean_probability = 0;   // mean p(target action) over the decisions
  double accuracy = 0;           // fraction of decisions whose most likely action is the target's
  int decisions = 0;             // how many decisions the mean is over
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual std::string kind() const = 0;
  // Called before the episodes of update `update` (0-based): agents whose
  // sampling changes with training time (Hierarchical's logit noise) read it.
  virtual void on_update(long long update) { (void)update; }
  // Per-graph preprocessing (features, reachability); called before run_episode on
  // each new graph. Must not change the parameters' shapes.
  virtual void prepare(const OpGraph& graph, const Cluster& cluster) = 0;
  virtual torch::nn::Module& module() = 0;
  // What a policy file of this agent records and must match: {"devices", "config",
  // "feature_dims"}; "config" holds every option that shapes the networks.
  virtual nlohmann::json header() const = 0;
  // Plays one episode; `greedy` takes the most likely action instead of sampling.
  virtual Episode run_episode(PlacementEnv& env, SampleRng& rng, bool greedy) = 0;
  // The sampled episodes of one update: up to `count`, none started once the env
  // is exhausted (episodes with no steps are still returned: they are counted).
  // The default plays them one after another with `rng`; an agent may play them
  // together, through batched networks, when that gives the same episodes.
  virtual std::vector<Episode> run_episodes(PlacementEnv& env, SampleRng& rng, int count);
  // Behaviour cloning (TrainOptions::imitate): the mean negative log-likelihood
  // per decision of the episode that would place the prepared graph as `target`
  // (a full placement), each decision seeing the target's earlier ones, with grad.
  // Agents without it throw ConfigError.
  virtual ImitationTerms imitation_loss(const Placement& target, SampleRng& rng);
  // Evaluations the greedy episode after training makes on the prepared graph
  // (the trainer keeps them back from the budget).
  virtual int greedy_evaluations() const { return 1; }
  // PPO: recomputes log_prob and entropy of every step for the actions the episode
  // took, under the current weights. Agents without it throw ConfigError.
  virtual void replay(Episode& episode);
  // replay() for every episode of an update; an agent may batch them (the same
  // values up to float rounding). The default replays them one by one.
  virtual void replay_all(std::vector<Episode>& episodes) {
    for (Episode& e : episodes) replay(e);
  }
  // Agent state besides the weights that a checkpoint must keep (e.g. reward scale).
  virtual nlohmann::json extra_state() const { return nlohmann::json::object(); }
  virtual void load_extra_state(const nlohmann::json& state) { (void)state; }
};

// AgentFactory, AgentRegistry and the agents' factories: agent_registry.h.

// What an agent's header() returns: {"devices": devices, "feature_dims":
// feature_dims (an array), "config": config (an object of strings, every option
// that shapes the networks)}. Throws nothing.
nlohmann::json policy_header(int devices, const nlohmann::json& feature_dims,
                             const nlohmann::json& config);

// The options of TrainOptions::agent_options a policy file's "config" overrides
// when loading (network shapes), merged: explicit `user` settings win only when
// they agree; a disagreeing one throws ConfigError naming the key.
Options merge_policy_config(const nlohmann::json& header, const Options& user,
                            const std::string& path);

// Policy files: a torch archive with "header" (JSON string: format "aware-rl-policy",
// version, agent, devices, feature_dims, config) and the module's parameters.
constexpr int kPolicyFormatVersion = 1;
void save_policy(const Agent& agent, torch::nn::Module& module, const std::string& path);
// Reads the header JSON. Throws ParseError naming the path when unreadable.
nlohmann::json read_policy_header(const std::string& path);
// Checks the header against `agent` (kind, devices, feature dims; ConfigError with
// both values) and loads the weights into it (ParseError when corrupt).
void load_policy(Agent& agent, const std::string& path);

// Torch archives (policy files and checkpoints), in agent.cc. Errors name `path`.
// The string entry `key` of an archive (ParseError when missing).
std::string ivalue_string(torch::serialize::InputArchive& archive, const std::string& key,
                          const std::string& path);
// Loads `path` into `archive`; `what` ("policy", "checkpoint") is for messages.
void load_archive(torch::serialize::InputArchive& archive, const std::string& path,
                  const std::string& what);
// The same from the file's bytes, already read (data-parallel ranks get rank
// 0's checkpoint as bytes); messages name `path`.
void load_archive_bytes(torch::serialize::InputArchive& archive, const std::string& bytes,
                        const std::string& path, const std::string& what);
// The JSON text of a header or checkpoint state; ParseError naming `path` unless
// it is a JSON object.
nlohmann::json parse_header(const std::string& text, const std::string& path);
// Checks the JSON types of those `fields` the header holds (absent ones are the
// reader's business). ParseError naming `path` and the field, so that a header of
// the wrong shape never surfaces as a JSON library exception.
enum class HeaderField { kString, kInteger, kObject };
void check_header_fields(const nlohmann::json& header, const std::string& path,
                         std::initializer_list<std::pair<const char*, HeaderField>> fields);
// Writes through `path`.tmp and a rename: nothing half-written on failure.
void save_archive_atomic(torch::serialize::OutputArchive& archive, const std::string& path);

// Sum over the rows of a [rows x classes] logits tensor: log-probs of `actions`
// (length rows) and entropies of each row, both with grad.
struct CategoricalTerms {
  torch::Tensor log_prob;   // scalar
  torch::Tensor entropy;    // scalar
  torch::Tensor log_probs;  // [rows]: each row's log-probability (log_prob is the sum)
};
// With `explore` = ε > 0 the distribution is the mixture (1 − ε) softmax + ε
// uniform (an exploration floor of ε / D per device); log-probabilities and
// entropy are the mixture's. With `keep` = κ in (0, 1) and `kept` one action
// per row (sampling around an incumbent, Aware's option `around`), that is
// mixed again: κ on the row's kept action, 1 − κ on the distribution above.
CategoricalTerms categorical_terms(const torch::Tensor& logits, const std::vector<int64_t>& actions,
                                   double explore = 0, const std::vector<int64_t>& kept = {}, double keep = 0);
// Samples one action per row of `logits` with `rng` (argmax of the policy when
// greedy), from the mixtures above when `explore` or `keep` is above 0.
std::vector<int64_t> sample_rows(const torch::Tensor& logits, SampleRng& rng, bool greedy, double explore = 0,
                                 const std::vector<int64_t>& kept = {}, double keep = 0);

}  // namespace aware::rl
