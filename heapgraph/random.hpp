// Small, fast, seedable random numbers for generators (SplitMix64). Deterministic
// across platforms, so a spec and a seed always name the same heap.
#pragma once

#include <cstdint>

namespace gcvm {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound), bound > 0 (Lemire's multiply-shift, negligible bias).
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

 private:
  std::uint64_t state_;
};

/// A stateless hash of (seed, index): for choices that must not depend on order.
inline std::uint64_t mix_hash(std::uint64_t seed, std::uint64_t index) {
  SplitMix64 rng(seed ^ (index * 0xD1B54A32D192ED03ull));
  return rng.next();
}

}  // namespace gcvm
