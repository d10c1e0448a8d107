// Iteration budgets, rotating copy counts, timing statistics and timer-overhead measurement.
// See include/tunekit/measure/timing.hpp.
#include "tunekit/measure/timing.hpp"

#include <algorithm>
#include <cmath>

namespace tunekit::measure {
namespace {

// floor(budget_ms / per_call_ms), clamped to [0, kMaxIterations].
long long calls_within(double budget_ms, double per_call_ms) noexcept {
  const double per_call = std::max(per_call_ms, kMinPerCallMs);
  const double n = std::floor(budget_ms / per_call);
  if (!(n >= 0.0)) return 0;
  return n >= static_cast<double>(kMaxIterations) ? kMaxIterations : static_cast<long long>(n);
}

}  // namespace

long long screen_iters(double per_call_ms, long long nominal, long long max_duration_ms,
                       long long max_iterations) noexcept {
  long long n = nominal;
  if (max_duration_ms > 0 && per_call_ms > 0.0) {
    n = std::min(n, calls_within(static_cast<double>(max_duration_ms), per_call_ms));
  }
  if (max_iterations > 0) n = std::min(n, max_iterations);
  return std::max<long long>(n, 1);
}

long long warmup_iterations(double approx_ms, long long warmup_ms,
                            long long warmup_iters) noexcept {
  if (warmup_ms > 0) {
    long long n = calls_within(static_cast<double>(warmup_ms), approx_ms);
    if (warmup_iters > 0) n = std::min(n, warmup_iters);
    return n;
  }
  return warmup_iters > 0 ? std::min(warmup_iters, kMaxIterations) : 0;
}

long long tuning_iterations(double approx_ms, long long tuning_ms,
                            long long max_iterations) noexcept {
  long long n = 0;
  if (tuning_ms > 0) {
    n = calls_within(static_cast<double>(tuning_ms), approx_ms);
    if (max_iterations > 0) n = std::min(n, max_iterations);
  } else if (max_iterations > 0) {
    n = std::min(max_iterations, kMaxIterations);
  } else {
    n = 100;
  }
  return std::max<long long>(n, 1);
}

std::size_t rotating_copies(std::size_t rotating_bytes, std::size_t output_bytes,
                            std::size_t input_bytes, std::size_t max_copies) noexcept {
  const std::size_t cap = std::max<std::size_t>(max_copies, 1);
  if (rotating_bytes == 0) return 1;
  const std::size_t per_copy = output_bytes + input_bytes;
  if (per_copy == 0) return 1;
  return std::min(rotating_bytes / per_copy + 1, cap);
}

TimingStats TimingStats::from(const Welford& welford, const std::vector<double>& samples_ms) {
  TimingStats s;
  s.count = welford.count();
  if (s.count == 0) return s;
  s.mean_ms = welford.mean();
  s.min_ms = welford.min();
  s.max_ms = welford.max();
  s.stddev_ms = welford.stddev();
  s.median_ms = samples_ms.empty() ? s.mean_ms : median(samples_ms);
  return s;
}

namespace {

[[gnu::noinline]] Status empty_call() noexcept {
  asm volatile("" ::: "memory");
  return Status::ok();
}

double measure_overhead() {
  constexpr int kCalls = 2000;
  Status (*volatile fn)() noexcept = &empty_call;
  Welford stats;
  std::vector<double> samples;
  samples.reserve(kCalls);
  (void)time_calls(
      kCalls, [&] { return fn(); }, [] {}, stats, &samples);
  return median(samples);
}

}  // namespace

double timer_overhead_ms() {
  static const double overhead = measure_overhead();
  return overhead;
}

}  // namespace tunekit::measure
