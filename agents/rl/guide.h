// The guided hybrid's local search (agent "aware-guided"; ours, not a paper's):
// the policy proposes placements, a registered search placer (anneal-graph by
// default) refines the best of them, and what it finds becomes the best
// placement so far, which self-imitation then pulls the policy towards. REGAL
// (Paliwal et al., ICLR 2020) couples a policy and a genetic algorithm the same
// way; the refiner here is a short annealing chain. Torch-free: the trainer
// calls it between updates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "agents/rl/env.h"
#include "agents/rl/settings.h"
#include "core/placement.h"
#include "core/progress.h"

namespace aware::rl {

// Counts a search placer's evaluations run on an agent's behalf (its final
// progress report carries them all): the imitation target's search and the
// guide's refinements.
class DoneCounter final : public ProgressObserver {
 public:
  void on_progress(const Progress& p) override { done = std::max(done, p.done); }
  long long done = 0;
};

// What one refinement did (the latest one: Guide::last()).
struct Refinement {
  Placement start;                 // the placement it started from (empty: the refiner's own start)
  double start_us = std::numeric_limits<double>::infinity();   // its penalised step time
  Placement found;                 // the refiner's best (never worse than the start under the evaluator)
  double found_us = std::numeric_limits<double>::infinity();   // its penalised step time, as the env scored it
  long long evaluations = 0;       // evaluator calls it made, the env's re-scoring of `found` included
};

class Guide {
 public:
  // `settings`: guide_share in (0, 1), guide_evals >= 3, a registered
  // guide_refiner that searches from a start (ConfigError otherwise).
  Guide(const AgentSettings& settings, std::uint64_t seed);

  // A placement the policy sampled and its penalised step time: the best since
  // the last refinement is the next one's start (guide_from=proposal).
  void propose(const Placement& placement, double penalised_us);

  // The first refinement starts where the refiner itself starts (anneal-graph:
  // the best one-pass placer); the later ones from the best proposal since the
  // last (guide_from=proposal) or from the best placement so far (best).
  // Runs one refinement when the refiner has spent less than its share of
  // `env`'s evaluations (guide_by=evaluations) or wall-clock (time) and there is a start (and the budget holds at least
  // three more evaluations). Its evaluations count against `env`'s budget and
  // its time against the env's clock; `found` is scored by env.evaluate, so the
  // env's best includes it. Returns whether it ran.
  bool maybe_refine(PlacementEnv& env);
  // maybe_refine until it declines (guide_by=time may run several rounds after
  // one update); returns the rounds run.
  int refine(PlacementEnv& env);
  // The refiner's part (evaluations or seconds, by guide_by) is below its share.
  bool under_share(const PlacementEnv& env) const;

  long long rounds() const { return rounds_; }
  long long evaluations() const { return evaluations_; }
  long long improvements() const { return improvements_; }  // rounds (after the first) whose find beat their start
  double seconds() const { return seconds_; }
  const Refinement& last() const { return last_; }
  // Checkpoint state (rounds, evaluations, improvements, the pending proposal).
  std::string state() const;
  void restore(const std::string& state);

 private:
  AgentSettings settings_;
  std::uint64_t seed_;
  Placement proposal_;
  double proposal_us_ = std::numeric_limits<double>::infinity();
  long long rounds_ = 0, evaluations_ = 0, improvements_ = 0;
  double seconds_ = 0;
  Refinement last_;
};

}  // namespace aware::rl
