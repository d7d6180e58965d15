#include "agents/baselines/register.h"

#include "agents/baselines/mesh_mapping.h"

#include "agents/baselines/placers.h"
#include "core/placer.h"

namespace aware {

std::vector<std::string> baseline_placer_names() {
  return {"single", "round-robin", "random", "expert", "metis", "m-topo",
          "heft",   "m-etf",       "m-sct",  "random-search", "random-sampling", "anneal"};
}

void register_baseline_placers() {
  using namespace baselines;
  PlacerRegistry& r = PlacerRegistry::instance();
  r.add("single", "everything on the fastest device that fits", make_single_placer);
  r.add("round-robin", "ops dealt to devices in topological order", make_round_robin_placer);
  r.add("random", "each op (or colocation group) on a seeded random device that fits",
        make_random_placer);
  r.add("expert",
        "the papers' human placements: layer i of RNN stacks on device i mod n, CNNs on one device",
        make_expert_placer);
  using T = OptionSpec::Type;
  r.add("metis", "METIS k-way partition, compute-time node weights, byte edge weights",
        {{"imbalance", T::kDouble, "1.05", "allowed load imbalance (METIS ufactor)"}},
        make_metis_placer);
  r.add("m-topo", "Baechi m-TOPO: topological fill with a per-device memory cap",
        make_m_topo_placer);
  r.add("heft", "HEFT: insertion-based list scheduling by upward rank", make_heft_placer);
  r.add("m-etf", "Baechi m-ETF: memory-aware earliest-task-first", make_m_etf_placer);
  r.add("m-sct", "Baechi m-SCT: ETF with favourite children (greedy rounding, no LP)",
        make_m_sct_placer);
  const OptionSpec threads{"threads", T::kInt, "1",
                           "evaluate batches on this many clones of the evaluator at once "
                           "(the same placements and result as one thread)", 1, 256};
  const OptionSpec anneal_threads{"threads", T::kInt, "1",
                                  "evaluate each move with the N-1 proposals that would follow its "
                                  "rejection, on N clones of the evaluator at once (the same placements "
                                  "and result as one thread)", 1, 256};
  r.add("random-search",
        "the best cheap placer (m-etf, heft, m-sct, expert, m-topo, single, round-robin), then "
        "random placements within the evaluator budget; the best seen",
        {threads}, make_random_search_placer);
  r.add("random-sampling",
        "best of uniform random placements within the evaluator budget (no seeded start: the "
        "control for learned agents, which start from random placements too)",
        {threads}, make_random_sampling_placer);
  r.add("anneal", "simulated annealing over single-op/group moves on the evaluator",
        {{"temperature", T::kDouble, "0.05", "start temperature, a fraction of the start step time"},
         {"cooling_to", T::kDouble, "0.001", "final temperature, a fraction of the start"},
         {"moves", T::kString, "unit", "unit (one group to a random device) or graph (anneal-graph's moves)"},
         {"calibrate", T::kString, "off", "on: the start temperature calibrated as anneal-graph's"},
         {"restart_after", T::kInt, "0", "evaluations without a new best before going on from the best (0: never)"},
         {"exchange_every", T::kInt, "0",
          "run as parallel chains (--chains, mpirun): each chain's evaluations between meetings "
          "where all continue from the best found (0: a tenth of a chain's budget)"},
         anneal_threads},
        make_anneal_placer);
  r.add("anneal-graph",
        "simulated annealing with moves that follow the graph (to a neighbour's device, neighbour "
        "swaps, connected regions of up to 8 groups), a calibrated start temperature and restarts "
        "from the best",
        {{"temperature", T::kDouble, "0.05", "start temperature when calibrate=off, a fraction of the start step time"},
         {"cooling_to", T::kDouble, "0.001", "final temperature, a fraction of the start"},
         {"moves", T::kString, "graph", "graph (the mix above) or unit (one group to a random device)"},
         {"calibrate", T::kString, "on",
          "on: the first moves descend and the start temperature accepts their median uphill step "
          "with probability 1/2"},
         {"restart_after", T::kInt, "-1",
          "evaluations without a new best before going on from the best (0: never; -1: a twentieth of "
          "the budget, at least 25)"},
         {"exchange_every", T::kInt, "0", "as for anneal"},
         anneal_threads},
        make_anneal_graph_placer);
  r.add("genetic", "genetic algorithm over group moves on the evaluator (tournament, two-point "
        "crossover in topological order, run mutation, elitism)",
        {{"population", T::kInt, "24", "individuals per generation"},
         {"elite", T::kInt, "2", "best individuals kept unchanged each generation"},
         {"tournament", T::kInt, "3", "tournament size for picking parents"},
         {"crossover", T::kDouble, "0.9", "probability a child crosses two parents"},
         {"mutation", T::kDouble, "0.3", "probability a child gets a run of units moved"},
         threads},
        make_genetic_placer);
  r.add("exhaustive",
        "every placement of the colocation units simulated, the best returned (small graphs: D^units; "
        "with a budget, the first placements in counting order only)",
        {{"max_placements", T::kDouble, "1e9", "refuse a graph with more placements than this (no budget given)",
          1, 1e18},
         {"report", T::kOutputPath, "", "write the count, whether every placement was simulated and the best (JSON)"},
         threads},
        make_exhaustive_placer);
  r.add("hilbert", "mesh: groups in graph order along a Hilbert curve over the cores (capacity respected)",
        make_hilbert_placer);
  r.add("force-directed",
        "mesh: hilbert, then each group pulled to the traffic-weighted centre of its partners (moves and swaps "
        "that lower traffic x hops)",
        make_force_directed_placer);
}

}  // namespace aware
