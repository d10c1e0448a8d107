// Timing policy shared by every timed loop: iteration budgets (ScreenIters, warmup, tuning counts),
// rotating-buffer copy counts, per-call steady-clock timing with Welford statistics, timer
// overhead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/core/status.hpp"

namespace tunekit::measure {

/// Largest iteration count any budget rule returns (guards against a near-zero per-call estimate
/// turning a duration limit into billions of calls).
inline constexpr long long kMaxIterations = 10'000'000;

/// Per-call time estimates below this are treated as this value (milliseconds) when dividing a
/// duration budget by them.
inline constexpr double kMinPerCallMs = 1e-5;

/// Iterations a screening run may take: min(nominal, floor(max_duration_ms / per_call_ms) when
/// both are > 0, max_iterations when > 0), and at least 1.
/// Units:  per_call_ms and max_duration_ms in milliseconds; a limit <= 0 is "off".
/// Source: PyTorch TunableOp `ScreenIters` (pytorch#190433: a 300 ms call under a 50 ms /
///         5 iteration budget screens with 1 iteration, so the 10-iteration screen is skipped).
long long screen_iters(double per_call_ms, long long nominal, long long max_duration_ms,
                       long long max_iterations) noexcept;

/// Warmup calls before the final profile: floor(warmup_ms / approx_ms) capped by warmup_iterations
/// when that is > 0; else warmup_iterations when > 0; else 0.
/// Units:  milliseconds; limits <= 0 are "off". Source: PyTorch TunableOp FindFastest.
long long warmup_iterations(double approx_ms, long long warmup_ms,
                            long long warmup_iterations) noexcept;

/// Timed calls of the final profile: floor(tuning_ms / approx_ms) capped by max_iterations when
/// that is > 0; else max_iterations when > 0; both limits off gives 100. At least 1.
/// Units:  milliseconds; limits <= 0 are "off". Source: PyTorch TunableOp FindFastest.
long long tuning_iterations(double approx_ms, long long tuning_ms,
                            long long max_iterations) noexcept;

/// Number of operand copies for rotating buffers: floor(R / P) + 1 with P = output_bytes +
/// input_bytes, when rotating_bytes R > 0; 1 when R == 0. Capped at `max_copies` (>= 1).
/// Units:  bytes. Source: PyTorch TunableOp rotating buffers (copies = R / size + 1).
std::size_t rotating_copies(std::size_t rotating_bytes, std::size_t output_bytes,
                            std::size_t input_bytes, std::size_t max_copies = 4096) noexcept;

/// A monotonic time source in nanoseconds. Measurements use now_ns (the steady clock); tests and
/// simulations pass a virtual clock so that rankings are deterministic.
using ClockFn = std::int64_t (*)();

/// Summary of a set of per-call times.
/// Units: milliseconds (steady clock of the calling thread).
struct TimingStats {
  std::size_t count = 0;   ///< timed calls
  double mean_ms = 0.0;    ///< arithmetic mean (the value TunableOp writes to results files)
  double min_ms = 0.0;     ///< fastest call
  double max_ms = 0.0;     ///< slowest call
  double stddev_ms = 0.0;  ///< sample standard deviation (n - 1); 0 below two calls
  double median_ms = 0.0;  ///< median of the recorded samples; equals mean_ms when none were kept

  /// Builds the summary from a Welford accumulator and (optionally) the samples it saw.
  static TimingStats from(const Welford& welford, const std::vector<double>& samples_ms = {});
};

/// Times `n` calls one by one with `clock` (default: the steady clock). Before each call
/// `before_each()` runs outside the timed region (cache flush, buffer rotation). Every call's
/// time is added to `stats` and, when `samples_ms` is not null, appended to it.
/// Call:   `call()` returns Status; the loop stops at the first non-ok status and returns it.
/// Units:  milliseconds.
template <class Call, class Before>
Status time_calls(long long n, Call&& call, Before&& before_each, Welford& stats,
                  std::vector<double>* samples_ms = nullptr, ClockFn clock = &now_ns) {
  for (long long i = 0; i < n; ++i) {
    before_each();
    const std::int64_t start = clock();
    Status status = call();
    const std::int64_t end = clock();
    if (!status.is_ok()) return status;
    const double ms = elapsed_ms(start, end);
    stats.add(ms);
    if (samples_ms != nullptr) samples_ms->push_back(ms);
  }
  return Status::ok();
}

/// Runs `n` untimed calls of `call()` (each preceded by `before_each()`); stops at the first
/// non-ok status and returns it.
template <class Call, class Before>
Status run_untimed(long long n, Call&& call, Before&& before_each) {
  for (long long i = 0; i < n; ++i) {
    before_each();
    TUNEKIT_RETURN_IF_ERROR(call());
  }
  return Status::ok();
}

/// Median cost of one timed call of an empty function through `time_calls` (two steady-clock
/// reads plus an indirect call), measured once per process over 2000 calls and cached.
/// Units: milliseconds (typically 2e-5 to 5e-5 ms). Thread-safe.
double timer_overhead_ms();

}  // namespace tunekit::measure
