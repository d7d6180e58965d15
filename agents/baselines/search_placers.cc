// Stochastic search over the evaluator: "random-search" (the honest control with
// the RL agents' simulator budget), "random-sampling" and "genetic" ("anneal" is
// in anneal_placer.cc). Each counts every evaluator call against
// PlaceContext::budget_evals, reports through PlaceContext::progress, stops early
// when cancelled or past budget_seconds, and returns the best placement seen.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "agents/common/placer_common.h"
#include "agents/baselines/placers.h"
#include "agents/baselines/search_loop.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware::baselines {

using namespace aware::placing;  // the shared placer helpers (agents/common)
namespace {

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

}  // namespace aware::baselines
