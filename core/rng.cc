#include "core/rng.h"

#include <limits>

#include "core/errors.h"

namespace aware {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int uniform_below(std::uint64_t& state, int bound) {
  if (bound <= 1) return 0;
  // Multiply-shift keeps the bias below 2^-32 for the bounds we use.
  const std::uint64_t r = splitmix64(state) >> 32;
  return static_cast<int>((r * static_cast<std::uint64_t>(bound)) >> 32);
}

double uniform_real(std::uint64_t& state, double lo, double hi) {
  const double unit = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
  return lo + (hi - lo) * unit;
}

int MersenneRng::below(int bound) {
  AWARE_CHECK(bound > 0, "MersenneRng::below needs a positive bound");
  const std::uint64_t b = static_cast<std::uint64_t>(bound);
  // Largest multiple of b that fits, so every residue is equally likely.
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % b;
  for (;;) {
    const std::uint64_t x = engine_();
    if (x < limit) return static_cast<int>(x % b);
  }
}

double MersenneRng::unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

}  // namespace aware
