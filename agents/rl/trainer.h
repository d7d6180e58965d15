// The learned agents' shared training machinery, seen from outside agents/rl:
// options, results and one entry point. No LibTorch here; the networks and the
// optimiser live in agents/rl .cc files behind agents/rl/agent.h.
//
// Every agent ("placeto", "hierarchical", and later "aware") trains through the
// same Trainer, against the same PlacementEnv (evaluator, penalty, budget,
// best-so-far), with the same seeds, so their results compare on equal terms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/evaluator.h"
#include "core/placement.h"

namespace aware {

class OpGraph;
class Cluster;
class ProgressObserver;

namespace rl {

// What the trainer does. Zero / empty fields take the agent's defaults.
struct TrainOptions {
  long long budget_evals = 0;   // evaluator calls allowed (both budgets may be set;
  double budget_seconds = 0;    // the first one reached stops training); both 0: refused
  std::uint64_t seed = 1;       // torch::manual_seed and the agent's own sampling RNG
  int threads = 1;              // torch::set_num_threads
  std::string algorithm;        // "reinforce" (default) or "ppo"
  double learning_rate = 0;     // 0: agent default
  double entropy_coef = -1;     // < 0: agent default
  double grad_clip = 0;         // global gradient-norm clip; 0: agent default
  int episodes_per_update = 0;  // 0: agent default
  int ppo_epochs = 4;           // PPO only: passes over each batch
  double ppo_clip = 0.2;        // PPO only: ratio clip
  std::string init_policy;      // load network weights from this policy file first
  std::string save_policy;      // write the trained policy here at the end
  std::string resume_dir;       // checkpoint directory: resumed from when it holds one
  double checkpoint_every_s = 30;       // checkpoint cadence, wall-clock seconds
  long long checkpoint_every_updates = 0;  // and/or every N updates (0: off)
  std::string curve_csv;        // learning curve written here (rewritten at checkpoints)
  ProgressObserver* progress = nullptr;  // may be null; polled for cancel()
  Options agent_options;        // agent-specific ("chunk", "groups", "hidden", ...)
  bool verbose = false;         // one stderr line per checkpoint
};

// One row of the learning curve, written after every policy update.
struct CurvePoint {
  long long evaluations = 0;
  double seconds = 0;
  double mean_step_us = 0;   // mean (penalised) step time of the update's final placements
  double best_step_us = 0;   // best (penalised) step time ever seen
  double entropy = 0;        // mean policy entropy per decision (nats)
  double loss = 0;
};

struct TrainResult {
  Placement best;                // best placement ever evaluated (feasible ones first)
  double best_step_us = 0;       // its evaluator step time (no penalty)
  bool best_feasible = false;
  long long evaluations = 0;     // counting those before a resume
  long long updates = 0;
  long long episodes = 0;
  double seconds = 0;            // training wall-clock, counting those before a resume
  bool resumed = false;          // started from a checkpoint
  bool cancelled = false;        // the observer cancelled
  std::vector<CurvePoint> curve;
};

// Trains agent `agent` ("placeto", "hierarchical", ...) on `graph` / `cluster`
// scored by `evaluator`, and returns the best placement seen. Writes the curve,
// checkpoints and the policy as `options` says. Throws ConfigError on bad options
// (unknown agent, zero budget, policy of another agent or device count),
// ParseError on a corrupt policy or checkpoint (nothing is overwritten then).
// Not thread-safe with itself (torch::set_num_threads is process-wide).
TrainResult train_agent(const std::string& agent, const OpGraph& graph, const Cluster& cluster,
                        Evaluator& evaluator, const TrainOptions& options);

// Names of the registered learned agents.
std::vector<std::string> rl_agent_names();
// One-line description of a registered agent; throws ConfigError for an unknown one.
std::string rl_agent_description(const std::string& agent);

// Header of a policy file, readable without knowing the agent (for messages).
struct PolicyInfo {
  std::string agent;
  int devices = 0;
  int format_version = 0;
  std::string header_json;  // the whole header
};
// Throws ParseError when `path` is not a readable policy file.
PolicyInfo read_policy_info(const std::string& path);

// Writes the curve as CSV (evaluations,seconds,mean_step_us,best_step_us,entropy,loss),
// atomically.
void write_curve_csv(const std::vector<CurvePoint>& curve, const std::string& path);

}  // namespace rl
}  // namespace aware
