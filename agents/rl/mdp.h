// The placement MDP as an environment a program outside the workbench drives one
// action at a time (the Python module's Gymnasium-style `aware.env.PlacementEnv`
// wraps it). Torch-free. Every evaluation goes through `PlacementEnv` (env.h), so
// the budget, the penalty and the best-so-far are those the learned agents train
// against.
//
// Decisions are per colocation unit (agents/common: ops sharing a colocation
// group must share a device; every other op is a unit on its own), as the agents
// decide them. Two modes:
//  - one-shot (Aware, Hierarchical): one action gives every unit a device; one
//    evaluation; reward = -(penalised step) in seconds; the episode ends.
//  - per-node (Placeto, progressive_placer.py): the episode starts from a whole
//    placement (random each episode, one fixed per environment, or all on device
//    0), evaluated once; step t puts the t-th unit in topological order (of its
//    first op) on the chosen device and is evaluated incrementally
//    (Evaluator::evaluate_move, the same result bit for bit as a full
//    evaluation); reward = (penalised step before - after) in seconds (Placeto's
//    r_t - r_{t+1} with runtimes in seconds), so an episode's rewards sum to the
//    start's step minus the final one; the episode ends after the last unit.
//
// Budget: evaluations (a per-node move counts as one) and/or seconds. A step taken
// when the budget is spent evaluates nothing and reports `truncated`; so does the
// step whose evaluation spends it, unless the episode ended with it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agents/rl/env.h"
#include "core/cluster.h"
#include "core/evaluator.h"
#include "core/op_graph.h"

namespace aware::rl {

enum class MdpMode { kOneShot, kPerNode };

struct MdpOptions {
  MdpMode mode = MdpMode::kOneShot;
  PenaltyKind penalty = PenaltyKind::kPlacetoMemory;
  // Per-node start placement: "random" (a new one each reset, from its seed),
  // "fixed" (one per environment, drawn from the first reset's seed: Placeto's
  // default), "zero" (every unit on device 0).
  std::string start = "random";
  long long budget_evals = 0;   // 0: no limit
  double budget_seconds = 0;    // 0: no limit
};

// "one-shot" / "per-node"; "placeto" / "fixed"; ConfigError naming the field otherwise.
MdpMode parse_mdp_mode(const std::string& text);
PenaltyKind parse_penalty_kind(const std::string& text);

// What one step did.
struct MdpStep {
  double reward = 0;
  bool terminated = false;
  bool truncated = false;
  bool evaluated = false;     // false when the budget was already spent
  double step_us = 0;         // the evaluated placement's step (unpenalised); 0 if not evaluated
  double penalised_us = 0;    // with the penalty
  bool feasible = true;
};

class PlacementMdp {
 public:
  // Throws ConfigError for a bad start or a cluster without devices, GraphError
  // for a graph that does not validate, and what the evaluator's preparation throws.
  PlacementMdp(const OpGraph& graph, const Cluster& cluster, std::unique_ptr<Evaluator> evaluator,
               MdpOptions options);

  const OpGraph& graph() const { return *graph_; }
  const Cluster& cluster() const { return *cluster_; }
  const MdpOptions& options() const { return options_; }
  int num_ops() const { return graph_->num_ops(); }
  int num_units() const { return static_cast<int>(unit_ops_.size()); }
  int num_devices() const { return cluster_->num_devices(); }
  const std::vector<int>& unit_of_op() const { return unit_of_op_; }
  // Per-node mode's visiting order: units by the topological rank of their first op.
  const std::vector<int>& unit_order() const { return unit_order_; }

  // Starts an episode. Per-node: builds the start placement (seeded by `seed`) and
  // evaluates it (one evaluation; none when the budget is spent).
  void reset(std::uint64_t seed);
  // One-shot: `devices` gives each unit a device (num_units() of them). Throws
  // ConfigError for a wrong length, a device out of range, a call in per-node mode
  // or after the episode ended.
  MdpStep step_placement(const std::vector<int>& devices);
  // Per-node: the current unit goes on `device`. Throws ConfigError as above.
  MdpStep step_device(int device);

  // The placement now (a device per op), the unit the next per-node step decides
  // (num_units() once done; 0 in one-shot mode), whether the episode ended.
  const Placement& placement() const { return placement_; }
  int position() const { return position_; }
  int current_unit() const;
  bool done() const { return done_; }
  // The penalised step of placement() when it was evaluated (+inf otherwise).
  double current_penalised_us() const { return current_us_; }

  const PlacementEnv& env() const { return env_; }
  bool exhausted() const { return env_.exhausted(); }

 private:
  void check_running(const char* call, MdpMode wanted) const;

  const OpGraph* graph_;
  const Cluster* cluster_;
  std::unique_ptr<Evaluator> evaluator_;
  MdpOptions options_;
  PlacementEnv env_;
  std::vector<int> unit_of_op_;
  std::vector<std::vector<int>> unit_ops_;
  std::vector<int> unit_order_;
  Placement fixed_start_;
  Placement placement_;
  int position_ = 0;
  bool done_ = true;
  bool started_ = false;
  double current_us_ = 0;
};

// Static per-op features for a learner's observation, row-major (num_ops x
// kOpFeatureColumns), each column scaled to about [0, 1] over the graph:
// compute time on device 0 by the cost model (/ the largest), output bytes (/ the
// largest), parameter bytes (/ the largest), in-degree and out-degree (/ the
// largest), topological depth (/ the deepest), and the phase (0 forward, 0.5
// backward, 1 update).
constexpr int kOpFeatureColumns = 7;
std::vector<float> op_feature_matrix(const OpGraph& graph, const Cluster& cluster);
const std::vector<std::string>& op_feature_names();

}  // namespace aware::rl
