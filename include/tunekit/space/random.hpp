// Rng: the one pseudo-random generator of the search layer (xoshiro256** seeded by splitmix64).
// Its integer and real draws are defined here bit for bit, so a seed gives the same run everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tunekit {

namespace detail {
__extension__ typedef unsigned __int128 Uint128;
}  // namespace detail

/// Deterministic pseudo-random generator used by every space and search routine.
/// std::uniform_int_distribution differs between standard libraries, so tunekit draws its own
/// integers (Lemire's multiply-shift with rejection) and reals (53 random bits).
/// Source:   D. Blackman, S. Vigna, "Scrambled linear pseudorandom number generators" (2018)
///           for xoshiro256** and splitmix64; D. Lemire, "Fast random integer generation in an
///           interval", ACM TOMACS 29(1), 2019 for `uniform`.
/// Threads:  not thread-safe; give each thread its own Rng (see `split`).
class Rng {
 public:
  /// UniformRandomBitGenerator interface (for std algorithms that need one).
  using result_type = std::uint64_t;

  /// Seeds the four words of state from `seed` through splitmix64 (any seed, including 0).
  explicit Rng(std::uint64_t seed = 0) noexcept { reseed(seed); }

  /// Restarts the sequence from `seed`.
  void reseed(std::uint64_t seed) noexcept {
    std::uint64_t x = seed;
    for (auto& w : s_) w = splitmix64(x);
  }

  /// Next 64 random bits.
  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  std::uint64_t operator()() noexcept { return next(); }
  static constexpr std::uint64_t min() noexcept { return 0; }
  static constexpr std::uint64_t max() noexcept {
    return std::numeric_limits<std::uint64_t>::max();
  }

  /// Uniform integer in [0, n). Returns 0 when n == 0.
  std::uint64_t uniform(std::uint64_t n) noexcept {
    if (n <= 1) return 0;
    detail::Uint128 m = static_cast<detail::Uint128>(next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<detail::Uint128>(next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  /// Uniform real in [0, 1) with 53 random bits.
  double uniform01() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// True with probability p (p <= 0 never, p >= 1 always).
  bool bernoulli(double p) noexcept { return uniform01() < p; }

  /// A generator for an independent stream, derived from this one's next output.
  Rng split() noexcept { return Rng(next() ^ 0x9E3779B97F4A7C15ULL); }

  /// Fisher-Yates shuffle of `v` in place, with `uniform`.
  template <class T>
  void shuffle(std::vector<T>& v) noexcept {
    for (std::size_t i = v.size(); i > 1; --i) {
      const auto j = static_cast<std::size_t>(uniform(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint64_t s_[4]{};
};

}  // namespace tunekit
