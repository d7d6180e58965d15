// Validation statistics: how far a simulator's step times are from measured
// ones, and whether it orders placements as the hardware does.
#pragma once

#include <vector>

namespace aware {

// Kendall's tau-b between two equally long series (ties in either count as
// neither concordant nor discordant; tau-b corrects for them). 0 for fewer than
// two points or a constant series.
double kendall_tau(const std::vector<double>& x, const std::vector<double>& y);

struct PredictionError {
  int count = 0;
  double mean_abs_rel = 0;    // mean of |predicted - measured| / measured
  double median_abs_rel = 0;
  double max_abs_rel = 0;
  double kendall_tau = 0;     // of predicted against measured
};

// Over the pairs where both are finite and measured > 0.
PredictionError prediction_error(const std::vector<double>& measured,
                                 const std::vector<double>& predicted);

}  // namespace aware
