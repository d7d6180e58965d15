// Certified lower bounds on the step time of every placement of a graph on a
// cluster, as the analytic simulator (contention mode) computes steps. Each term
// is a bound on its own; the best certified bound is the largest. The proofs are
// in docs/bounds.md. Solver-free; agents/exact adds the MILP's proven bound.
#pragma once

#include <string>
#include <vector>

namespace aware {

class OpGraph;
class Cluster;
class OpCostMatrix;
struct CostTable;

struct BoundTerm {
  std::string name;    // "critical-path", "work", "idle-ends", "milp", ...
  double us = 0;       // the bound, µs
  std::string detail;  // one line: what it counted, or why it does not apply
  bool applies = true; // false: not computed for this cluster (detail says why)
};

struct CertifiedBound {
  std::vector<BoundTerm> terms;
  // The largest term that applies (0 when none does).
  double best_us() const;
  // The name of that term ("" when none applies).
  std::string binding() const;
  // Adds a term (e.g. a solver's proven bound).
  void add(BoundTerm term) { terms.push_back(std::move(term)); }
};

// The solver-free terms:
//  - "critical-path": the longest chain, each op at its fastest device time, a
//    transfer on an edge only where memory forces its ends apart (the two
//    colocation units' parameters cannot share the largest device), at the
//    cheapest route of the cluster;
//  - "work": each stream's total time spread over the devices (lower_bound()'s term);
//  - "idle-ends": on devices that cost every op alike, the work term plus the
//    device time that must stay idle at the start (ops cannot begin before their
//    predecessors could have finished) and at the end (nor finish later than
//    their successors allow). Does not apply to clusters of unlike devices;
//  - "fork-join": the critical path with its parallel branches priced: each
//    branch either shares its fork's device or pays a transfer each way
//    (fork_join_bound below). Needs two devices or more;
//  - "chain-windows": the same chain, with every other op's work fitted between
//    the chain ops it must follow and precede, beside the chain op running then,
//    and the fork-join spans (fork_join_bound's cover_us). Two devices or more.
//
// `least_stretch`: the least factor the simulator may multiply an op's time by
// while it runs (fact S4 of docs/bounds.md needs 1: interference only stretches).
// A cost table's measured pair slowdowns, or slowdown.* options, below 1 shorten
// ops: pass the least of them (least_stretch() below) and every op's time is
// taken that much shorter, so the terms stay bounds.
CertifiedBound certified_bound(const OpGraph& graph, const Cluster& cluster,
                               const OpCostMatrix& costs, double least_stretch = 1.0);
CertifiedBound certified_bound(const OpGraph& graph, const Cluster& cluster);

// The least of 1 and a cost table's pair slowdowns.
double least_stretch(const CostTable& table);

// The fork-join term alone: one longest chain of fastest times (`time_us`, one
// per op), cut into spans between chain ops at most `max_span` chain steps
// apart. Each span lasts at least the least time, over every placement, in which
// the ops strictly between its two ends can run: each either runs on the
// device of the span's first op (one at a time per stream) or crosses devices on
// its way in, and on its way out unless it shares the last op's device, at the
// cheapest transfer of some edge on each of its chains. The best sum of spans
// along the chain, plus the chain's head and tail, bounds the step.
//
// The chain-windows term is computed on the same chain and spans: every op off
// the chain must run between the end of the last chain op it descends from and
// the start of the first chain op it leads to (its window), on the devices'
// time left beside the chain op running then; the least total idle time between
// chain ops that lets every window's work fit, and every span last its fork-join
// time, is found exactly (a covering problem over intervals of the chain, solved
// greedily). Chains of more than `max_chain` ops leave it at the critical path.
struct ForkJoinBound {
  double us = 0;       // the bound
  double path_us = 0;  // the chain's length alone (the critical path)
  int chain_ops = 0;   // ops on the chain
  int windows = 0;     // spans of the best split that beat the chain inside them
  double cover_us = 0;      // the chain-windows term (at least `us`)
  double cover_idle_us = 0; // of which time between chain ops (the rest: the chain)
};
ForkJoinBound fork_join_bound(const OpGraph& graph, const Cluster& cluster, const std::vector<double>& time_us,
                              int max_span = 48, int max_chain = 4000);

// The cheapest time `bytes` can take between two distinct devices of `cluster`
// (latency + bytes / bottleneck bandwidth over every ordered pair); 0 with fewer
// than two devices or more than 256 (too many pairs to look at; still a bound).
double cheapest_transfer_us(const Cluster& cluster, double bytes);

// The idle-ends term alone for `devices` identical devices, one stream: ops in
// `members` (true: counted) with times `time_us`, heads (earliest start) and
// tails (time after the op's end until the step can end) from the whole graph.
// Exposed for tests.
double idle_ends_bound_us(const std::vector<double>& time_us, const std::vector<double>& head_us,
                          const std::vector<double>& tail_us, const std::vector<bool>& members,
                          int devices);

}  // namespace aware
