// Exact mode's branch and bound and relaxed mode's polish (branch_and_bound.h).
#include "agents/exact/branch_and_bound.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <utility>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"

namespace aware::exact::detail {

bool Incumbent::keep(const StepResult& r, const Placement& base, const std::vector<OpMove>* moves,
                     const std::string& from) {
  ++evaluated;
  const bool better = placement.size() == 0 || (r.feasible && !feasible) ||
                      (r.feasible == feasible && r.step_time_us < step_us);
  if (!better) return false;
  placement = base;
  if (moves != nullptr)
    for (const OpMove& m : *moves) placement[m.op] = m.device;
  step_us = r.step_time_us;
  feasible = r.feasible;
  source = from;
  return true;
}

bool Incumbent::offer(Evaluator& ev, const OpGraph& g, const Cluster& c, const Placement& p,
                      const std::string& from) {
  if (exhausted()) return false;
  return keep(ev.evaluate(g, c, p), p, nullptr, from);
}

bool Incumbent::offer_move(Evaluator& ev, const OpGraph& g, const Cluster& c, const Placement& base,
                           const std::vector<OpMove>& moves, const std::string& from) {
  if (exhausted()) return false;
  return keep(ev.evaluate_move(g, c, base, moves), base, &moves, from);
}

namespace {

// Exact mode by branch and bound (docs/bounds.md, "Exact mode"): units are placed
// one at a time in topological order, depth first; a node is pruned when a bound
// on every completion's simulated step reaches the best simulated step so far,
// and every leaf is simulated. Three bounds, the cheaper first: the longest chain
// with the placed ops at their devices' times and a transfer of at least
// c(bytes) on each edge whose ends are placed apart (S2-S4), the per-device
// one-machine bound over the placed ops, and the MILP's LP relaxation with the
// placed units' x fixed (the claim of docs/bounds.md holds for every placement,
// so for every completion of the node's). With interchangeable devices a unit
// opens at most one new device (first use), and each leaf's relabellings are
// simulated, as in the rounds.
//
// Window mode (relaxed mode's polish): every unit but a window's fixed where a
// base placement has it, the window's units searched the same way with the
// chain bound alone, each leaf simulated as a move from the base.
class BranchAndBound {
 public:
  // `with_lp`: bound nodes by the relaxation too (exact mode; the LP is loaded once).
  BranchAndBound(const OpGraph& g, const Cluster& c, const OpCostMatrix& costs, Formulation f,
                 Evaluator& ev, Incumbent& inc, double deadline_s, Clock::time_point t0,
                 ProgressObserver* progress, bool with_lp = true)
      : g_(g), c_(c), costs_(costs), f_(std::move(f)), ev_(ev), inc_(inc), deadline_s_(deadline_s),
        t0_(t0), progress_(progress), n_(g.num_ops()), D_(c.num_devices()), U_(f_.units.num_units()),
        lp_(with_lp ? std::make_unique<WarmLp>(f_.lp) : nullptr) {
    order_ = topological_order(g_);
    std::vector<int> pos(n_);
    for (int k = 0; k < n_; ++k) pos[order_[k]] = k;
    first_.assign(U_, n_);
    for (int op = 0; op < n_; ++op) {
      const int u = f_.units.unit_of_op[op];
      first_[u] = std::min(first_[u], pos[op]);
    }
    unit_order_.resize(U_);
    for (int u = 0; u < U_; ++u) unit_order_[u] = u;
    std::sort(unit_order_.begin(), unit_order_.end(), [&](int a, int b) { return first_[a] < first_[b]; });
    for (const Edge& e : g_.edges()) transfer_.push_back(D_ > 1 ? cheapest_transfer_us(c_, e.bytes) : 0.0);
    device_of_unit_.assign(U_, -1);
    open_bound_.assign(U_ + 1, kInf);
    head_.assign(n_, 0);
    tail_.assign(n_, 0);
  }

  // Window mode: searches the placements of `free_units` with every other unit
  // where `base` has it (base is the incumbent's placement, copied). Returns
  // false when the time limit or the budget stopped it.
  bool search_window(const std::vector<int>& free_units) {
    base_ = inc_.placement;
    windowed_ = true;
    for (int u = 0; u < U_; ++u) device_of_unit_[u] = base_[f_.units.ops_of_unit[u][0]];
    unit_order_ = free_units;
    std::sort(unit_order_.begin(), unit_order_.end(), [&](int a, int b) { return first_[a] < first_[b]; });
    for (int u : unit_order_) device_of_unit_[u] = -1;
    dfs(0, D_, 0.0);
    for (int u : unit_order_) device_of_unit_[u] = base_[f_.units.ops_of_unit[u][0]];
    return !stopped_;
  }

  // Returns the proven lower bound: the best simulated step when the search
  // finished, else the least bound of a node left unexplored.
  double run(double root_bound, std::string& status, int& nodes) {
    status = "optimal";
    stopped_ = false;
    dfs(0, 0, root_bound);
    nodes = nodes_;
    if (stopped_) {
      status = stop_reason_;
      double lower = kInf;
      for (double b : open_bound_) lower = std::min(lower, b);
      return lower;
    }
    return inc_.feasible ? inc_.step_us * (1 - kTol) : kInf;
  }

 private:
  double cutoff() const { return inc_.feasible ? inc_.step_us * (1 - kTol) : kInf; }

  // Two bounds from the placed units alone. The longest chain: placed ops at
  // their device's time, the others at their fastest, a transfer of at least
  // c(bytes) where both ends are placed on different devices (S2-S4). And per
  // device and stream, its placed ops run one at a time (S1), none before its
  // head (the longest chain before it, as above) and each followed by its tail
  // (the chain after it): for any a, b, the ops with head >= a and tail >= b
  // give a + their total time + b, when there is at least one such op (a an
  // op's head, b the least tail among them).
  double chain_bound() {
    std::fill(head_.begin(), head_.end(), 0.0);
    std::fill(tail_.begin(), tail_.end(), 0.0);
    auto apart = [&](const Edge& edge) {
      const int du = device_of_unit_[f_.units.unit_of_op[edge.src]];
      const int dv = device_of_unit_[f_.units.unit_of_op[edge.dst]];
      return du >= 0 && dv >= 0 && du != dv;
    };
    auto time = [&](int op) {
      const int d = device_of_unit_[f_.units.unit_of_op[op]];
      return d >= 0 ? costs_.time_us(op, d) : costs_.min_time_us(op);
    };
    double longest = 0;
    for (int op : order_) {
      for (int e : g_.in_edges(op)) {
        const Edge& edge = g_.edge(e);
        head_[op] = std::max(head_[op], head_[edge.src] + time(edge.src) + (apart(edge) ? transfer_[e] : 0.0));
      }
      longest = std::max(longest, head_[op] + time(op));
    }
    for (auto it = order_.rbegin(); it != order_.rend(); ++it)
      for (int e : g_.out_edges(*it)) {
        const Edge& edge = g_.edge(e);
        tail_[*it] = std::max(tail_[*it], tail_[edge.dst] + time(edge.dst) + (apart(edge) ? transfer_[e] : 0.0));
      }
    if (windowed_) return longest;  // the per-device bound costs more than a window's leaves
    for (int d = 0; d < D_; ++d)
      for (int stream = 0; stream < 2; ++stream) {
        ops_.clear();
        for (int op = 0; op < n_; ++op)
          if (device_of_unit_[f_.units.unit_of_op[op]] == d && (g_.op(op).stream == 1 ? 1 : 0) == stream)
            ops_.push_back(op);
        if (ops_.empty()) continue;
        // Heads as thresholds: every op's up to 64 ops, else 32 quantiles (any
        // threshold gives a bound). For each, the set's ops by tail, largest
        // first: the k-th gives b = its tail and the work of the first k.
        std::sort(ops_.begin(), ops_.end(), [&](int x, int y) { return head_[x] < head_[y]; });
        const int m = static_cast<int>(ops_.size());
        const int thresholds = std::min(m, m <= 64 ? m : 32);
        for (int t = 0; t < thresholds; ++t) {
          const int first = m <= 64 ? t : static_cast<int>(static_cast<long long>(t) * m / thresholds);
          set_.assign(ops_.begin() + first, ops_.end());
          std::sort(set_.begin(), set_.end(), [&](int x, int y) { return tail_[x] > tail_[y]; });
          double work = 0;
          for (int i : set_) {
            work += costs_.time_us(i, d);
            longest = std::max(longest, head_[ops_[first]] + work + tail_[i]);
          }
        }
      }
    return longest;
  }

  // The LP relaxation with the placed units fixed (the simplex keeps its last
  // basis, so a node's solve starts from its sibling's); kInf when infeasible.
  void fix_unit(int u, int d) {
    if (!lp_) return;
    for (int e = 0; e < D_; ++e)
      if (f_.x[u][e] >= 0)
        lp_->set_bounds(f_.x[u][e], d < 0 ? f_.lp.col_lb[f_.x[u][e]] : (e == d ? 1 : 0),
                       d < 0 ? f_.lp.col_ub[f_.x[u][e]] : (e == d ? 1 : 0));
  }
  double lp_bound() {
    if (!lp_) return -kInf;
    ++lps_;
    return lp_->solve();
  }

  bool should_stop() {
    if (stopped_) return true;
    if (inc_.exhausted()) stop_reason_ = "evaluation budget";
    else if ((nodes_ & 15) == 0 && (seconds_since(t0_) >= deadline_s_ || (progress_ && progress_->cancelled())))
      stop_reason_ = "time limit";
    else return false;
    stopped_ = true;
    return true;
  }

  void leaf(int devices_used) {
    if (windowed_) {
      std::vector<OpMove> moves;
      for (int u : unit_order_)
        if (device_of_unit_[u] != base_[f_.units.ops_of_unit[u][0]])
          for (int op : f_.units.ops_of_unit[u]) moves.push_back({op, device_of_unit_[u]});
      if (!moves.empty()) inc_.offer_move(ev_, g_, c_, base_, moves, "window");
      return;
    }
    Placement p(std::vector<int>(n_, 0));
    for (int op = 0; op < n_; ++op) p[op] = device_of_unit_[f_.units.unit_of_op[op]];
    if (!f_.symmetric) {
      inc_.offer(ev_, g_, c_, p, "solver");
      return;
    }
    // Relabellings: devices not used by p are interchangeable among themselves,
    // so only the images of the used ones matter; simulate each distinct one.
    std::vector<int> perm(D_);
    for (int d = 0; d < D_; ++d) perm[d] = d;
    std::vector<std::vector<int>> seen;
    do {
      std::vector<int> image(perm.begin(), perm.begin() + devices_used);
      if (std::find(seen.begin(), seen.end(), image) != seen.end()) continue;
      seen.push_back(image);
      Placement q = p;
      for (int op = 0; op < n_; ++op) q[op] = perm[p[op]];
      if (inc_.exhausted()) return;
      inc_.offer(ev_, g_, c_, q, "solver");
    } while (std::next_permutation(perm.begin(), perm.end()));
  }

  // Places unit_order_[k..]; `used`: devices opened so far (first use), `bound`:
  // the parent's bound (valid here).
  void dfs(int k, int used, double bound) {
    ++nodes_;
    if (should_stop()) {
      open_bound_[k] = bound;
      return;
    }
    if (k == static_cast<int>(unit_order_.size())) {
      leaf(used);
      if (inc_.exhausted() && !stopped_) {
        stopped_ = true;
        stop_reason_ = "evaluation budget";
        open_bound_[k] = bound;  // conservatively: its relabellings may be unfinished
      }
      return;
    }
    const int u = unit_order_[k];
    const int limit = f_.symmetric && !windowed_ ? std::min(D_, used + 1) : D_;
    // Children: each device, bounded, then explored from the least bound.
    std::vector<std::pair<double, int>> children;
    for (int d = 0; d < limit; ++d) {
      if (f_.x[u][d] < 0) continue;
      device_of_unit_[u] = d;
      double b = std::max(bound, chain_bound());
      if (b < cutoff()) {
        fix_unit(u, d);
        b = std::max(b, lp_bound());
        fix_unit(u, -1);
      }
      device_of_unit_[u] = -1;
      if (b < cutoff()) children.emplace_back(b, d);
    }
    std::stable_sort(children.begin(), children.end());
    for (std::size_t i = 0; i < children.size(); ++i) {
      const auto [b, d] = children[i];
      if (b >= cutoff()) continue;  // the incumbent improved meanwhile
      // Until this child returns, its unexplored siblings hold at least the
      // least bound among them.
      open_bound_[k] = i + 1 < children.size() ? children[i + 1].first : kInf;
      device_of_unit_[u] = d;
      fix_unit(u, d);
      dfs(k + 1, std::max(used, d + 1), b);
      fix_unit(u, -1);
      device_of_unit_[u] = -1;
      if (stopped_) return;  // what the child left is in the deeper entries
    }
    open_bound_[k] = kInf;
    if (progress_ && (nodes_ % 4096) == 0) {
      Progress p;
      p.task = "milp on " + g_.name();
      p.done = nodes_;
      p.best_step_us = inc_.feasible ? inc_.step_us : -1;
      p.elapsed_s = seconds_since(t0_);
      p.message = "branch and bound: " + std::to_string(nodes_) + " nodes, " + std::to_string(lps_) + " LPs";
      progress_->on_progress(p);
    }
  }

  const OpGraph& g_;
  const Cluster& c_;
  const OpCostMatrix& costs_;
  const Formulation f_;
  Evaluator& ev_;
  Incumbent& inc_;
  double deadline_s_;
  Clock::time_point t0_;
  ProgressObserver* progress_;
  int n_, D_, U_;
  std::vector<int> order_, unit_order_, device_of_unit_, ops_, set_, first_;
  std::vector<double> transfer_, open_bound_, head_, tail_;
  std::unique_ptr<WarmLp> lp_;
  bool windowed_ = false;
  Placement base_;
  int nodes_ = 0;
  long long lps_ = 0;
  bool stopped_ = false;
  std::string stop_reason_;
};

}  // namespace

double branch_and_bound(const OpGraph& g, const Cluster& c, const OpCostMatrix& costs, const Formulation& f,
                        Evaluator& ev, Incumbent& inc, double deadline_s, Clock::time_point t0,
                        ProgressObserver* progress, double root_bound, std::string& status, int& nodes) {
  BranchAndBound bb(g, c, costs, f, ev, inc, deadline_s, t0, progress);
  return bb.run(root_bound, status, nodes);
}

// Relaxed mode's polish (docs/bounds.md, "Relaxed mode"): windows of `window`
// connected units (breadth first from each unit in turn, in a seeded random
// order, neighbours shuffled; a component used up, on from a random unit
// outside it), each searched exactly with the rest of the
// incumbent fixed, until the time limit or the budget. Returns the windows
// searched.
int polish_windows(const OpGraph& g, const Cluster& c, const OpCostMatrix& costs, const Formulation& f,
                   Evaluator& ev, Incumbent& inc, const MilpOptions& o, Clock::time_point t0,
                   ProgressObserver* progress) {
  const int U = f.units.num_units();
  const int D = c.num_devices();
  if (U == 0 || D < 2 || inc.placement.size() == 0) return 0;
  int k = o.window;
  if (k <= 0) {  // the largest window with at most 1,024 placements
    k = 1;
    while (std::pow(static_cast<double>(D), k + 1) <= 1024) ++k;
  }
  k = std::min(k, U);
  std::vector<std::vector<int>> adjacent(U);
  for (const Edge& e : g.edges()) {
    const int a = f.units.unit_of_op[e.src], b = f.units.unit_of_op[e.dst];
    if (a == b) continue;
    adjacent[a].push_back(b);
    adjacent[b].push_back(a);
  }
  for (auto& list : adjacent) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  std::mt19937_64 rng(o.seed);
  BranchAndBound bb(g, c, costs, f, ev, inc, o.time_limit_s, t0, progress, /*with_lp=*/false);
  std::vector<int> seeds(U);
  for (int u = 0; u < U; ++u) seeds[u] = u;
  std::vector<char> in(U, 0);
  int windows = 0;
  while (true) {
    std::shuffle(seeds.begin(), seeds.end(), rng);
    for (int seed : seeds) {
      if (seconds_since(t0) >= o.time_limit_s || inc.exhausted() || (progress && progress->cancelled()))
        return windows;
      std::vector<int> window{seed};
      std::fill(in.begin(), in.end(), 0);
      in[seed] = 1;
      for (std::size_t i = 0; static_cast<int>(window.size()) < k; ++i) {
        if (i == window.size()) {
          // The seed's component is used up: go on from a unit outside it.
          int v = static_cast<int>(rng() % U);
          while (in[v]) v = (v + 1) % U;
          in[v] = 1;
          window.push_back(v);
        }
        std::vector<int> next = adjacent[window[i]];
        std::shuffle(next.begin(), next.end(), rng);
        for (int v : next)
          if (!in[v] && static_cast<int>(window.size()) < k) {
            in[v] = 1;
            window.push_back(v);
          }
      }
      ++windows;
      if (!bb.search_window(window)) return windows;
    }
  }
}

}  // namespace aware::exact::detail
