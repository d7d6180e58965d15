// The project's seeded random-number generators: portable across standard
// libraries (no std::*_distribution, whose sequences are implementation-defined),
// so the same seed draws the same numbers everywhere. Every generator here is a
// plain value; one instance must not be used from two threads at once.
#pragma once

#include <cstdint>
#include <random>

namespace aware {

// splitmix64 (Steele, Lea, Flood 2014): advances `state` and returns the next
// 64-bit draw. A whole generator in one integer, so it checkpoints as one number.
std::uint64_t splitmix64(std::uint64_t& state);
// Uniform integer in [0, bound) from one splitmix64 draw (multiply-shift on its
// high 32 bits; bias below 2^-32 for the bounds we use); 0 when bound <= 1.
int uniform_below(std::uint64_t& state, int bound);
// Uniform real in [lo, hi) from one splitmix64 draw (53 bits).
double uniform_real(std::uint64_t& state, double lo, double hi);

// splitmix64 as an object: the state is the whole generator (state()/set_state()
// checkpoint it). Draws are exactly those of the free functions above on the
// same state.
class SplitMixRng {
 public:
  explicit SplitMixRng(std::uint64_t state) : state_(state) {}
  std::uint64_t next() { return splitmix64(state_); }
  // Uniform in [0, bound); 0 when bound <= 1 (uniform_below).
  int below(int bound) { return uniform_below(state_, bound); }
  // Uniform in [0, 1) (53 bits), the draw uniform_real scales.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::uint64_t state() const { return state_; }
  void set_state(std::uint64_t state) { state_ = state; }

 private:
  std::uint64_t state_;
};

// std::mt19937_64 (whose sequence the standard fixes) seeded with seed ^ 2^64/phi,
// with an unbiased bounded draw (rejection sampling) and a 53-bit unit draw. The
// non-learned placers' generator: their published tables depend on its sequence.
class MersenneRng {
 public:
  explicit MersenneRng(std::uint64_t seed) : engine_(seed ^ 0x9e3779b97f4a7c15ULL) {}
  // Uniform integer in [0, bound); throws (AWARE_CHECK) unless bound > 0.
  int below(int bound);
  // Uniform real in [0, 1).
  double unit();

 private:
  std::mt19937_64 engine_;
};

}  // namespace aware
