// The learned agents' training settings and presets: one source of truth for
// every hyper-parameter the trainer reads (learning rate and its schedule,
// entropy weight, clip, episodes per update, baseline, advantages, algorithm,
// penalty) and for the agent options a preset sets. docs/agents.md tabulates
// them with their sources; AgentFidelity.DocsTableAgreesWithTheSettingsInCode
// (tests/rl/agent_fidelity_test.cc) reads that table back and compares it with
// agent_setting_rows(). Torch-free.
//
// Presets:
//   "default"  our configuration, the best learned search we have measured
//              (named apart from the papers' and documented as ours);
//   "paper"    each agent as its paper and its authors' code define it, where
//              they say; where they are silent, the choice is named as ours.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "agents/rl/env.h"
#include "core/registry.h"

namespace aware::rl {

// How the baseline an advantage is measured against is kept.
enum class BaselineKind {
  kPerStepMean,  // Placeto: per step index, the mean return of the last 10 episodes
  kEma,          // Hierarchical: exponential moving average of the reward
};

// How the advantages of an update's steps are formed.
enum class AdvantageKind {
  kBaseline,    // return − the baseline above (the papers')
  // Leave-one-out (ours, after Kool et al. 2019's REINFORCE with E samples): each
  // sample's return − the mean of the update's *other* samples' returns at the
  // same step index. Zero-sum over the batch; a batch whose samples differ
  // carries signal however the reward's zero point sits.
  kLeaveOneOut,
};

// The learning rate at a given update count (never the budget's fraction: a
// run of 20,000 evaluations must not decay as fast as one of 2,000).
struct LrSchedule {
  enum class Kind {
    kConstant,
    kLinear,     // base → base × end_factor, linearly over `updates` updates, then held
    kStaircase,  // × factor every `every` updates once `start` updates are done
  };
  Kind kind = Kind::kConstant;
  double end_factor = 1.0;
  long long updates = 0;
  long long start = 0;
  long long every = 1;
  double factor = 1.0;
  // The rate of update `update` (0-based).
  double at(double base, long long update) const;
  // "constant", "linear to 0.1x over 1000 updates", "x0.95 every 50 updates after 400".
  std::string describe() const;
};

struct AgentSettings {
  std::string agent;
  std::string preset;
  double learning_rate = 1e-3;
  LrSchedule schedule;
  // Weight of the entropy bonus per decision: the loss is, per episode, the sum
  // over its decisions of −A·log π − c·H, averaged over the update's episodes
  // (the policy term and the bonus on one normaliser).
  double entropy_coef = 0.0;
  double grad_clip = 1.0;     // global gradient-norm clip
  int episodes_per_update = 1;
  BaselineKind baseline = BaselineKind::kPerStepMean;
  int baseline_window = 10;   // kPerStepMean: episodes remembered
  // kPerStepMean: the episode's own returns join the history before its
  // baseline is read (Placeto's code), or after (ours).
  bool baseline_includes_current = false;
  double ema_decay = 0.9;     // kEma
  // kEma: the baseline's value before the first reward (NaN: the first reward itself).
  double ema_start = std::numeric_limits<double>::quiet_NaN();
  AdvantageKind advantage = AdvantageKind::kBaseline;
  bool standardize_advantages = false;  // per update: zero mean, unit std over the batch's steps
  double discount = 1.0;                // reward-to-go discount of sequential episodes
  std::string algorithm = "reinforce";  // or "ppo" (per-decision clipped ratios)
  int ppo_epochs = 4;
  double ppo_clip = 0.2;
  PenaltyKind penalty = PenaltyKind::kPlacetoMemory;
  // Self-imitation weight (TrainOptions::self_imitation when the user gives none): 0 off.
  double self_imitation = 0.0;
  // The elite step (TrainOptions::elite and elite_window when the user gives
  // none): the fraction of the window cloned each update, 0 off (0.1 in Aware's
  // default since 2026-12-07; 0 in every other preset), and the window.
  double elite = 0.0;
  int elite_window = 64;
  // The entropy floor (TrainOptions::entropy_floor when the user gives none):
  // the fraction of the first update's entropy held until entropy_floor_until
  // of the budget (agents/rl/entropy_floor.h), 0 off (Aware's default: 0.2; the rest 0).
  double entropy_floor = 0.0;
  // The guided hybrid (aware-guided; agents/rl/guide.h): a local search refines
  // the policy's proposals and spends this share of the evaluations (0: off,
  // every other agent); each refinement runs `guide_evals` evaluations of the
  // registered placer `guide_refiner` with `guide_refiner_options`, from the best
  // proposal since the last one ("proposal") or from the best placement so far ("best").
  // guide_by: the share counts "evaluations" or wall-clock ("time": the
  // refiner's seconds against the policy's, which matters when a policy
  // evaluation, with its forward and backward passes, costs hundreds of the
  // refiner's).
  double guide_share = 0.0;
  std::string guide_by = "time";
  long long guide_evals = 0;
  std::string guide_from = "proposal";
  std::string guide_refiner;
  Options guide_refiner_options;
  // The agent's own options this preset sets (the user's --agent-option wins).
  Options agent_options;
};

// The network an agent name trains: "aware" for "aware-guided" (its policies are
// Aware's), the name itself for the others.
std::string agent_network(const std::string& agent);

// The presets an agent has ("default", "paper"; aware-guided, ours alone: "default").
std::vector<std::string> agent_preset_names(const std::string& agent);
// An agent's settings under `preset` ("" is "default"). ConfigError naming the
// agent's presets for an unknown one, and for an unknown agent.
AgentSettings agent_settings(const std::string& agent, const std::string& preset = "default");

// The settings a training run uses: agent_settings(agent, options.preset) with
// the options given winning (the learning rate and such are read by the trainer
// from `options` itself; the guided hybrid's, PPO's epochs and clip are
// written into the result). Fills the options left to the preset
// (self_imitation -1, algorithm "") and checks them: ConfigError for a
// negative self-imitation weight, an unknown self-imitation source, a cap
// outside (0, 1], guide settings on an agent without a refiner, an unknown
// algorithm, and negative PPO settings.
struct TrainOptions;
AgentSettings run_settings(const std::string& agent, TrainOptions& options);

// One setting as docs/agents.md tabulates it: the trainer's (`lr`,
// `lr_schedule`, `entropy`, ...) and then every agent option, each with the
// value the preset gives it (an option the preset leaves alone has its
// registered default; "" when that default depends on the cluster).
struct SettingRow {
  std::string key;
  std::string value;
};
std::vector<SettingRow> agent_setting_rows(const std::string& agent, const std::string& preset);

// A number as the rows print it: the shortest text that reads back to it
// (0.001, 1e-05, 0.1, 5, 750).
std::string setting_number(double value);

}  // namespace aware::rl
