// Search over the strategy space: replica count x collective x hybrid placer x
// pipeline depth, each candidate rewritten and scored by one evaluator, then
// (optionally) the winner's placement refined by a search placer on its
// rewritten graph. What `aware strategy search` runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/registry.h"
#include "strategies/strategy.h"

namespace aware {

class Cluster;
class Evaluator;
class OpGraph;
class ProgressObserver;

struct StrategySearchOptions {
  // Placers for the unsplit step and inside each hybrid group.
  std::vector<std::string> methods = {"m-etf"};
  std::vector<std::string> collectives = {"ring", "tree", "ps", "reduce"};
  bool pipelines = true;     // pipeline:S for S = 2, 4, ... up to the devices, micro 4S
  bool overlap_off = false;  // also each dp candidate with overlap=off
  // Also 3d:dp=D,tp=T,pp=P over every device: T a power of two up to 8 (a node),
  // P dividing what is left, micro-batches 4P in 1F1B order when P > 1, ZeRO-1
  // or none when D > 1, and each recomputation (none, selective, full).
  bool three_d = false;
  // Search placer that refines the winner's placement on its rewritten graph
  // (e.g. "anneal"), with the evaluations left; empty: no refinement.
  std::string refine;
  // Evaluations in all, the refinement's included; 0: every candidate once, plus
  // 200 for the refinement (its placer's and one for its result's step).
  long long budget_evals = 0;
  std::uint64_t seed = 1;
  ProgressObserver* progress = nullptr;
};

struct StrategyCandidate {
  std::string spec;          // as tried ("dp:4,collective=ps")
  std::string status;        // "ok", "oom", "infeasible", "error"
  std::string reason;
  double step_time_us = -1;
  int replicas = 0;
  int devices_used = 0;
};

struct StrategySearchResult {
  std::vector<StrategyCandidate> candidates;  // in the order tried
  // Candidates the budget left untried (or a cancel), in the order they would
  // have been tried; empty when every candidate ran.
  std::vector<std::string> not_tried;
  // Why refinement was asked for and not run (the budget was spent); "" otherwise.
  std::string refine_skipped;
  int best = -1;                 // index into candidates; -1 when none was feasible
  StrategyResult best_strategy;  // the winner's rewrite (its placement refined if asked)
  double best_step_us = -1;      // after refinement
  double refined_from_us = -1;   // the winner's step before refinement; < 0 when none
  long long evaluations = 0;     // evaluator calls spent; never more than a budget > 0
};

// The candidate specs for `devices` devices (without the place:METHOD ones, which
// the search adds per method), in the order they are tried: each kind's most
// parallel form first (dp over every device with each collective, the deepest
// pipeline, the hybrid with most groups, place:METHOD), one of each kind in turn,
// so that a budget smaller than the list still tries each kind's likeliest winner.
std::vector<std::string> strategy_candidates(int devices, const StrategySearchOptions& options);

// Runs the search. Throws ConfigError before any work for an unknown method or
// collective, an empty list of either, or a refine placer that does not search by
// simulation (needs_evaluator(): it could not improve the winner). With a budget,
// a candidate whose method searches gets the evaluations left but one (its own
// step's); candidates that no longer fit are listed in not_tried. Candidates that fail (out of memory, a batch too small)
// are recorded, not fatal. Bagging is never a candidate (it trains other models).
StrategySearchResult search_strategies(const OpGraph& graph, const Cluster& cluster,
                                       Evaluator& evaluator, const StrategySearchOptions& options);

}  // namespace aware
