// Monotonic clock helpers for timing loops.
// Times are read from std::chrono::steady_clock; conversions are explicit about units.
#pragma once

#include <chrono>
#include <cstdint>

namespace tunekit {

using SteadyClock = std::chrono::steady_clock;

/// Nanoseconds since an arbitrary epoch of the steady clock.
inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
      .count();
}

/// Milliseconds elapsed between two now_ns() readings.
inline double elapsed_ms(std::int64_t start_ns, std::int64_t end_ns) noexcept {
  return static_cast<double>(end_ns - start_ns) * 1e-6;
}

/// Seconds since the Unix epoch (wall clock), for record timestamps.
double unix_time_s() noexcept;

}  // namespace tunekit
