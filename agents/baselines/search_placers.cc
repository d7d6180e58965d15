// Stochastic search over the evaluator: "random-search" (the honest control with
// the RL agents' simulator budget) and "anneal" (FlexFlow-style Metropolis moves
// of one colocation unit at a time). Both count every evaluator call against
// PlaceContext::budget_evals, report through PlaceContext::progress, stop early
// when cancelled or past budget_seconds, and return the best placement seen.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "agents/baselines/common.h"
#include "agents/baselines/placers.h"
#include "core/errors.h"
#include "core/evaluator_pool.h"
#include "core/graph_algorithms.h"
#include "core/progress.h"
#include "core/search_exchange.h"

namespace aware::baselines {
namespace {

constexpr long long kDefaultBudgetEvals = 2000;
constexpr double kInf = std::numeric_limits<double>::infinity();

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
  const Placement& best_placement() const { return best_placement_; }
  const Score& best() const { return best_; }
  // A better placement another chain found (no evaluation counted).
  void adopt(const Score& s, const Placement& p) {
    if (best_placement_.size() == 0 || s.better_than(best_)) {
      best_ = s;
      best_placement_ = p;
    }
  }
  void report(bool final) {
    if (context_.progress == nullptr) return;
    const long long every = std::max<long long>(1, budget_ / 200);
    if (!final && used_ % every != 0) return;
    Progress pr;
    pr.task = task_;
    pr.done = used_;
    pr.total = budget_;
    pr.best_step_us = best_.feasible ? best_.step_us : -1;
    pr.elapsed_s = elapsed_s();
    pr.eta_s = used_ > 0 ? pr.elapsed_s / used_ * (budget_ - used_) : -1;
    if (final) pr.message = "done";
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
};

// The "threads" option: an EvaluatorPool of that many clones of the context's
// evaluator, or null for one thread (evaluate in place).
std::unique_ptr<EvaluatorPool> pool_for(const PlaceContext& context, const std::string& placer) {
  const long long threads = option_int(context.options, "threads", 1, placer);
  if (threads < 1 || threads > 256) throw ConfigError(placer + ": 'threads' must be 1..256");
  if (threads == 1) return nullptr;
  return std::make_unique<EvaluatorPool>(*context.evaluator, static_cast<int>(threads));
}

void require_evaluator(const PlaceContext& context, const std::string& placer) {
  if (context.evaluator == nullptr)
    throw ConfigError(placer + " needs an evaluator (PlaceContext::evaluator is null)");
}

// Parallel chains (PlaceContext::exchange): each runs the search with its share
// of the budget and a seed of its own (chain 0 keeps the run's seed).
constexpr long long kMinChainEvals = 16;

PlaceContext chain_context(const PlaceContext& context, const std::string& placer) {
  PlaceContext chain = context;
  if (context.exchange == nullptr) return chain;
  const long long chains = context.exchange->chains();
  const long long total = context.budget_evals > 0 ? context.budget_evals : kDefaultBudgetEvals;
  if (total / chains < kMinChainEvals)
    throw ConfigError(placer + ": " + std::to_string(total) + " evaluations split over " + std::to_string(chains) +
                      " chains leaves fewer than " + std::to_string(kMinChainEvals) +
                      " each: raise --budget-evals or run fewer chains");
  if (context.budget_seconds > 0)
    throw ConfigError(placer + ": parallel chains take an evaluation budget, not --budget-seconds "
                      "(chains meet after equal numbers of evaluations)");
  chain.budget_evals = total / chains;
  chain.seed = context.seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(context.exchange->chain());
  return chain;
}

// Brings this chain's best to a meeting and takes the best of all into `loop`.
ChainMeeting meet_chains(const PlaceContext& context, SearchLoop& loop, bool stop) {
  ChainBest mine;
  mine.feasible = loop.best().feasible;
  mine.step_us = loop.best().step_us;
  mine.placement = loop.best_placement();
  mine.stop = stop;
  ChainMeeting met = context.exchange->meet(mine);
  loop.adopt(Score{met.best.feasible, met.best.step_us}, met.best.placement);
  return met;
}

// The starting point: context.start when given, else the best of the cheap
// placers under the evaluator (their evaluations count against the budget).
void seed_search(SearchLoop& loop, const OpGraph& graph, const Cluster& cluster,
                 const PlaceContext& context) {
  if (context.start != nullptr) {
    check_placement(graph, cluster, *context.start, "start placement");
    loop.evaluate(*context.start);
    return;
  }
  PlaceContext cheap;
  cheap.evaluator = context.evaluator;
  cheap.seed = context.seed;
  using Factory = std::unique_ptr<Placer> (*)();
  for (Factory make : {make_m_etf_placer, make_heft_placer, make_m_sct_placer, make_expert_placer,
                       make_m_topo_placer, make_single_placer, make_round_robin_placer}) {
    if (loop.exhausted() && loop.used() > 0) break;
    loop.evaluate(make()->place(graph, cluster, cheap));
  }
}


// "random-search" starts from the best cheap placer (seed_search) and then samples;
// "random-sampling" only samples (best of uniform random placements, the control for
// a learned agent that also starts from random placements).
class RandomSearchPlacer final : public Placer {
 public:
  explicit RandomSearchPlacer(bool seeded) : seeded_(seeded) {}
  std::string name() const override { return seeded_ ? "random-search" : "random-sampling"; }
  bool needs_evaluator() const override { return true; }
  bool runs_as_chains() const override { return true; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& run_context) override {
    check_context(run_context, name());
    require_evaluator(run_context, name());
    check_graph_can_fit(graph, cluster);
    // As one of several chains: its share of the samples; they meet once, at the end.
    const PlaceContext context = chain_context(run_context, name());
    SearchLoop loop(name() + " on " + graph.name(), graph, cluster, context);
    if (seeded_) seed_search(loop, graph, cluster, context);
    const Units units = colocation_units(graph);
    const std::vector<int> order = topological_order(graph);
    MersenneRng rng(context.seed);
    const std::unique_ptr<EvaluatorPool> pool = pool_for(context, name());
    if (!pool) {
      // At least one evaluation, so a search cancelled before it began still returns a placement.
      while (loop.used() == 0 || !loop.exhausted())
        loop.evaluate(random_placement(graph, cluster, units, order, rng));
    } else {
      // The same placements in the same order, evaluated a batch at a time on the
      // pool: the result is the one-thread result. The evaluation budget is exact;
      // time and cancellation are checked per batch.
      const long long batch_size = 16LL * pool->threads();
      std::vector<Placement> batch;
      while (loop.used() == 0 || !loop.exhausted()) {
        batch.clear();
        const long long n = std::max<long long>(1, std::min(batch_size, loop.remaining()));
        for (long long i = 0; i < n; ++i) batch.push_back(random_placement(graph, cluster, units, order, rng));
        loop.evaluate_batch(*pool, batch);
      }
    }
    if (context.exchange != nullptr) meet_chains(context, loop, true);
    loop.report(true);
    return loop.best_placement();
  }

 private:
  bool seeded_;
};

class AnnealPlacer final : public Placer {
 public:
  std::string name() const override { return "anneal"; }
  bool needs_evaluator() const override { return true; }
  bool runs_as_chains() const override { return true; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& run_context) override {
    check_context(run_context, name());
    require_evaluator(run_context, name());
    const PlaceContext context = chain_context(run_context, name());
    const long long exchange_every = option_int(context.options, "exchange_every", 0, name());
    if (exchange_every < 0) throw ConfigError(name() + ": 'exchange_every' must be >= 0");
    // Initial temperature as a fraction of the start's step time; the schedule
    // cools geometrically to `cooling_to` times that by the end of the budget.
    const double t0_fraction = option_double(context.options, "temperature", 0.05, name());
    const double cooling_to = option_double(context.options, "cooling_to", 1e-3, name());
    if (!(t0_fraction >= 0) || !(cooling_to > 0 && cooling_to <= 1))
      throw ConfigError(name() + ": 'temperature' must be >= 0 and 'cooling_to' in (0, 1]");
    check_graph_can_fit(graph, cluster);

    SearchLoop loop("anneal on " + graph.name(), graph, cluster, context);
    seed_search(loop, graph, cluster, context);
    const Units units = colocation_units(graph);
    const int D = cluster.num_devices();
    Placement current = loop.best_placement();
    Score current_score = loop.best();
    if (D < 2 || units.num_units() == 0) {
      if (context.exchange != nullptr) meet_chains(context, loop, true);
      loop.report(true);
      return context.exchange != nullptr ? loop.best_placement() : current;
    }
    MersenneRng rng(context.seed);
    const double t0 = t0_fraction * (current_score.feasible ? current_score.step_us : 0);
    const long long moves = std::max<long long>(1, loop.budget() - loop.used());
    const double decay = std::pow(cooling_to, 1.0 / static_cast<double>(moves));
    double temperature = t0;
    std::vector<OpMove> move;
    // Chains meet after equal numbers of evaluations, and each continues from the
    // best any of them has found; they stop together.
    const long long every =
        exchange_every > 0 ? exchange_every : std::max<long long>(1, loop.budget() / 10);
    long long next_meeting = loop.used() + every;
    while (true) {
      if (context.exchange != nullptr) {
        const bool stop = loop.exhausted();
        if (stop || loop.used() >= next_meeting) {
          const ChainMeeting met = meet_chains(context, loop, stop);
          const Score theirs{met.best.feasible, met.best.step_us};
          if (theirs.better_than(current_score)) {
            current = met.best.placement;
            current_score = theirs;
          }
          if (met.stop) break;
          next_meeting = loop.used() + every;
        }
      } else if (loop.exhausted()) {
        break;
      }
      const int unit = rng.below(units.num_units());
      const std::vector<int>& members = units.ops_of_unit[unit];
      const int from = current[members.front()];
      int to = rng.below(D - 1);
      if (to >= from) ++to;
      move.clear();
      for (int m : members) move.push_back({m, to});
      // From the current placement, so an evaluator that keeps its last step
      // (the analytic one) re-simulates only what the move can change.
      const Score proposed = loop.evaluate_move(current, move);
      bool accept;
      if (!proposed.feasible) {
        accept = !current_score.feasible && proposed.step_us <= current_score.step_us;
      } else if (!current_score.feasible || proposed.step_us <= current_score.step_us) {
        accept = true;
      } else {
        const double delta = proposed.step_us - current_score.step_us;
        accept = temperature > 0 && rng.unit() < std::exp(-delta / temperature);
      }
      if (accept) {
        current_score = proposed;
        for (int m : members) current[m] = to;
      }
      temperature *= decay;
    }
    loop.report(true);
    // The best seen, which includes the start: never worse than where it began.
    return loop.best_placement();
  }
};


// "genetic": a steady generational GA over colocation units (the GA placement of
// hybrid parallelism in Akintoye et al. 2022, F5): a population seeded with the
// cheap placers (or the start placement) and random placements; parents by
// tournament; two-point crossover over the units in topological order (so each
// child keeps contiguous regions of either parent); mutation moves a short run of
// consecutive units to one random device; the best `elite` survive each generation.
class GeneticPlacer final : public Placer {
 public:
  std::string name() const override { return "genetic"; }
  bool needs_evaluator() const override { return true; }
  Placement place(const OpGraph& graph, const Cluster& cluster,
                  const PlaceContext& context) override {
    check_context(context, name());
    require_evaluator(context, name());
    const long long population = option_int(context.options, "population", 24, name());
    const int elite = static_cast<int>(option_int(context.options, "elite", 2, name()));
    const int tournament = static_cast<int>(option_int(context.options, "tournament", 3, name()));
    const double crossover = option_double(context.options, "crossover", 0.9, name());
    const double mutation = option_double(context.options, "mutation", 0.3, name());
    if (population < 2 || population > 100000 || elite < 0 || elite >= population ||
        tournament < 1 || !(crossover >= 0 && crossover <= 1) || !(mutation >= 0 && mutation <= 1))
      throw ConfigError(name() + ": needs population >= 2, 0 <= elite < population, "
                        "tournament >= 1, crossover and mutation in [0, 1]");
    check_graph_can_fit(graph, cluster);

    SearchLoop loop("genetic on " + graph.name(), graph, cluster, context);
    const Units units = colocation_units(graph);
    const int U = units.num_units();
    const int D = cluster.num_devices();
    // Units in topological order of their first op.
    std::vector<int> unit_order;
    {
      std::vector<char> seen(U, 0);
      for (int op : topological_order(graph)) {
        const int u = units.unit_of_op[op];
        if (!seen[u]) {
          seen[u] = 1;
          unit_order.push_back(u);
        }
      }
    }
    struct Individual {
      std::vector<int> device_of_unit;
      Score score;
    };
    auto to_placement = [&](const std::vector<int>& genes) {
      Placement p(std::vector<int>(graph.num_ops(), 0));
      for (int u = 0; u < U; ++u)
        for (int op : units.ops_of_unit[u]) p[op] = genes[u];
      return p;
    };
    auto genes_of = [&](const Placement& p) {
      std::vector<int> genes(U);
      for (int u = 0; u < U; ++u) genes[u] = p[units.ops_of_unit[u].front()];
      return genes;
    };
    std::vector<Individual> pop;
    auto add = [&](std::vector<int> genes) {
      const Score s = loop.evaluate(to_placement(genes));
      pop.push_back({std::move(genes), s});
    };
    MersenneRng rng(context.seed);
    const std::vector<int> topo = topological_order(graph);
    if (context.start != nullptr) {
      check_placement(graph, cluster, *context.start, "start placement");
      add(genes_of(*context.start));
    } else {
      PlaceContext cheap;
      cheap.evaluator = context.evaluator;
      cheap.seed = context.seed;
      using Factory = std::unique_ptr<Placer> (*)();
      for (Factory make : {make_m_etf_placer, make_heft_placer, make_m_sct_placer,
                           make_m_topo_placer, make_round_robin_placer}) {
        if (loop.exhausted() && loop.used() > 0) break;
        add(genes_of(make()->place(graph, cluster, cheap)));
      }
    }
    // threads > 1: each batch of new individuals (the random start, then each
    // generation's children) is drawn first, in the one-thread order, and evaluated
    // on an EvaluatorPool; the result is the one-thread result when only the
    // evaluation budget ends the search (time and cancellation are checked per batch).
    const std::unique_ptr<EvaluatorPool> pool = pool_for(context, name());
    auto add_batch = [&](std::vector<std::vector<int>> batch, std::vector<Individual>& into) {
      std::vector<Placement> placements;
      for (const std::vector<int>& genes : batch) placements.push_back(to_placement(genes));
      const std::vector<Score> scores = loop.evaluate_batch(*pool, placements);
      for (size_t i = 0; i < batch.size(); ++i) into.push_back({std::move(batch[i]), scores[i]});
    };
    if (pool) {
      if (static_cast<long long>(pop.size()) < population && !loop.exhausted()) {
        std::vector<std::vector<int>> batch;
        const long long n = std::min(population - static_cast<long long>(pop.size()), loop.remaining());
        for (long long i = 0; i < n; ++i) batch.push_back(genes_of(random_placement(graph, cluster, units, topo, rng)));
        add_batch(std::move(batch), pop);
      }
    } else {
      while (static_cast<long long>(pop.size()) < population && !loop.exhausted())
        add(genes_of(random_placement(graph, cluster, units, topo, rng)));
    }
    if (D < 2 || U == 0 || pop.size() < 2) {
      loop.report(true);
      return loop.best_placement();
    }
    auto pick = [&]() -> const Individual& {
      int best = rng.below(static_cast<int>(pop.size()));
      for (int k = 1; k < tournament; ++k) {
        const int other = rng.below(static_cast<int>(pop.size()));
        if (pop[other].score.better_than(pop[best].score)) best = other;
      }
      return pop[best];
    };
    while (!loop.exhausted()) {
      std::vector<Individual> next;
      std::vector<int> ranked(pop.size());
      for (std::size_t i = 0; i < pop.size(); ++i) ranked[i] = static_cast<int>(i);
      std::stable_sort(ranked.begin(), ranked.end(),
                       [&](int a, int b) { return pop[a].score.better_than(pop[b].score); });
      for (int i = 0; i < elite && i < static_cast<int>(ranked.size()); ++i) next.push_back(pop[ranked[i]]);
      auto breed = [&]() {
        std::vector<int> child = pick().device_of_unit;
        if (rng.unit() < crossover) {
          const std::vector<int>& other = pick().device_of_unit;
          int a = rng.below(U), b = rng.below(U);
          if (a > b) std::swap(a, b);
          for (int k = a; k <= b; ++k) child[unit_order[k]] = other[unit_order[k]];
        }
        if (rng.unit() < mutation) {
          const int run = 1 + rng.below(std::max(1, U / 16));
          const int first = rng.below(U);
          const int device = rng.below(D);
          for (int k = first; k < std::min(U, first + run); ++k) child[unit_order[k]] = device;
        }
        return child;
      };
      if (pool) {
        std::vector<std::vector<int>> batch;
        const long long n = std::min(population - static_cast<long long>(next.size()), loop.remaining());
        for (long long i = 0; i < n; ++i) batch.push_back(breed());
        add_batch(std::move(batch), next);
        pop = std::move(next);
        continue;
      }
      while (static_cast<long long>(next.size()) < population && !loop.exhausted()) {
        std::vector<int> child = breed();
        const Score s = loop.evaluate(to_placement(child));
        next.push_back({std::move(child), s});
      }
      pop = std::move(next);
    }
    loop.report(true);
    return loop.best_placement();
  }
};

}  // namespace

std::unique_ptr<Placer> make_genetic_placer() { return std::make_unique<GeneticPlacer>(); }

std::unique_ptr<Placer> make_random_search_placer() {
  return std::make_unique<RandomSearchPlacer>(/*seeded=*/true);
}
std::unique_ptr<Placer> make_random_sampling_placer() {
  return std::make_unique<RandomSearchPlacer>(/*seeded=*/false);
}
std::unique_ptr<Placer> make_anneal_placer() { return std::make_unique<AnnealPlacer>(); }

}  // namespace aware::baselines
