#include "hw/validate.h"

#include <algorithm>
#include <cmath>

#include "hw/executor.h"

namespace aware {

double kendall_tau(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = std::min(x.size(), y.size());
  double concordant = 0, discordant = 0, ties_x = 0, ties_y = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const double dx = x[i] - x[j];
      const double dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;  // tied in both: counts nowhere
      if (dx == 0) {
        ++ties_x;
      } else if (dy == 0) {
        ++ties_y;
      } else if ((dx > 0) == (dy > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  }
  const double denominator =
      std::sqrt((concordant + discordant + ties_x) * (concordant + discordant + ties_y));
  return denominator > 0 ? (concordant - discordant) / denominator : 0;
}

PredictionError prediction_error(const std::vector<double>& measured,
                                 const std::vector<double>& predicted) {
  PredictionError e;
  std::vector<double> rel, m, p;
  for (size_t i = 0; i < std::min(measured.size(), predicted.size()); ++i) {
    if (!(measured[i] > 0) || !std::isfinite(measured[i]) || !std::isfinite(predicted[i])) continue;
    rel.push_back(std::abs(predicted[i] - measured[i]) / measured[i]);
    m.push_back(measured[i]);
    p.push_back(predicted[i]);
  }
  e.count = static_cast<int>(rel.size());
  if (rel.empty()) return e;
  double sum = 0;
  for (double r : rel) sum += r;
  e.mean_abs_rel = sum / static_cast<double>(rel.size());
  e.median_abs_rel = median_of(rel);
  e.max_abs_rel = *std::max_element(rel.begin(), rel.end());
  e.kendall_tau = kendall_tau(m, p);
  return e;
}

}  // namespace aware
