#include "core/bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "core/cluster.h"
#include "core/cost_model.h"
#include "core/graph_algorithms.h"
#include "core/op_graph.h"

namespace aware {

double CertifiedBound::best_us() const {
  double best = 0;
  for (const BoundTerm& t : terms)
    if (t.applies) best = std::max(best, t.us);
  return best;
}

std::string CertifiedBound::binding() const {
  const BoundTerm* best = nullptr;
  for (const BoundTerm& t : terms)
    if (t.applies && (!best || t.us > best->us)) best = &t;
  return best ? best->name : "";
}

namespace {

// One side of the idle-ends bound. For the start side, `from` holds each op's
// earliest start (its head); the work that can be done by time b is
// A(b) = sum clamp(b - head, 0, time), and the capacity left idle by then is at
// least D b - A(b). Returns the breakpoints b (sorted, starting at 0) with A(b)
// and F(b) = b - A(b) / D, for b up to the time A reaches the whole work.
// The end side is the same with tails in place of heads.
struct SidePoint {
  double at = 0;    // b (or e)
  double work = 0;  // A(b): work that fits before b
  double idle = 0;  // b - A(b) / D, the idle time per device, at least 0
};

std::vector<SidePoint> side_points(const std::vector<double>& time_us,
                                   const std::vector<double>& from_us,
                                   const std::vector<bool>& members, int devices) {
  // Slope changes: +1 where an op could start running, -1 where it must be done.
  std::vector<std::pair<double, int>> events;
  double end_all = 0;
  for (size_t i = 0; i < time_us.size(); ++i) {
    if (!members[i] || !(time_us[i] > 0)) continue;
    events.emplace_back(from_us[i], +1);
    events.emplace_back(from_us[i] + time_us[i], -1);
    end_all = std::max(end_all, from_us[i] + time_us[i]);
  }
  std::sort(events.begin(), events.end());
  std::vector<SidePoint> points{{0, 0, 0}};
  double at = 0, work = 0;
  int slope = 0;
  for (const auto& [x, delta] : events) {
    if (x > at) {
      work += slope * (x - at);
      at = x;
      points.push_back({at, work, std::max(0.0, at - work / devices)});
    }
    slope += delta;
    if (at >= end_all) break;
  }
  return points;
}

}  // namespace

double cheapest_transfer_us(const Cluster& cluster, double bytes) {
  const int D = cluster.num_devices();
  if (D < 2 || D > 256) return 0;
  double best = std::numeric_limits<double>::infinity();
  for (int a = 0; a < D; ++a)
    for (int b = 0; b < D; ++b)
      if (a != b) best = std::min(best, cluster.transfer_time_us(a, b, bytes));
  return std::isfinite(best) ? best : 0.0;
}

double idle_ends_bound_us(const std::vector<double>& time_us, const std::vector<double>& head_us,
                          const std::vector<double>& tail_us, const std::vector<bool>& members,
                          int devices) {
  if (devices <= 0) return 0;
  double total = 0;
  for (size_t i = 0; i < time_us.size(); ++i)
    if (members[i] && time_us[i] > 0) total += time_us[i];
  if (!(total > 0)) return 0;
  const std::vector<SidePoint> start = side_points(time_us, head_us, members, devices);
  const std::vector<SidePoint> end = side_points(time_us, tail_us, members, devices);
  // The two ends must not claim more work than there is: for each start point b,
  // the best end point e with B(e) <= W - A(b). B grows with e, so those e form a
  // prefix of `end`; keep the prefix maxima of the idle time.
  std::vector<double> prefix_idle(end.size());
  double best_end = 0;
  for (size_t k = 0; k < end.size(); ++k) prefix_idle[k] = best_end = std::max(best_end, end[k].idle);
  double best = 0;
  for (const SidePoint& s : start) {
    const double room = total - s.work;
    if (room < -1e-9 * total) continue;
    // Last end point whose work fits in `room`.
    auto it = std::upper_bound(end.begin(), end.end(), room + 1e-12 * total,
                               [](double r, const SidePoint& p) { return r < p.work; });
    const size_t k = static_cast<size_t>(it - end.begin());
    const double e_idle = k == 0 ? 0 : prefix_idle[k - 1];
    best = std::max(best, s.idle + e_idle);
  }
  return total / devices + best;
}

// ---- The fork-join term (docs/bounds.md, "fork-join") ----

namespace {

// The op set strictly between two ops a and b of the critical path (the
// descendants of a that are ancestors of b), with, for each member and for b:
//  - head: the longest chain of fastest times from a's end to its start;
//  - head_x: the same plus the cheapest transfer of some edge on each chain,
//    the least over the chain's edges (a lower bound on its start when it runs
//    away from a's device: every chain from a to it then crosses devices);
// and tail / tail_x the same towards b's start.
struct Window {
  std::vector<int> members;  // topological order
  std::vector<double> head, head_x, tail, tail_x;  // indexed like members
  double b_head = 0, b_head_x = 0;  // for b itself
};

class ForkJoin {
 public:
  ForkJoin(const OpGraph& graph, const std::vector<double>& weight, const std::vector<double>& edge_transfer)
      : g_(graph), p_(weight), c_(edge_transfer), order_(topological_order(graph)) {
    pos_.resize(order_.size());
    for (size_t k = 0; k < order_.size(); ++k) pos_[order_[k]] = static_cast<int>(k);
    mark_.assign(order_.size(), 0);
    slot_.assign(order_.size(), -1);
  }

  // The least time from a's end to b's start, over every placement (a lower
  // bound: see window_us below). Sets `*branches` to the members counted.
  // b = kEnd: the step's end, a point with no device, after every op; the
  // members are then all of a's descendants.
  double window_us(int a, int b, int devices, int* members_out) {
    // A work cap for very large graphs: past it, spans count only their ends
    // (0 is a bound on any span), so the term stays valid, only weaker.
    *members_out = 0;
    if (spent_ > kBudget) return 0;
    const int last = b == kEnd ? static_cast<int>(order_.size()) - 1 : pos_[b];
    spent_ += static_cast<long long>(last - pos_[a] + 1) * 18;
    const Window w = window(a, b);
    *members_out = static_cast<int>(w.members.size());
    if (w.members.empty()) return devices >= 2 && b != kEnd ? std::min(w.b_head, w.b_head_x) : w.b_head;
    return solve(w, devices, b == kEnd);
  }

  static constexpr int kEnd = -1;

 private:
  Window window(int a, int b) {
    Window w;
    // To the step's end (b = kEnd), every descendant of a is a member: each
    // reaches the end, and nothing has to travel to it.
    const bool to_end = b == kEnd;
    const int lo = pos_[a], hi = to_end ? static_cast<int>(order_.size()) : pos_[b];
    const int stop = to_end ? hi : hi + 1;  // one past the last position marked
    // Forward: reached from a (1); backward: reaching b (2).
    mark_[lo] = 1;
    for (int k = lo + 1; k < stop; ++k) {
      const int op = order_[k];
      for (int e : g_.in_edges(op))
        if (pos_[g_.edge(e).src] >= lo && (mark_[pos_[g_.edge(e).src]] & 1)) {
          mark_[k] |= 1;
          break;
        }
    }
    if (!to_end) mark_[hi] |= 2;
    for (int k = hi - 1; k > lo; --k) {
      if (!(mark_[k] & 1)) continue;
      if (to_end) {
        mark_[k] |= 2;
        continue;
      }
      for (int e : g_.out_edges(order_[k]))
        if (pos_[g_.edge(e).dst] <= hi && (mark_[pos_[g_.edge(e).dst]] & 2)) {
          mark_[k] |= 2;
          break;
        }
    }
    for (int k = lo + 1; k < hi; ++k)
      if (mark_[k] == 3) {
        slot_[k] = static_cast<int>(w.members.size());
        w.members.push_back(order_[k]);
      }
    const size_t m = w.members.size();
    w.head.assign(m, 0);
    w.tail.assign(m, 0);
    w.head_x.assign(m, 0);
    w.tail_x.assign(m, 0);
    // The transfer times of the window's edges, as thresholds: a chain whose
    // edges all cost at least t starts a member no earlier than t + its length.
    std::vector<double> cuts;
    auto inside = [&](int op) { return op == a || op == b || (pos_[op] > lo && pos_[op] < hi && mark_[pos_[op]] == 3); };
    for (int op : w.members)
      for (int e : g_.in_edges(op))
        if (inside(g_.edge(e).src)) cuts.push_back(c_[e]);
    if (!to_end)
      for (int e : g_.in_edges(b))
        if (inside(g_.edge(e).src)) cuts.push_back(c_[e]);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    if (cuts.size() > 16) {  // quantiles (each a real threshold: still a bound)
      std::vector<double> q;
      for (int k = 0; k < 16; ++k) q.push_back(cuts[(cuts.size() - 1) * k / 15]);
      cuts = q;
    }
    const double minus_inf = -std::numeric_limits<double>::infinity();
    // Forward chains from a (members in topological order, then b).
    auto forward = [&](double t, std::vector<double>& len, double& b_len) {
      len.assign(m, minus_inf);
      auto relax = [&](int op) {
        double best = minus_inf;
        for (int e : g_.in_edges(op)) {
          const int src = g_.edge(e).src;
          if (c_[e] < t || !inside(src) || src == b) continue;
          best = std::max(best, src == a ? 0.0 : len[slot_[pos_[src]]] + p_[src]);
        }
        return best;
      };
      for (size_t k = 0; k < m; ++k) len[k] = relax(w.members[k]);
      if (!to_end) {
        b_len = relax(b);
        return;
      }
      b_len = 0;  // the end: after a and after every member
      for (size_t k = 0; k < m; ++k) b_len = std::max(b_len, len[k] + p_[w.members[k]]);
    };
    auto backward = [&](double t, std::vector<double>& len) {
      len.assign(m, minus_inf);
      for (size_t k = m; k-- > 0;) {
        double best = to_end ? 0.0 : minus_inf;
        for (int e : g_.out_edges(w.members[k])) {
          const int dst = g_.edge(e).dst;
          if (c_[e] < t || !inside(dst) || dst == a) continue;
          best = std::max(best, dst == b ? 0.0 : len[slot_[pos_[dst]]] + p_[dst]);
        }
        len[k] = best;
      }
    };
    std::vector<double> len;
    forward(minus_inf, w.head, w.b_head);
    backward(minus_inf, w.tail);
    w.head_x = w.head;
    w.tail_x = w.tail;
    w.b_head_x = w.b_head;
    for (double t : cuts) {
      double b_len = minus_inf;
      forward(t, len, b_len);
      for (size_t k = 0; k < m; ++k) w.head_x[k] = std::max(w.head_x[k], t + len[k]);
      if (to_end) continue;  // the end has no device: no crossing into it
      w.b_head_x = std::max(w.b_head_x, t + b_len);
      backward(t, len);
      for (size_t k = 0; k < m; ++k) w.tail_x[k] = std::max(w.tail_x[k], t + len[k]);
    }
    for (int k = lo; k < stop; ++k) {
      mark_[k] = 0;
      slot_[k] = -1;
    }
    return w;
  }

  // The least τ that passes both cases' tests (each monotone in τ), by
  // bisection; returns a τ that fails (or 0 when 0 passes), so a lower bound.
  // To the step's end only the first case's test applies, with tail_x = tail:
  // the end waits for no transfer.
  double solve(const Window& w, int devices, bool to_end) const {
    const size_t m = w.members.size();
    double total[2] = {0, 0}, hi = std::max(w.b_head, w.b_head_x);
    double min_head_x = std::numeric_limits<double>::infinity(), min_tail_x = min_head_x;
    for (size_t k = 0; k < m; ++k) {
      const double p = p_[w.members[k]];
      min_head_x = std::min(min_head_x, w.head_x[k]);
      min_tail_x = std::min(min_tail_x, w.tail_x[k]);
      total[g_.op(w.members[k]).stream == 1 ? 1 : 0] += p;
      hi = std::max(hi, w.head_x[k] + p + w.tail_x[k]);
    }
    hi += total[0] + total[1] + min_head_x + min_tail_x;
    // b on a's device: a member away from it crosses devices on its way in and out.
    auto same = [&](double tau) {
      if (tau < w.b_head) return false;
      double forced[2] = {0, 0};
      for (size_t k = 0; k < m; ++k) {
        const double p = p_[w.members[k]];
        if (w.head[k] + p + w.tail[k] > tau) return false;
        if (w.head_x[k] + p + w.tail_x[k] > tau) forced[g_.op(w.members[k]).stream == 1 ? 1 : 0] += p;
      }
      // Away devices can work only between the first arrival and the last send.
      const double away = std::max(0.0, tau - min_head_x - min_tail_x);
      for (int s = 0; s < 2; ++s)
        if (forced[s] > tau || total[s] > tau + (devices - 1) * away) return false;
      return true;
    };
    // b elsewhere: a member on a's device crosses on its way out, one on b's on
    // its way in; a member that can do neither in τ cannot be placed.
    auto apart = [&](double tau) {
      if (devices < 2 || tau < w.b_head_x || tau < w.b_head) return false;
      double on_a[2] = {0, 0}, on_b[2] = {0, 0};
      for (size_t k = 0; k < m; ++k) {
        const double p = p_[w.members[k]];
        const int s = g_.op(w.members[k]).stream == 1 ? 1 : 0;
        const bool fits_a = w.head[k] + p + w.tail_x[k] <= tau;
        const bool fits_b = w.head_x[k] + p + w.tail[k] <= tau;
        if (!fits_a && !fits_b) return false;
        if (!fits_b) on_a[s] += p;
        if (!fits_a) on_b[s] += p;
      }
      // a's device must have sent by τ − (least tail across), b's cannot start
      // before the first arrival, and the others both.
      const double cap_a = std::max(0.0, tau - min_tail_x), cap_b = std::max(0.0, tau - min_head_x);
      const double cap_other = std::max(0.0, tau - min_head_x - min_tail_x);
      for (int s = 0; s < 2; ++s)
        if (on_a[s] > cap_a || on_b[s] > cap_b || total[s] > cap_a + cap_b + (devices - 2) * cap_other)
          return false;
      return true;
    };
    auto passes = [&](double tau) { return same(tau) || (!to_end && apart(tau)); };
    if (passes(0)) return 0;
    double lo = 0;
    for (int it = 0; it < 60 && hi - lo > 1e-9 * hi; ++it) {
      const double mid = 0.5 * (lo + hi);
      (passes(mid) ? hi : lo) = mid;
    }
    return lo;
  }

  const OpGraph& g_;
  const std::vector<double>& p_;
  const std::vector<double>& c_;
  static constexpr long long kBudget = 300'000'000;  // op visits: a few seconds
  long long spent_ = 0;
  std::vector<int> order_, pos_;
  std::vector<char> mark_;
  std::vector<int> slot_;
};

}  // namespace

ForkJoinBound fork_join_bound(const OpGraph& graph, const Cluster& cluster, const std::vector<double>& time_us,
                              int max_span, int max_chain) {
  ForkJoinBound out;
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  if (n == 0) return out;
  std::vector<double> edge_transfer(static_cast<size_t>(graph.num_edges()), 0.0);
  {
    // The cheapest route for each distinct (latency, bandwidth) pair.
    std::vector<std::pair<double, double>> routes;
    if (D >= 2 && D <= 256)
      for (int s = 0; s < D; ++s)
        for (int d = 0; d < D; ++d)
          if (s != d) routes.emplace_back(cluster.route_latency_us(s, d), cluster.route_bandwidth_Bps(s, d));
    std::sort(routes.begin(), routes.end());
    routes.erase(std::unique(routes.begin(), routes.end()), routes.end());
    for (int e = 0; e < graph.num_edges(); ++e) {
      double best = routes.empty() ? 0 : std::numeric_limits<double>::infinity();
      for (const auto& [lat, bw] : routes) best = std::min(best, lat + graph.edge(e).bytes / bw * 1e6);
      edge_transfer[static_cast<size_t>(e)] = std::isfinite(best) ? best : 0.0;
    }
  }
  const std::vector<int> order = topological_order(graph);
  std::vector<double> head(n, 0), tail(n, 0);
  for (int op : order)
    for (int e : graph.out_edges(op)) head[graph.edge(e).dst] = std::max(head[graph.edge(e).dst], head[op] + time_us[op]);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int e : graph.in_edges(*it)) tail[graph.edge(e).src] = std::max(tail[graph.edge(e).src], tail[*it] + time_us[*it]);
  // One longest chain: start at an op with no head that lies on it, follow tight edges.
  int cur = -1;
  double path = -1;
  for (int op : order)
    if (head[op] == 0 && time_us[op] + tail[op] > path) path = time_us[op] + tail[op], cur = op;
  std::vector<int> chain;
  while (cur >= 0) {
    chain.push_back(cur);
    int next = -1;
    for (int e : graph.out_edges(cur)) {
      const int dst = graph.edge(e).dst;
      if (std::abs(head[cur] + time_us[cur] + time_us[dst] + tail[dst] - path) <= 1e-9 * path &&
          (next < 0 || head[dst] < head[next]))
        next = dst;
    }
    cur = next;
  }
  // best[j]: a lower bound on chain[j]'s start; a window between two chain ops
  // holds everything strictly between them, so the windows add up.
  ForkJoin fj(graph, time_us, edge_transfer);
  const int L = static_cast<int>(chain.size());
  std::vector<double> best(L);
  std::vector<int> from(L, -1);
  // spans[j]: (i, least time from chain[i]'s end to chain[j]'s start).
  std::vector<std::vector<std::pair<int, double>>> spans(L);
  for (int j = 0; j < L; ++j) {
    best[j] = head[chain[j]];
    for (int i = std::max(0, j - max_span); i < j; ++i) {
      int members = 0;
      const double span = fj.window_us(chain[i], chain[j], D, &members);
      spans[j].emplace_back(i, span);
      const double at = best[i] + time_us[chain[i]] + span;
      if (at > best[j] * (1 + 1e-12)) best[j] = at, from[j] = i;
    }
  }
  // to_end[j]: the least time from chain[j]'s end to the step's end, a window
  // holding all of chain[j]'s descendants (from the chain's end backwards, the
  // cheapest first, so the work cap leaves the spans above whole).
  std::vector<double> to_end(L, 0);
  for (int j = L; j-- > 0;) {
    int members = 0;
    to_end[j] = std::max(tail[chain[j]], fj.window_us(chain[j], ForkJoin::kEnd, D, &members));
  }
  int last = 0;
  for (int j = 0; j < L; ++j) {
    const double end = best[j] + time_us[chain[j]] + to_end[j];
    if (end > out.us) out.us = end, last = j;
  }
  out.chain_ops = L;
  out.path_us = path;
  for (int j = last; from[j] >= 0; j = from[j]) ++out.windows;
  out.cover_us = std::max(out.us, path);
  if (L == 0 || L > max_chain) return out;

  // ---- chain-windows (docs/bounds.md): the chain's ops are c_1..c_L; the
  // step is the chain plus the idle time g_0..g_L before c_1, between c_k and
  // c_k+1, and after c_L. An op off the chain with window (lo, hi) runs after
  // c_lo ends (lo = 0: from the start) and before c_hi starts (hi = L + 1: to
  // the end), so the ops whose windows lie inside (a, b) fit in D (g_a + ... +
  // g_b-1) plus, while each chain op between runs, the other devices' time (and
  // its own device's other stream). Minimising the total of g under those rows
  // and the fork-join spans' is a covering problem over intervals: raising
  // g_b-1 just enough, for b in increasing order, is optimal (each prefix sum
  // of g is then the least any feasible g can have).
  std::vector<int> index(n, 0);
  for (int k = 0; k < L; ++k) index[chain[k]] = k + 1;
  std::vector<int> lo(n, 0), hi(n, L + 1);
  for (int op : order)
    for (int e : graph.out_edges(op)) {
      const int dst = graph.edge(e).dst;
      lo[dst] = std::max(lo[dst], index[op] ? index[op] : lo[op]);
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int e : graph.in_edges(*it)) {
      const int src = graph.edge(e).src;
      hi[src] = std::min(hi[src], index[*it] ? index[*it] : hi[*it]);
    }
  auto stream_of = [&](int op) { return graph.op(op).stream == 1 ? 1 : 0; };
  std::vector<std::vector<int>> ending(L + 2);  // off-chain ops by hi
  for (int op = 0; op < n; ++op)
    if (!index[op] && time_us[op] > 0) ending[hi[op]].push_back(op);
  // Prefix sums over the chain (1-based): its time, and each stream's room
  // beside it (D - 1 devices where the chain op is on that stream, D elsewhere).
  std::vector<double> chain_sum(L + 1, 0), room[2] = {std::vector<double>(L + 1, 0), std::vector<double>(L + 1, 0)};
  for (int k = 1; k <= L; ++k) {
    const double p = time_us[chain[k - 1]];
    chain_sum[k] = chain_sum[k - 1] + p;
    for (int s = 0; s < 2; ++s) room[s][k] = room[s][k - 1] + (stream_of(chain[k - 1]) == s ? D - 1 : D) * p;
  }
  std::vector<double> by_lo[2] = {std::vector<double>(L + 2, 0), std::vector<double>(L + 2, 0)};
  std::vector<double> idle_prefix(L + 2, 0);  // idle_prefix[k] = g_0 + ... + g_k-1
  for (int b = 1; b <= L + 1; ++b) {
    for (int op : ending[b]) by_lo[stream_of(op)][lo[op]] += time_us[op];
    double need = 0, inside[2] = {0, 0};
    for (int a = b - 1; a >= 0; --a) {
      const double have = idle_prefix[b - 1] - idle_prefix[a];
      for (int s = 0; s < 2; ++s) {
        inside[s] += by_lo[s][a];  // work of the ops with a <= lo, hi <= b
        need = std::max(need, (inside[s] - (room[s][b - 1] - room[s][a])) / D - have);
      }
    }
    if (b <= L)
      for (const auto& [i, span] : spans[b - 1]) {
        const int a = i + 1;  // chain[i] is c_a
        need = std::max(need, span - (chain_sum[b - 1] - chain_sum[a]) - (idle_prefix[b - 1] - idle_prefix[a]));
      }
    else  // the windows to the step's end: from c_a's end, g_a + ... + g_L and c_a+1..c_L
      for (int a = 1; a <= L; ++a)
        need = std::max(need, to_end[a - 1] - (chain_sum[L] - chain_sum[a]) - (idle_prefix[L] - idle_prefix[a]));
    idle_prefix[b] = idle_prefix[b - 1] + std::max(0.0, need);
  }
  out.cover_idle_us = idle_prefix[L + 1];
  out.cover_us = std::max(out.cover_us, chain_sum[L] + idle_prefix[L + 1]);
  return out;
}

double least_stretch(const CostTable& table) {
  double least = 1;
  for (const auto& [key, factor] : table.pair_slowdowns)
    if (factor > 0) least = std::min(least, factor);
  return least;
}

CertifiedBound certified_bound(const OpGraph& graph, const Cluster& cluster,
                               const OpCostMatrix& costs, double least_stretch) {
  CertifiedBound out;
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  // Every op runs at least `stretch` times its table time (docs/bounds.md, S4).
  const double stretch = std::clamp(least_stretch, 0.0, 1.0);
  LowerBound classic = lower_bound(graph, cluster, costs);
  classic.work_us *= stretch;

  // Critical path, with the transfers memory forces.
  std::vector<double> weight(n);
  for (int op = 0; op < n; ++op) weight[op] = costs.min_time_us(op) * stretch;
  double largest_device = 0;
  for (int d = 0; d < D; ++d) largest_device = std::max(largest_device, cluster.device(d).memory_bytes);
  std::map<std::string, double> group_params;
  for (const Op& op : graph.ops())
    if (!op.colocation_group.empty()) group_params[op.colocation_group] += op.param_bytes;
  auto unit_params = [&](const Op& op) {
    return op.colocation_group.empty() ? op.param_bytes : group_params[op.colocation_group];
  };
  int forced = 0;
  std::vector<double> finish(n, 0);
  for (int op : topological_order(graph)) {
    double start = 0;
    for (int e : graph.in_edges(op)) {
      const Edge& edge = graph.edge(e);
      const Op& a = graph.op(edge.src);
      const Op& b = graph.op(op);
      double transfer = 0;
      const bool same_unit = !a.colocation_group.empty() && a.colocation_group == b.colocation_group;
      if (!same_unit && D >= 2 && unit_params(a) + unit_params(b) > largest_device) {
        transfer = cheapest_transfer_us(cluster, edge.bytes);
        ++forced;
      }
      start = std::max(start, finish[edge.src] + transfer);
    }
    finish[op] = start + weight[op];
  }
  double path = 0;
  for (double f : finish) path = std::max(path, f);
  out.add({"critical-path", path,
           forced ? std::to_string(forced) + " edges forced across devices by memory"
                  : "each op at its fastest device time, no transfers",
           true});
  out.add({"work", classic.work_us,
           std::string("each stream's total time spread over the devices") +
               (stretch < 1 ? " (op times x " + std::to_string(stretch) + ", the least pair slowdown)" : ""),
           true});

  auto add_fork_join = [&](CertifiedBound& into) {
    if (D < 2) {
      into.add({"fork-join", 0, "needs two devices or more", false});
      into.add({"chain-windows", 0, "needs two devices or more", false});
      return;
    }
    const ForkJoinBound fj = fork_join_bound(graph, cluster, weight);
    into.add({"fork-join", fj.us,
              "the longest chain, " + std::to_string(fj.windows) +
                  " of its spans priced by branches that share the fork's device or pay a transfer each way,"
                  " and what follows its last split by the same test up to the step's end",
              true});
    into.add({"chain-windows", fj.cover_us,
              "the longest chain (" + std::to_string(fj.chain_ops) + " ops) and " +
                  std::to_string(static_cast<long long>(std::llround(fj.cover_idle_us))) +
                  " us between its ops that the other ops' work and the fork-join spans need",
              fj.chain_ops > 0});
  };
  // Idle ends: identical devices only.
  if (costs.num_classes() != 1 || D < 1) {
    out.add({"idle-ends", 0, "needs devices that cost every op alike", false});
    add_fork_join(out);
    return out;
  }
  std::vector<double> head(n, 0), tail(n, 0);
  const std::vector<int> order = topological_order(graph);
  for (int op : order)
    for (int e : graph.out_edges(op)) {
      const int dst = graph.edge(e).dst;
      head[dst] = std::max(head[dst], head[op] + weight[op]);
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int e : graph.in_edges(*it)) {
      const int src = graph.edge(e).src;
      tail[src] = std::max(tail[src], tail[*it] + weight[*it]);
    }
  double idle = 0;
  for (int stream = 0; stream < 2; ++stream) {
    std::vector<bool> members(n);
    for (int op = 0; op < n; ++op) members[op] = (graph.op(op).stream == 1 ? 1 : 0) == stream;
    idle = std::max(idle, idle_ends_bound_us(weight, head, tail, members, D));
  }
  out.add({"idle-ends", idle, "work plus the time devices must idle at the start and the end", true});
  add_fork_join(out);
  return out;
}

CertifiedBound certified_bound(const OpGraph& graph, const Cluster& cluster) {
  return certified_bound(graph, cluster, OpCostMatrix(graph, cluster));
}

}  // namespace aware
