#include "core/cost_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "core/op_graph.h"

namespace aware {

namespace {

constexpr int kTerms = 3;  // overhead, flops, bytes

double feature(const CostSample& s, int term) {
  return term == 0 ? 1.0 : term == 1 ? s.flops : s.bytes;
}

// Solves the k x k system a x = b in place (Gaussian elimination with partial
// pivoting); false when it is singular.
bool solve(std::array<std::array<double, kTerms>, kTerms>& a, std::array<double, kTerms>& b, int k) {
  for (int col = 0; col < k; ++col) {
    int pivot = col;
    for (int r = col + 1; r < k; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (!(std::abs(a[pivot][col]) > 1e-12)) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (int r = 0; r < k; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (int c = col; c < k; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  for (int r = 0; r < k; ++r) b[r] /= a[r][r];
  return true;
}

// The non-negative least-squares fit in relative error: every subset of the
// terms whose columns are not all zero is solved unconstrained, and the best
// subset whose coefficients are all >= 0 wins (with three terms, the exact NNLS
// optimum is among them).
CostFit least_squares(const std::vector<CostSample>& samples, const CostFitOptions& options) {
  // Columns scaled to a largest value of 1 for conditioning, weights 1 / max(us, floor).
  std::array<double, kTerms> scale{1, 0, 0};
  for (const CostSample& s : samples)
    for (int t = 1; t < kTerms; ++t) scale[t] = std::max(scale[t], feature(s, t));
  double best_error = std::numeric_limits<double>::infinity();
  std::array<double, kTerms> best{0, 0, 0};
  for (int mask = 1; mask < (1 << kTerms); ++mask) {
    std::array<int, kTerms> terms{};
    int k = 0;
    bool usable = true;
    for (int t = 0; t < kTerms; ++t) {
      if (!(mask & (1 << t))) continue;
      if (!(scale[t] > 0)) usable = false;
      terms[k++] = t;
    }
    if (!usable) continue;
    std::array<std::array<double, kTerms>, kTerms> a{};
    std::array<double, kTerms> b{};
    for (const CostSample& s : samples) {
      const double w = 1.0 / std::max(s.us, options.floor_us);
      for (int i = 0; i < k; ++i) {
        const double xi = feature(s, terms[i]) / scale[terms[i]] * w;
        b[i] += xi * s.us * w;
        for (int j = 0; j < k; ++j) a[i][j] += xi * feature(s, terms[j]) / scale[terms[j]] * w;
      }
    }
    if (!solve(a, b, k)) continue;
    std::array<double, kTerms> coef{0, 0, 0};
    bool nonnegative = true;
    for (int i = 0; i < k; ++i) {
      coef[terms[i]] = b[i] / scale[terms[i]];
      nonnegative = nonnegative && coef[terms[i]] >= 0;
    }
    if (!nonnegative) continue;
    double error = 0;
    for (const CostSample& s : samples) {
      double predicted = 0;
      for (int t = 0; t < kTerms; ++t) predicted += coef[t] * feature(s, t);
      const double r = (predicted - s.us) / std::max(s.us, options.floor_us);
      error += r * r;
    }
    if (error < best_error) {
      best_error = error;
      best = coef;
    }
  }
  CostFit fit;
  fit.overhead_us = best[0];
  fit.us_per_flop = best[1];
  fit.us_per_byte = best[2];
  fit.samples = static_cast<int>(samples.size());
  fit.from = "fit";
  return fit;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

std::map<std::string, CostFit> fit_cost_samples(const std::vector<CostSample>& samples,
                                                const CostFitOptions& options) {
  std::map<std::string, CostFit> fits;
  if (samples.empty()) return fits;
  const CostFit pooled = least_squares(samples, options);
  fits["*"] = pooled;
  std::map<std::string, std::vector<CostSample>> by_type;
  for (const CostSample& s : samples) by_type[s.type].push_back(s);
  for (const auto& [type, own] : by_type) {
    if (type.empty()) continue;  // untyped ops (hand-made graphs) count in the pooled fit only
    std::set<std::pair<double, double>> sizes;
    for (const CostSample& s : own) sizes.emplace(s.flops, s.bytes);
    if (static_cast<int>(own.size()) >= options.min_samples && sizes.size() >= 2) {
      fits[type] = least_squares(own, options);
      continue;
    }
    // Too few to fit: the pooled fit, scaled to this type's own ops.
    std::vector<double> ratios;
    for (const CostSample& s : own) {
      const double predicted = pooled.overhead_us + pooled.us_per_flop * s.flops + pooled.us_per_byte * s.bytes;
      if (predicted > 0) ratios.push_back(s.us / predicted);
    }
    if (ratios.empty()) continue;
    CostFit scaled = pooled;
    const double r = median(ratios);
    scaled.overhead_us *= r;
    scaled.us_per_flop *= r;
    scaled.us_per_byte *= r;
    scaled.samples = static_cast<int>(own.size());
    scaled.from = "scaled";
    fits[type] = scaled;
  }
  return fits;
}

std::map<std::string, std::vector<CostSample>> cost_samples(const CostTable& table,
                                                            const std::vector<OpGraph>& graphs) {
  std::set<std::string> kinds;
  for (const auto& [key, us] : table.us) kinds.insert(key.second);
  std::map<std::string, std::vector<CostSample>> out;
  for (const OpGraph& graph : graphs) {
    for (const Op& op : graph.ops()) {
      for (const std::string& kind : kinds) {
        const double us = table.lookup(graph.name(), op.name, kind);
        if (us >= 0) out[kind].push_back({op.type, op.flops, op.bytes_accessed, us});
      }
    }
  }
  return out;
}

int fit_cost_table(CostTable& table, const std::vector<OpGraph>& graphs, const CostFitOptions& options) {
  table.fits.clear();
  int used = 0;
  for (const auto& [kind, samples] : cost_samples(table, graphs)) {
    used += static_cast<int>(samples.size());
    for (auto& [type, fit] : fit_cost_samples(samples, options)) table.fits[{type, kind}] = fit;
  }
  return used;
}

CostTable scale_cost_table(const CostTable& table, const OpGraph& profiled, const OpGraph& target, int* scaled) {
  CostTable out;
  out.fits = table.fits;
  out.pair_slowdowns = table.pair_slowdowns;
  std::set<std::string> kinds;
  for (const auto& [key, us] : table.us) kinds.insert(key.second);
  int made = 0;
  for (const Op& op : target.ops()) {
    const int old_id = profiled.find(op.name);
    if (old_id < 0) continue;
    const Op& old_op = profiled.op(old_id);
    for (const std::string& kind : kinds) {
      const double us = table.lookup(profiled.name(), op.name, kind);
      if (us < 0) continue;
      double ratio = 1;
      if (const CostFit* fit = table.fit(op.type, kind)) {
        const double before = fit->time_us(old_op);
        const double after = fit->time_us(op);
        if (before > 0 && after > 0) ratio = after / before;
      }
      out.us[{scoped_op_name(target.name(), op.name), kind}] = us * ratio;
      ++made;
    }
  }
  if (scaled != nullptr) *scaled = made;
  return out;
}

}  // namespace aware
