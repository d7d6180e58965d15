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
  // Search placer that refines the winner's placement on its rewritten graph
  // (e.g. "anneal"), with the evaluations left; empty: no refinement.
  std::string refine;
  long long budget_evals = 0;  // 0: every candidate once, plus 200 for the refinement
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
  int best = -1;                 // index into candidates; -1 when none was feasible
  StrategyResult best_strategy;  // the winner's rewrite (its placement refined if asked)
  double best_step_us = -1;      // after refinement
  double refined_from_us = -1;   // the winner's step before refinement; < 0 when none
  long long evaluations = 0;     // evaluator calls spent
};

// The candidate specs for `devices` devices (without the "single" placements,
// which the search adds per method).
std::vector<std::string> strategy_candidates(int devices, const StrategySearchOptions& options);

// Runs the search. Throws ConfigError for an unknown method, collective or refine
// placer before any work. Candidates that fail (out of memory, a batch too small)
// are recorded, not fatal. Bagging is never a candidate (it trains other models).
StrategySearchResult search_strategies(const OpGraph& graph, const Cluster& cluster,
                                       Evaluator& evaluator, const StrategySearchOptions& options);

}  // namespace aware
