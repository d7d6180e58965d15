// Reproducible random choices for the graph families (internal to datasets/).
// std::mt19937_64's sequence is fixed by the standard, but the std::*_distribution
// adaptors are not, so choices go through these helpers instead.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace aware::datasets_detail {

class SeededChoice {
 public:
  // `stream` separates families, so seed 1 of two families draws different numbers.
  SeededChoice(std::uint64_t seed, std::uint64_t stream)
      : rng_(seed * 0x9E3779B97F4A7C15ULL + stream) {}
  // Uniform in [0, n); the modulo bias is far below what a graph size notices.
  int below(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  template <typename T>
  T pick(const std::vector<T>& options) {
    return options[static_cast<std::size_t>(below(static_cast<int>(options.size())))];
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace aware::datasets_detail
