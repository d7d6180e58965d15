// The MILP's formulation and its CBC run (formulation.h).
#include "agents/exact/formulation.h"

#include <coin/Cbc_C_Interface.h>
#include <coin/ClpSimplex.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>

#include "core/bounds.h"
#include "core/errors.h"
#include "core/graph_algorithms.h"

namespace aware::exact::detail {

struct CbcDeleter {
  void operator()(Cbc_Model* m) const { Cbc_deleteModel(m); }
};

// The rows as one column-major matrix (CBC's and Clp's load format).
struct ColumnMajor {
  int ncols, nrows;
  std::vector<CoinBigIndex> starts;
  std::vector<int> index;
  std::vector<double> value;
  explicit ColumnMajor(const Lp& lp) : ncols(lp.num_cols()), nrows(static_cast<int>(lp.rows.size())) {
    std::vector<int> count(ncols, 0);
    for (const auto& r : lp.rows)
      for (const auto& [c, v] : r) ++count[c];
    starts.assign(ncols + 1, 0);
    for (int c = 0; c < ncols; ++c) starts[c + 1] = starts[c] + count[c];
    index.resize(starts[ncols]);
    value.resize(starts[ncols]);
    std::vector<CoinBigIndex> fill(starts.begin(), starts.end() - 1);
    for (int r = 0; r < nrows; ++r)
      for (const auto& [c, v] : lp.rows[r]) {
        index[fill[c]] = r;
        value[fill[c]++] = v;
      }
  }
};

Solved run_cbc(const Lp& lp, double seconds, const std::vector<std::pair<int, double>>& start,
               bool lp_only, bool preprocess) {
  const auto t0 = std::chrono::steady_clock::now();
  Solved out;
  {
    WarmLp relaxation(lp);
    relaxation.set_time_limit(std::max(seconds, 0.01));
    const double value = relaxation.solve();
    if (value == kInf) {  // no fractional solution, so no integer one either
      out.infeasible = true;
      return out;
    }
    if (value == -kInf) {
      out.lp_unfinished = true;
      return out;
    }
    out.best_bound = value;
    if (lp_only) {
      out.has_solution = true;
      out.optimal = true;
      out.objective = value;
      out.solutions.push_back(relaxation.columns());
      return out;
    }
  }
  const double lp_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  seconds -= lp_s;
  // CBC solves the root LP again, from scratch and without watching its limit
  // (CbcMain1's initialSolve): start it only when the time left holds that solve
  // twice over; otherwise the relaxation's bound, and no integer solution.
  if (seconds <= 2 * lp_s) return out;
  const double relaxation_bound = out.best_bound;
  const ColumnMajor cm(lp);
  const int ncols = cm.ncols, nrows = cm.nrows;
  std::unique_ptr<Cbc_Model, CbcDeleter> model(Cbc_newModel());
  Cbc_Model* m = model.get();
  Cbc_setLogLevel(m, 0);
  Cbc_loadProblem(m, ncols, nrows, cm.starts.data(), cm.index.data(), cm.value.data(), lp.col_lb.data(),
                  lp.col_ub.data(), lp.obj.data(), lp.row_lb.data(), lp.row_ub.data());
  Cbc_setObjSense(m, 1);
  for (int c = 0; c < ncols; ++c)
    if (lp.integer[c]) Cbc_setInteger(m, c);
  Cbc_setMaximumSeconds(m, std::max(seconds, 0.01));
  Cbc_setAllowableGap(m, 0);
  Cbc_setAllowableFractionGap(m, 0);
  if (!preprocess) Cbc_setParameter(m, "preprocess", "off");
  if (!start.empty()) {
    std::vector<int> cols;
    std::vector<double> vals;
    for (const auto& [c, v] : start) {
      cols.push_back(c);
      vals.push_back(v);
    }
    Cbc_setMIPStartI(m, static_cast<int>(cols.size()), cols.data(), vals.data());
  }
  const int rc = Cbc_solve(m);
  const int status = Cbc_status(m);
  if (status == 2 || (rc != 0 && status != 0 && status != 1))
    out.failure = "CBC abandoned the problem (status " + std::to_string(status) + ")";
  out.infeasible = Cbc_isProvenInfeasible(m) != 0;
  out.optimal = Cbc_isProvenOptimal(m) != 0;
  const double* best = Cbc_bestSolution(m);
  if (best != nullptr && !out.infeasible) {
    out.has_solution = true;
    out.objective = Cbc_getObjValue(m);
    out.solutions.emplace_back(best, best + ncols);
    for (int k = 0; k < Cbc_numberSavedSolutions(m); ++k) {
      const double* s = Cbc_savedSolution(m, k);
      if (s) out.solutions.emplace_back(s, s + ncols);
    }
  }
  // CBC 2.10's "best possible" is the least of its tree's bound and its incumbent,
  // each starting at a placeholder (1e50 and more): before it has branched, the
  // incumbent (the MIP start, say) comes back as if proven. Taken only as a proof:
  // optimal, or nodes explored and a real value.
  const double cbc_bound = Cbc_getBestPossibleObjValue(m);
  const bool cbc_proved = out.optimal || (Cbc_getNodeCount(m) > 0 && cbc_bound < 1e40);
  out.best_bound = cbc_proved ? std::max(relaxation_bound, cbc_bound) : relaxation_bound;
  if (out.has_solution) out.best_bound = std::min(out.best_bound, out.objective);
  if (out.optimal && out.has_solution) out.best_bound = out.objective;
  return out;
}

struct WarmLp::Impl {
  ClpSimplex model;
};

WarmLp::WarmLp(const Lp& lp) : impl_(new Impl) {
  const ColumnMajor cm(lp);
  const int ncols = cm.ncols, nrows = cm.nrows;
  // Clp takes COIN_DBL_MAX for an infinite bound.
  auto clip = [](std::vector<double> v) {
    for (double& x : v) x = std::isinf(x) ? (x > 0 ? COIN_DBL_MAX : -COIN_DBL_MAX) : x;
    return v;
  };
  const std::vector<double> clb = clip(lp.col_lb), cub = clip(lp.col_ub), rlb = clip(lp.row_lb),
                            rub = clip(lp.row_ub);
  impl_->model.setLogLevel(0);
  impl_->model.loadProblem(ncols, nrows, cm.starts.data(), cm.index.data(), cm.value.data(), clb.data(), cub.data(),
                           lp.obj.data(), rlb.data(), rub.data());
  impl_->model.setOptimizationDirection(1);
}

WarmLp::~WarmLp() { delete impl_; }

void WarmLp::set_time_limit(double seconds) { impl_->model.setMaximumWallSeconds(seconds); }

std::vector<double> WarmLp::columns() const {
  const double* x = impl_->model.primalColumnSolution();
  return std::vector<double>(x, x + impl_->model.numberColumns());
}

void WarmLp::set_bounds(int col, double lb, double ub) {
  impl_->model.setColumnBounds(col, lb, std::isinf(ub) ? COIN_DBL_MAX : ub);
}

double WarmLp::solve() {
  impl_->model.dual();
  if (impl_->model.isProvenOptimal()) return impl_->model.objectiveValue();
  if (impl_->model.isProvenPrimalInfeasible()) return kInf;
  if (impl_->model.status() == 3) return -kInf;  // stopped by the time (or iteration) limit: no bound
  // Anything else (iteration limit, numerical trouble): start over once with primal.
  impl_->model.primal();
  if (impl_->model.isProvenOptimal()) return impl_->model.objectiveValue();
  if (impl_->model.isProvenPrimalInfeasible()) return kInf;
  return -kInf;
}

bool interchangeable_devices(const Cluster& cluster, const OpCostMatrix& costs) {
  if (costs.num_classes() != 1) return false;
  for (int d = 1; d < cluster.num_devices(); ++d)
    if (cluster.device(d).memory_bytes != cluster.device(0).memory_bytes) return false;
  return true;
}

Formulation build(const OpGraph& graph, const Cluster& cluster, const OpCostMatrix& costs,
                  bool with_order, double floor_us, double cutoff_us, double horizon_us, bool symmetry_rows,
                  bool placement_only) {
  Formulation f;
  Lp& lp = f.lp;
  const int n = graph.num_ops();
  const int D = cluster.num_devices();
  f.units = placing::colocation_units(graph);
  const int U = f.units.num_units();
  const bool same_cost = costs.num_classes() == 1;

  // Units' resident parameters, and what each op holds while it runs.
  std::vector<double> unit_params(U, 0), unit_run_max(U, 0);
  double total_params = 0;
  for (int op = 0; op < n; ++op) {
    const Op& o = graph.op(op);
    const int u = f.units.unit_of_op[op];
    unit_params[u] += o.param_bytes;
    total_params += o.param_bytes;
    unit_run_max[u] = std::max(unit_run_max[u], o.total_output_bytes() + o.temp_bytes);
  }
  f.x.assign(U, std::vector<int>(D, -1));
  for (int u = 0; u < U; ++u) {
    for (int d = 0; d < D; ++d)
      if (unit_params[u] + unit_run_max[u] <= cluster.device(d).memory_bytes)
        f.x[u][d] = lp.col(0, 1, 0, true);
    std::vector<std::pair<int, double>> one;
    for (int d = 0; d < D; ++d)
      if (f.x[u][d] >= 0) one.emplace_back(f.x[u][d], 1);
    if (one.empty())
      throw Error("unit of op '" + graph.op(f.units.ops_of_unit[u][0]).name +
                  "' fits on no device of cluster " + cluster.name());
    lp.row(std::move(one), 1, 1);
  }
  f.symmetric = D > 1 && D <= 8 && interchangeable_devices(cluster, costs);
  if (placement_only) return f;
  if (f.symmetric && symmetry_rows) {
    for (int d = 1; d < D; ++d)
      if (f.x[0][d] >= 0) lp.col_ub[f.x[0][d]] = 0;
    for (int u = 1; u < U; ++u)
      for (int d = 1; d < D; ++d) {
        if (f.x[u][d] < 0) continue;
        std::vector<std::pair<int, double>> t{{f.x[u][d], 1}};
        for (int v = 0; v < u; ++v)
          if (f.x[v][d - 1] >= 0) t.emplace_back(f.x[v][d - 1], -1);
        lp.row(std::move(t), -kInf, 0);
      }
  }
  f.makespan = lp.col(floor_us, std::isfinite(cutoff_us) ? std::max(cutoff_us, floor_us) : kInf, 1, false);

  // Heads and tails (compute only, fastest times): an op starts no earlier than
  // its head and, below a cutoff, no later than cutoff - time - tail.
  std::vector<double> head(n, 0), tail(n, 0), slowest(n, 0);
  const std::vector<int> order = topological_order(graph);
  for (int op : order)
    for (int e : graph.out_edges(op)) {
      const int dst = graph.edge(e).dst;
      head[dst] = std::max(head[dst], head[op] + costs.min_time_us(op));
    }
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    for (int e : graph.in_edges(*it)) {
      const int src = graph.edge(e).src;
      tail[src] = std::max(tail[src], tail[*it] + costs.min_time_us(*it));
    }
  for (int op = 0; op < n; ++op)
    for (int d = 0; d < D; ++d) slowest[op] = std::max(slowest[op], costs.time_us(op, d));
  std::vector<int> s(n);
  std::vector<double> s_ub(n, kInf);
  for (int op = 0; op < n; ++op) {
    if (std::isfinite(cutoff_us))
      s_ub[op] = std::max(head[op], cutoff_us - costs.min_time_us(op) - tail[op]);
    s[op] = lp.col(head[op], s_ub[op], 0, false);
  }

  // An op's duration: a constant on devices that cost alike, else sum_d p_d x_ud.
  // Adds -coef * duration to `terms` and returns the constant part moved to the
  // right-hand side (coef * p when constant, 0 otherwise).
  auto duration = [&](int op, double coef, std::vector<std::pair<int, double>>& terms) {
    const int u = f.units.unit_of_op[op];
    if (same_cost) return coef * costs.time_us(op, 0);
    for (int d = 0; d < D; ++d)
      if (f.x[u][d] >= 0 && costs.time_us(op, d) != 0) terms.emplace_back(f.x[u][d], -coef * costs.time_us(op, d));
    return 0.0;
  };

  // Precedence, with a transfer where the ends' units sit on different devices.
  std::map<std::pair<int, int>, double> edge_bytes;
  for (const Edge& e : graph.edges()) {
    double& b = edge_bytes[{e.src, e.dst}];
    b = std::max(b, e.bytes);
  }
  std::map<std::pair<int, int>, int> split;  // unit pair -> z column
  auto split_col = [&](int u, int v) {
    const auto key = std::minmax(u, v);
    auto it = split.find(key);
    if (it != split.end()) return it->second;
    const int z = lp.col(0, 1, 0, false);
    for (int d = 0; d < D; ++d) {
      if (f.x[u][d] < 0) continue;  // x_ud = 0: nothing to say
      std::vector<std::pair<int, double>> t{{z, 1}, {f.x[u][d], -1}};
      if (f.x[v][d] >= 0) t.emplace_back(f.x[v][d], 1);
      lp.row(std::move(t), 0);  // z >= x_ud - x_vd
    }
    split.emplace(key, z);
    return z;
  };
  for (const auto& [ends, bytes] : edge_bytes) {
    const auto [i, j] = ends;
    std::vector<std::pair<int, double>> t{{s[j], 1}, {s[i], -1}};
    const double rhs = duration(i, 1, t);
    const int ui = f.units.unit_of_op[i], uj = f.units.unit_of_op[j];
    if (ui != uj && D > 1) {
      const double c = cheapest_transfer_us(cluster, bytes);
      if (c > 0) t.emplace_back(split_col(ui, uj), -c);
    }
    lp.row(std::move(t), rhs);
  }
  // The step ends after every sink.
  for (int op = 0; op < n; ++op) {
    if (!graph.out_edges(op).empty()) continue;
    std::vector<std::pair<int, double>> t{{f.makespan, 1}, {s[op], -1}};
    const double rhs = duration(op, 1, t);
    lp.row(std::move(t), rhs);
  }
  // Each device's streams carry no more than the step.
  for (int stream = 0; stream < 2; ++stream)
    for (int d = 0; d < D; ++d) {
      std::map<int, double> load;
      for (int op = 0; op < n; ++op) {
        if ((graph.op(op).stream == 1 ? 1 : 0) != stream) continue;
        const int col = f.x[f.units.unit_of_op[op]][d];
        if (col >= 0 && costs.time_us(op, d) > 0) load[col] += costs.time_us(op, d);
      }
      if (load.empty()) continue;
      std::vector<std::pair<int, double>> t{{f.makespan, 1}};
      for (const auto& [col, p] : load) t.emplace_back(col, -p);
      lp.row(std::move(t), 0);
    }
  // Channels every transfer out of (into) a device crosses: where all its routes
  // leave (arrive) over one directed channel, that channel carries one transfer
  // at a time, so the transfers that must leave (reach) d take at most C. One
  // transfer per (producer output, destination device), at least the cheapest
  // route's time; t_od >= x_ud - x_vd (a consumer unit v of the output off d).
  if (D > 1 && D <= 256) {
    std::vector<bool> shared_out(D, true), shared_in(D, true);
    for (int d = 0; d < D; ++d)
      for (int e = 0; e < D; ++e) {
        if (e == d) continue;
        const int ref = d == 0 ? 1 : 0;
        if (cluster.route(d, e).empty() || cluster.route(d, ref).empty() ||
            cluster.route(d, e).front().channel() != cluster.route(d, ref).front().channel())
          shared_out[d] = false;
        if (cluster.route(e, d).empty() || cluster.route(ref, d).empty() ||
            cluster.route(e, d).back().channel() != cluster.route(ref, d).back().channel())
          shared_in[d] = false;
      }
    // (op, output) -> the least bytes of its edges to other units (a transfer
    // to one device carries at least that), the consumer units.
    std::map<std::pair<int, int>, std::pair<double, std::vector<int>>> outputs;
    for (const Edge& e : graph.edges()) {
      const int u = f.units.unit_of_op[e.src], v = f.units.unit_of_op[e.dst];
      if (u == v) continue;
      auto [it, fresh] = outputs.try_emplace({e.src, e.src_output}, e.bytes, std::vector<int>{});
      auto& [bytes, consumers] = it->second;
      if (!fresh) bytes = std::min(bytes, e.bytes);
      if (std::find(consumers.begin(), consumers.end(), v) == consumers.end()) consumers.push_back(v);
    }
    for (int d = 0; d < D; ++d) {
      if (!shared_out[d] && !shared_in[d]) continue;
      std::vector<std::pair<int, double>> out_row{{f.makespan, 1}}, in_row{{f.makespan, 1}};
      for (const auto& [key, value] : outputs) {
        const auto& [bytes, consumers] = value;
        const double c = cheapest_transfer_us(cluster, bytes);
        if (!(c > 0)) continue;
        const int u = f.units.unit_of_op[key.first];
        if (shared_out[d] && f.x[u][d] >= 0) {
          const int t = lp.col(0, 1, 0, false);
          for (int v : consumers) {
            std::vector<std::pair<int, double>> r{{t, 1}, {f.x[u][d], -1}};
            if (f.x[v][d] >= 0) r.emplace_back(f.x[v][d], 1);
            lp.row(std::move(r), 0);
          }
          out_row.emplace_back(t, -c);
        }
        if (shared_in[d]) {
          // One transfer into d when some consumer is on d and the producer is not.
          const int y = lp.col(0, 1, 0, false);
          bool any = false;
          for (int v : consumers) {
            if (f.x[v][d] < 0) continue;
            std::vector<std::pair<int, double>> r{{y, 1}, {f.x[v][d], -1}};
            if (f.x[u][d] >= 0) r.emplace_back(f.x[u][d], 1);
            lp.row(std::move(r), 0);
            any = true;
          }
          if (any) in_row.emplace_back(y, -c);
        }
      }
      if (out_row.size() > 1) lp.row(std::move(out_row), 0);
      if (in_row.size() > 1) lp.row(std::move(in_row), 0);
    }
  }
  // Windows: the ops of one stream on device d whose heads are at least a and
  // tails at least b run one at a time after a and leave b after the last, so
  // C >= a + b + their time on d. (a, b) from the ops' heads and tails: every
  // pair for small graphs, one-sided (b = 0, then a = 0) for large ones.
  {
    std::vector<double> heads(head), tails(tail);
    std::sort(heads.begin(), heads.end());
    heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
    std::sort(tails.begin(), tails.end());
    tails.erase(std::unique(tails.begin(), tails.end()), tails.end());
    // Large graphs: 24 quantiles of each, one-sided, so the model stays small
    // (every distinct head made Inception-V3's LP take minutes).
    auto thin = [](std::vector<double>& v, size_t keep) {
      if (v.size() <= keep) return;
      std::vector<double> kept;
      for (size_t k = 0; k < keep; ++k) kept.push_back(v[k * (v.size() - 1) / (keep - 1)]);
      kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
      v = kept;
    };
    const bool all_pairs = n <= 64;
    if (!all_pairs) {
      thin(heads, 24);
      thin(tails, 24);
    }
    std::vector<std::pair<double, double>> windows;
    for (double a : heads)
      for (double b : tails)
        if (all_pairs || a == 0 || b == 0) windows.emplace_back(a, b);
    for (int stream = 0; stream < 2; ++stream)
      for (const auto& [a, b] : windows) {
        if (a == 0 && b == 0) continue;  // the load rows
        for (int d = 0; d < D; ++d) {
          std::map<int, double> load;
          for (int op = 0; op < n; ++op) {
            if ((graph.op(op).stream == 1 ? 1 : 0) != stream || head[op] < a || tail[op] < b) continue;
            const int col = f.x[f.units.unit_of_op[op]][d];
            if (col >= 0 && costs.time_us(op, d) > 0) load[col] += costs.time_us(op, d);
          }
          if (load.size() < 2) continue;
          std::vector<std::pair<int, double>> t{{f.makespan, 1}};
          for (const auto& [col, p] : load) t.emplace_back(col, -p);
          lp.row(std::move(t), a + b);
        }
      }
  }
  // Memory: parameters resident, plus what one running op holds.
  for (int d = 0; d < D; ++d) {
    const double cap = cluster.device(d).memory_bytes;
    std::vector<std::pair<int, double>> params;
    for (int u = 0; u < U; ++u)
      if (f.x[u][d] >= 0 && unit_params[u] > 0) params.emplace_back(f.x[u][d], unit_params[u]);
    if (params.empty()) continue;
    if (total_params > cap) lp.row(params, -kInf, cap);
    for (int op = 0; op < n; ++op) {
      const Op& o = graph.op(op);
      const double run = o.total_output_bytes() + o.temp_bytes;
      const int col = f.x[f.units.unit_of_op[op]][d];
      if (col < 0 || !(run > 0) || total_params + run <= cap) continue;
      std::map<int, double> t(params.begin(), params.end());
      t[col] += run;
      lp.row(std::vector<std::pair<int, double>>(t.begin(), t.end()), -kInf, cap);
    }
  }
  if (!with_order) return f;

  // Ops of one stream on one device do not overlap: per pair no path orders, a
  // binary o (1: i before j) active when the two units share the device (w = 1).
  const Reachability reach(graph);
  // The big-M of "i before j" need only cover s_i + p_i - s_j.
  auto big_m = [&](int i, int j) {
    const double m = std::isfinite(s_ub[i]) ? s_ub[i] + slowest[i] - head[j] : horizon_us;
    return std::max(m, 0.0) + 1;
  };
  std::map<std::pair<int, int>, int> shared;  // unit pair -> w column
  auto shared_col = [&](int u, int v) {
    const auto key = std::minmax(u, v);
    auto it = shared.find(key);
    if (it != shared.end()) return it->second;
    const int w = lp.col(0, 1, 0, false);
    for (int d = 0; d < D; ++d)
      if (f.x[u][d] >= 0 && f.x[v][d] >= 0)  // w >= x_ud + x_vd - 1
        lp.row({{w, 1}, {f.x[u][d], -1}, {f.x[v][d], -1}}, -1);
    shared.emplace(key, w);
    return w;
  };
  for (int i = 0; i < n; ++i) {
    if (!(costs.min_time_us(i) > 0) && same_cost) continue;
    for (int j = i + 1; j < n; ++j) {
      if ((graph.op(i).stream == 1) != (graph.op(j).stream == 1)) continue;
      if (reach.reaches(i, j) || reach.reaches(j, i)) continue;
      const int ui = f.units.unit_of_op[i], uj = f.units.unit_of_op[j];
      const int o = lp.col(0, 1, 0, true);
      ++f.order_pairs;
      const int w = ui == uj ? -1 : shared_col(ui, uj);
      // o = 1: s_j >= s_i + p_i when shared;  o = 0: s_i >= s_j + p_j when shared.
      const double Ma = big_m(i, j), Mb = big_m(j, i);
      std::vector<std::pair<int, double>> a{{s[j], 1}, {s[i], -1}, {o, -Ma}};
      double rhs_a = duration(i, 1, a) - Ma;
      std::vector<std::pair<int, double>> b{{s[i], 1}, {s[j], -1}, {o, Mb}};
      double rhs_b = duration(j, 1, b);
      if (w >= 0) {
        a.emplace_back(w, -Ma);
        rhs_a -= Ma;
        b.emplace_back(w, -Mb);
        rhs_b -= Mb;
      }
      lp.row(std::move(a), rhs_a);
      lp.row(std::move(b), rhs_b);
    }
  }
  return f;
}

Placement decode(const Formulation& f, const std::vector<double>& sol, int num_ops) {
  Placement p(std::vector<int>(num_ops, 0));
  for (int u = 0; u < f.units.num_units(); ++u) {
    int best_d = -1;
    double best_v = -1;
    for (int d = 0; d < static_cast<int>(f.x[u].size()); ++d)
      if (f.x[u][d] >= 0 && sol[f.x[u][d]] > best_v) {
        best_v = sol[f.x[u][d]];
        best_d = d;
      }
    for (int op : f.units.ops_of_unit[u]) p[op] = std::max(best_d, 0);
  }
  return p;
}

std::vector<std::pair<int, double>> start_values(const Formulation& f, const Placement& p) {
  std::vector<std::pair<int, double>> v;
  // Interchangeable devices: relabel by first use, as the formulation asks.
  std::vector<int> label(f.x.empty() ? 0 : f.x[0].size(), -1);
  int next = 0;
  for (int u = 0; u < f.units.num_units(); ++u) {
    int dev = p[f.units.ops_of_unit[u][0]];
    if (f.symmetric) {
      if (label[dev] < 0) label[dev] = next++;
      dev = label[dev];
    }
    for (int d = 0; d < static_cast<int>(f.x[u].size()); ++d)
      if (f.x[u][d] >= 0) v.emplace_back(f.x[u][d], d == dev ? 1.0 : 0.0);
  }
  return v;
}

}  // namespace aware::exact::detail
