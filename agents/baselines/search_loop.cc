// What the evaluator searches share (search_loop.h).
#include "agents/baselines/search_loop.h"

#include <map>
#include <string>

#include "agents/common/placer_common.h"
#include "agents/baselines/placers.h"
#include "core/errors.h"

namespace aware::baselines {

using namespace aware::placing;  // the shared placer helpers (agents/common)

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
  for (const std::unique_ptr<Placer>& placer : cheap_placers()) {
    if (loop.exhausted() && loop.used() > 0) break;
    loop.evaluate(placer->place(graph, cluster, cheap));
  }
}

std::vector<std::unique_ptr<Placer>> cheap_placers() {
  // The factories themselves, not the registry: the searches run also where
  // nothing was registered. The list and its order are agents/common's.
  static const std::map<std::string, std::unique_ptr<Placer> (*)()> factories = {
      {"m-etf", make_m_etf_placer},   {"heft", make_heft_placer},     {"m-sct", make_m_sct_placer},
      {"expert", make_expert_placer}, {"m-topo", make_m_topo_placer}, {"single", make_single_placer},
      {"round-robin", make_round_robin_placer}};
  std::vector<std::unique_ptr<Placer>> out;
  for (const std::string& name : cheap_placer_names()) out.push_back(factories.at(name)());
  return out;
}

}  // namespace aware::baselines
