// Simulated annealing over the evaluator, in two configurations of one search:
//   "anneal"       FlexFlow-style Metropolis moves of one colocation unit to a
//                  random other device, a start temperature given as a fraction of
//                  the start's step time, geometric cooling over the budget;
//   "anneal-graph" moves that follow the graph (a unit to a neighbour's device,
//                  a swap of two neighbours' devices, a connected region of up to
//                  8 units moved together, besides the random move), a start
//                  temperature calibrated on the first moves' uphill steps, and
//                  restarts from the best placement when the search has not
//                  improved on it for a while.
// Either's options turn the other's parts on or off (moves, calibrate,
// restart_after). Both count every evaluator call against the budget, start from
// the best cheap placer (or the given start), run as parallel chains, and return
// the best placement seen.
//
// With threads=N, each evaluation also evaluates the N-1 proposals that would
// follow it if it and they were all rejected, on a pool of evaluator clones at
// once. The chain itself is unchanged: every proposal is still drawn in order
// from the chain's generator, and one that matches a speculated move from the
// same placement takes that move's result instead of calling the evaluator. So
// the placements, counts and result are the one-thread ones; a speculated
// result is used whenever the move before it was rejected (about a third of all
// evaluations on the zoo models, where ties count as accepted).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agents/common/placer_common.h"
#include "agents/baselines/placers.h"
#include "agents/baselines/search_loop.h"
#include "core/errors.h"

namespace aware::baselines {

using namespace aware::placing;  // the shared placer helpers (agents/common)
namespace {

// Uphill steps a calibrated start temperature accepts with probability 1/2: the median one.
constexpr double kCalibratedAcceptance = 0.5;
constexpr int kMaxRegionUnits = 8;

// One proposal: units and their new devices.
using UnitMoves = std::vector<std::pair<int, int>>;

// Proposes moves from the current placement.
class MoveMaker {
 public:
  MoveMaker(const OpGraph& graph, const Units& units, int devices, bool graph_moves)
      : units_(units), devices_(devices), graph_moves_(graph_moves),
        neighbours_(static_cast<size_t>(units.num_units())) {
    for (const Edge& e : graph.edges()) {
      const int a = units.unit_of_op[e.src], b = units.unit_of_op[e.dst];
      if (a == b) continue;
      neighbours_[a].push_back(b);
      neighbours_[b].push_back(a);
    }
    for (auto& n : neighbours_) {
      std::sort(n.begin(), n.end());
      n.erase(std::unique(n.begin(), n.end()), n.end());
    }
  }

  // Fills `out` with one proposal from `current` (never empty).
  void propose(const Placement& current, MersenneRng& rng, UnitMoves& out) {
    out.clear();
    if (!graph_moves_) {
      random_move(current, rng, out);
      return;
    }
    const double kind = rng.unit();
    const int u = rng.below(units_.num_units());
    if (kind < 0.35) {
      random_move(current, rng, out, u);
    } else if (kind < 0.60) {
      const int v = other_neighbour(current, u, rng);
      if (v < 0) return random_move(current, rng, out, u);
      out.push_back({u, device(current, v)});
    } else if (kind < 0.80) {
      const int v = other_neighbour(current, u, rng);
      if (v < 0) return random_move(current, rng, out, u);
      out.push_back({u, device(current, v)});
      out.push_back({v, device(current, u)});
    } else {
      region_move(current, rng, out, u);
    }
  }

 private:
  int device(const Placement& p, int unit) const { return p[units_.ops_of_unit[unit].front()]; }

  // Unit `u` (drawn when < 0) to a uniformly random other device.
  void random_move(const Placement& current, MersenneRng& rng, UnitMoves& out, int u = -1) {
    if (u < 0) u = rng.below(units_.num_units());
    const int from = device(current, u);
    int to = rng.below(devices_ - 1);
    if (to >= from) ++to;
    out.push_back({u, to});
  }

  // A random neighbour of `u` on another device, or -1.
  int other_neighbour(const Placement& current, int u, MersenneRng& rng) {
    candidates_.clear();
    const int mine = device(current, u);
    for (int v : neighbours_[u])
      if (device(current, v) != mine) candidates_.push_back(v);
    return candidates_.empty() ? -1 : candidates_[rng.below(static_cast<int>(candidates_.size()))];
  }

  // A connected region of 2..8 units around `u` (breadth first) to one device:
  // one that a unit next to the region is on, else a random one.
  void region_move(const Placement& current, MersenneRng& rng, UnitMoves& out, int u) {
    const int size = 2 + rng.below(kMaxRegionUnits - 1);
    region_.assign(1, u);
    in_region_.assign(static_cast<size_t>(units_.num_units()), 0);
    in_region_[u] = 1;
    for (size_t head = 0; head < region_.size() && static_cast<int>(region_.size()) < size; ++head)
      for (int v : neighbours_[region_[head]]) {
        if (in_region_[v]) continue;
        in_region_[v] = 1;
        region_.push_back(v);
        if (static_cast<int>(region_.size()) == size) break;
      }
    const int from = device(current, u);
    candidates_.clear();
    for (int r : region_)
      for (int v : neighbours_[r])
        if (!in_region_[v] && device(current, v) != from) candidates_.push_back(device(current, v));
    int to;
    if (!candidates_.empty()) {
      to = candidates_[rng.below(static_cast<int>(candidates_.size()))];
    } else {
      to = rng.below(devices_ - 1);
      if (to >= from) ++to;
    }
    for (int r : region_)
      if (device(current, r) != to) out.push_back({r, to});
    if (out.empty()) random_move(current, rng, out, u);
  }

  const Units& units_;
  int devices_;
  bool graph_moves_;
  std::vector<std::vector<int>> neighbours_;  // units joined by an edge, sorted
  std::vector<int> candidates_, region_;
  std::vector<char> in_region_;
};

// Metropolis acceptance (infeasible placements rank after feasible ones).
bool accept_move(const Score& proposed, const Score& current, double temperature, MersenneRng& rng) {
  if (!proposed.feasible) return !current.feasible && proposed.step_us <= current.step_us;
  if (!current.feasible || proposed.step_us <= current.step_us) return true;
  const double delta = proposed.step_us - current.step_us;
  return temperature > 0 && rng.unit() < std::exp(-delta / temperature);
}

bool same_moves(const std::vector<OpMove>& a, const std::vector<OpMove>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].op != b[i].op || a[i].device != b[i].device) return false;
  return true;
}

// Moves evaluated ahead (threads=N): the proposals that would follow the last
// one evaluated if every one of them were rejected, from the placement the chain
// had then (`version` counts the chain's changes of placement), with their steps.
struct Speculation {
  long long version = -1;
  std::vector<std::vector<OpMove>> moves;
  std::vector<StepResult> results;
  long long hits = 0, made = 0;
};

class AnnealPlacer final : public Placer {
 public:
  explicit AnnealPlacer(bool graph) : graph_(graph) {}
  std::string name() const override { return graph_ ? "anneal-graph" : "anneal"; }
  bool needs_evaluator() const override { return true; }
  bool runs_as_chains() const override { return true; }
  Placement place(const OpGraph& graph, const Cluster& cluster, const PlaceContext& run_context) override;

 private:
  bool graph_;
};

Placement AnnealPlacer::place(const OpGraph& graph, const Cluster& cluster, const PlaceContext& run_context) {
  check_context(run_context, name());
  require_evaluator(run_context, name());
  const PlaceContext context = chain_context(run_context, name());
  const long long exchange_every = option_int(context.options, "exchange_every", 0, name());
  if (exchange_every < 0) throw ConfigError(name() + ": 'exchange_every' must be >= 0");
  // Initial temperature as a fraction of the start's step time (or calibrated);
  // the schedule cools geometrically to `cooling_to` times that by the end.
  const double t0_fraction = option_double(context.options, "temperature", 0.05, name());
  const double cooling_to = option_double(context.options, "cooling_to", 1e-3, name());
  if (!(t0_fraction >= 0) || !(cooling_to > 0 && cooling_to <= 1))
    throw ConfigError(name() + ": 'temperature' must be >= 0 and 'cooling_to' in (0, 1]");
  const std::string moves_kind = option_string(context.options, "moves", graph_ ? "graph" : "unit");
  if (moves_kind != "graph" && moves_kind != "unit")
    throw ConfigError(name() + ": 'moves' must be graph or unit, got '" + moves_kind + "'");
  const std::string calibrate_s = option_string(context.options, "calibrate", graph_ ? "on" : "off");
  if (calibrate_s != "on" && calibrate_s != "off")
    throw ConfigError(name() + ": 'calibrate' must be on or off, got '" + calibrate_s + "'");
  long long restart_after = option_int(context.options, "restart_after", graph_ ? -1 : 0, name());
  if (restart_after < -1) throw ConfigError(name() + ": 'restart_after' must be -1 (automatic), 0 (never) or more");
  check_graph_can_fit(graph, cluster);

  SearchLoop loop(name() + " on " + graph.name(), graph, cluster, context);
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
  MoveMaker maker(graph, units, D, moves_kind == "graph");
  const std::unique_ptr<EvaluatorPool> pool = pool_for(context, name());
  UnitMoves proposal;
  std::vector<OpMove> move;
  long long version = 0;  // bumped whenever `current` changes
  Speculation ahead;
  const auto to_ops = [&](const UnitMoves& units_moved, std::vector<OpMove>& out) {
    out.clear();
    for (auto [u, d] : units_moved)
      for (int m : units.ops_of_unit[u]) out.push_back({m, d});
  };
  // `move` from `current`, on the pool: a speculated result when one matches,
  // else a batch of it and the proposals that would follow its rejection (the
  // generator copied, advanced as a rejection at `temperature` would advance it).
  std::vector<Placement> batch;
  const auto evaluate_ahead = [&](double temperature) -> Score {
    if (ahead.version == version) {
      for (size_t i = 0; i < ahead.moves.size(); ++i) {
        if (!same_moves(ahead.moves[i], move)) continue;
        ++ahead.hits;
        return loop.record_move(current, move, ahead.results[i]);
      }
    }
    const long long width = std::min<long long>(pool->threads(), loop.remaining());
    ahead.version = version;
    ahead.moves.assign(1, move);
    MersenneRng next = rng;
    UnitMoves follower;
    for (long long k = 1; k < width; ++k) {
      // A rejected uphill move draws once in accept_move; other rejections do not.
      if (temperature > 0 && current_score.feasible) next.unit();
      maker.propose(current, next, follower);
      ahead.moves.emplace_back();
      to_ops(follower, ahead.moves.back());
    }
    // Whole placements: a clone's kept step is of some other placement by now.
    batch.resize(ahead.moves.size());
    for (size_t i = 0; i < ahead.moves.size(); ++i) {
      batch[i] = current;
      apply_moves(graph, cluster, batch[i], ahead.moves[i]);
    }
    ahead.results = pool->evaluate_batch(graph, cluster, batch);
    ahead.made += static_cast<long long>(ahead.results.size()) - 1;
    const Score s = loop.record_move(current, move, ahead.results[0]);
    ahead.moves.erase(ahead.moves.begin());
    ahead.results.erase(ahead.results.begin());
    return s;
  };
  // One proposal from `current`, evaluated (from the current placement, so an
  // evaluator that keeps its last step re-simulates only what the move changes),
  // accepted or not at `temperature`; returns the step-time increase (0 if none).
  const auto step = [&](double temperature) {
    maker.propose(current, rng, proposal);
    to_ops(proposal, move);
    const Score proposed = pool ? evaluate_ahead(temperature) : loop.evaluate_move(current, move);
    const double uphill = proposed.feasible && current_score.feasible ? proposed.step_us - current_score.step_us : 0;
    if (accept_move(proposed, current_score, temperature, rng)) {
      current_score = proposed;
      for (const OpMove& m : move) current[m.op] = m.device;
      ++version;
    }
    return std::max(0.0, uphill);
  };

  // Calibration: the first moves descend (only improvements are taken) and the
  // median of their uphill steps sets the start temperature.
  double t0 = t0_fraction * (current_score.feasible ? current_score.step_us : 0);
  if (calibrate_s == "on") {
    const long long samples = std::clamp<long long>(loop.remaining() / 20, 8, 64);
    std::vector<double> uphill;
    for (long long i = 0; i < samples && !loop.exhausted(); ++i) {
      const double up = step(0);
      if (up > 0) uphill.push_back(up);
    }
    if (!uphill.empty()) {
      std::nth_element(uphill.begin(), uphill.begin() + static_cast<long>(uphill.size() / 2), uphill.end());
      t0 = uphill[uphill.size() / 2] / -std::log(kCalibratedAcceptance);
    }
  }
  const long long moves = std::max<long long>(1, loop.budget() - loop.used());
  if (restart_after < 0) restart_after = std::max<long long>(25, moves / 20);
  const double decay = std::pow(cooling_to, 1.0 / static_cast<double>(moves));
  double temperature = t0;
  // Chains meet after equal numbers of evaluations, and each continues from the
  // best any of them has found; they stop together.
  const long long every = exchange_every > 0 ? exchange_every : std::max<long long>(1, loop.budget() / 10);
  long long next_meeting = loop.used() + every;
  long long since_best = 0;
  Score best_so_far = loop.best();
  while (true) {
    if (context.exchange != nullptr) {
      const bool stop = loop.exhausted();
      if (stop || loop.used() >= next_meeting) {
        const ChainMeeting met = meet_chains(context, loop, stop);
        const Score theirs{met.best.feasible, met.best.step_us};
        if (theirs.better_than(current_score)) {
          current = met.best.placement;
          current_score = theirs;
          ++version;
        }
        if (met.stop) break;
        next_meeting = loop.used() + every;
      }
    } else if (loop.exhausted()) {
      break;
    }
    step(temperature);
    temperature *= decay;
    if (loop.best().better_than(best_so_far)) {
      best_so_far = loop.best();
      since_best = 0;
    } else if (restart_after > 0 && ++since_best >= restart_after) {
      // Nothing better for a while: go on from the best placement seen.
      current = loop.best_placement();
      current_score = loop.best();
      since_best = 0;
      ++version;
    }
  }
  if (pool) {
    loop.report(true, "done; " + std::to_string(ahead.hits) + " of " + std::to_string(loop.used()) +
                          " evaluations were speculated (" + std::to_string(ahead.made) + " made ahead on " +
                          std::to_string(pool->threads()) + " threads)");
  } else {
    loop.report(true);
  }
  // The best seen, which includes the start: never worse than where it began.
  return loop.best_placement();
}

}  // namespace

std::unique_ptr<Placer> make_anneal_placer() { return std::make_unique<AnnealPlacer>(false); }
std::unique_ptr<Placer> make_anneal_graph_placer() { return std::make_unique<AnnealPlacer>(true); }

}  // namespace aware::baselines
