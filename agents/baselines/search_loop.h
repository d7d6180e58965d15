// INTERNAL to agents/baselines: what the searches over the evaluator share
// (random-search, genetic in search_placers.cc; anneal in anneal_placer.cc):
// the evaluation loop with its budget, best and progress, the cheap-placer
// start, the "threads" pool and the parallel chains' meetings.
#pragma once

#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/evaluator.h"
#include "core/evaluator_pool.h"
#include "core/placer.h"
#include "core/progress.h"
#include "core/search_exchange.h"

namespace aware::baselines {

inline constexpr long long kDefaultBudgetEvals = 2000;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Infeasible placements rank after every feasible one, by their step time.
struct Score {
  bool feasible = false;
  double step_us = kInf;
  bool better_than(const Score& other) const {
    if (feasible != other.feasible) return feasible;
    return step_us < other.step_us;
  }
};

// Counts evaluations, tracks the best, and talks to the progress observer.
class SearchLoop {
 public:
  SearchLoop(const std::string& task, const OpGraph& graph, const Cluster& cluster,
             const PlaceContext& context)
      : task_(task),
        graph_(graph),
        cluster_(cluster),
        context_(context),
        budget_(context.budget_evals > 0 ? context.budget_evals : kDefaultBudgetEvals),
        begin_(std::chrono::steady_clock::now()) {}

  long long budget() const { return budget_; }
  long long used() const { return used_; }
  bool exhausted() const {
    if (used_ >= budget_) return true;
    if (context_.progress != nullptr && context_.progress->cancelled()) return true;
    return context_.budget_seconds > 0 && elapsed_s() >= context_.budget_seconds;
  }
  long long remaining() const { return std::max<long long>(0, budget_ - used_); }
  // One evaluator call; updates the best.
  Score evaluate(const Placement& p) { return record(p, context_.evaluator->evaluate(graph_, cluster_, p)); }
  // One evaluator call on `prev` with `moves` applied (Evaluator::evaluate_move);
  // updates the best. `prev` is left as it was.
  Score evaluate_move(const Placement& prev, const std::vector<OpMove>& moves) {
    return note(context_.evaluator->evaluate_move(graph_, cluster_, prev, moves), prev, &moves);
  }
  // A batch evaluated on `pool`, recorded in order; returns the scores.
  std::vector<Score> evaluate_batch(EvaluatorPool& pool, const std::vector<Placement>& batch) {
    const std::vector<StepResult> results = pool.evaluate_batch(graph_, cluster_, batch);
    std::vector<Score> scores;
    scores.reserve(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) scores.push_back(record(batch[i], results[i]));
    return scores;
  }
  // An evaluation made elsewhere, counted as one call.
  Score record(const Placement& p, const StepResult& r) { return note(r, p, nullptr); }
  // The same for `prev` with `moves` applied (the step of the moved placement).
  Score record_move(const Placement& prev, const std::vector<OpMove>& moves, const StepResult& r) {
    return note(r, prev, &moves);
  }
  const Placement& best_placement() const { return best_placement_; }
  const Score& best() const { return best_; }
  // A better placement another chain found (no evaluation counted).
  void adopt(const Score& s, const Placement& p) {
    if (best_placement_.size() == 0 || s.better_than(best_)) {
      best_ = s;
      best_placement_ = p;
    }
  }
  // Reports every 1/200 of the budget and, so that a huge budget still shows
  // life, at least every kReportEveryS seconds.
  void report(bool final, const std::string& final_message = "done") {
    if (context_.progress == nullptr) return;
    const long long every = std::max<long long>(1, budget_ / 200);
    const auto now = std::chrono::steady_clock::now();
    if (!final && used_ % every != 0 && now - last_report_ < std::chrono::duration<double>(kReportEveryS))
      return;
    last_report_ = now;
    Progress pr;
    pr.task = task_;
    pr.done = used_;
    pr.total = budget_;
    pr.best_step_us = best_.feasible ? best_.step_us : -1;
    pr.elapsed_s = elapsed_s();
    pr.eta_s = used_ > 0 ? pr.elapsed_s / used_ * (budget_ - used_) : -1;
    if (final) pr.message = final_message;
    context_.progress->on_progress(pr);
  }

 private:
  // Counts `r`, the step of `p` with `moves` (if any) applied, and keeps it if best.
  Score note(const StepResult& r, const Placement& p, const std::vector<OpMove>* moves) {
    ++used_;
    const Score s{r.feasible, r.step_time_us};
    if (best_placement_.size() == 0 || s.better_than(best_)) {
      best_ = s;
      best_placement_ = p;
      if (moves != nullptr) apply_moves(graph_, cluster_, best_placement_, *moves);
    }
    report(false);
    return s;
  }
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }
  std::string task_;
  const OpGraph& graph_;
  const Cluster& cluster_;
  const PlaceContext& context_;
  long long budget_;
  long long used_ = 0;
  Score best_;
  Placement best_placement_;
  std::chrono::steady_clock::time_point begin_;
  std::chrono::steady_clock::time_point last_report_ = begin_;
  static constexpr double kReportEveryS = 0.5;
};

// The "threads" option: an EvaluatorPool of that many clones of the context's
// evaluator, or null for one thread (evaluate in place).
std::unique_ptr<EvaluatorPool> pool_for(const PlaceContext& context, const std::string& placer);

void require_evaluator(const PlaceContext& context, const std::string& placer);

// Parallel chains (PlaceContext::exchange): each runs the search with its share
// of the budget and a seed of its own (chain 0 keeps the run's seed).
inline constexpr long long kMinChainEvals = 16;
PlaceContext chain_context(const PlaceContext& context, const std::string& placer);

// Brings this chain's best to a meeting and takes the best of all into `loop`.
ChainMeeting meet_chains(const PlaceContext& context, SearchLoop& loop, bool stop);

// The starting point: context.start when given, else the best of the cheap
// placers under the evaluator (their evaluations count against the budget).
void seed_search(SearchLoop& loop, const OpGraph& graph, const Cluster& cluster, const PlaceContext& context);

}  // namespace aware::baselines
