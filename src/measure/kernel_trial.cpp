// One timed and verified trial of a loaded kernel configuration.
// See src/measure/kernel_trial.hpp.
#include "measure/kernel_trial.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include "tunekit/core/clock.hpp"

namespace tunekit::measure {
namespace {

/// Upper bound on calls per measurement when min_repeat_ms makes `number` grow.
constexpr long long kMaxNumber = 1'000'000'000;

MeasureResult failure(MeasureErrorNo code, std::string message) {
  MeasureResult r;
  r.error_no = code;
  r.error_msg = std::move(message);
  return r;
}

/// Runs `write` on `host` made writable for it, then makes `host` read-only again: host
/// buffers are read-only whenever the kernel runs, so that a stray write faults on them.
Status unlocked(ArgumentBuffers& host, const std::function<Status()>& write) {
  TUNEKIT_RETURN_IF_ERROR(host.make_writable());
  Status status = write();
  Status locked = host.make_read_only();
  return status.is_ok() ? locked : status;
}

/// Reads the outputs into `check.scratch` and verifies them (reference or function).
/// Errors: kWrongResult from the comparison; others from reading the outputs back.
Status verify_outputs(KernelBackend& backend, const TrialCheck& check) {
  TUNEKIT_RETURN_IF_ERROR(backend.read_outputs(*check.scratch));
  return check.function != nullptr
             ? check.function->check(*check.scratch, check.reference)
             : check.scratch->compare_outputs(*check.reference, check.atol, check.rtol);
}

/// The first call on reset outputs, then the verification or capture of its outputs.
MeasureResult check_call(KernelBackend& backend, const TrialCheck& check) {
  Status status = backend.launch();
  if (!status.is_ok()) return failure(MeasureErrorNo::kRuntimeDevice, status.message());
  if (check.capture != nullptr) {
    status = unlocked(*check.capture, [&] { return backend.read_outputs(*check.capture); });
    if (!status.is_ok()) return failure(MeasureErrorNo::kRuntimeDevice, status.message());
  }
  const bool compares = check.reference != nullptr || check.function != nullptr;
  if (compares && check.scratch != nullptr) {
    status = unlocked(*check.scratch, [&] { return verify_outputs(backend, check); });
    if (status.code() == StatusCode::kWrongResult) {
      return failure(MeasureErrorNo::kWrongAnswer, status.message());
    }
    if (!status.is_ok()) return failure(MeasureErrorNo::kRuntimeDevice, status.message());
  }
  return {};
}

/// Seconds spent in `number` calls (each after a cache flush when `flush`), or a failed launch.
Expected<double> time_number(KernelBackend& backend, long long number, bool flush,
                             const std::vector<MemoryRange>& ranges) {
  if (!flush) {
    const std::int64_t start = now_ns();
    for (long long i = 0; i < number; ++i) TUNEKIT_RETURN_IF_ERROR(backend.launch());
    return static_cast<double>(now_ns() - start) * 1e-9;
  }
  double total = 0.0;
  for (long long i = 0; i < number; ++i) {
    flush_data_cache(ranges);
    const std::int64_t start = now_ns();
    TUNEKIT_RETURN_IF_ERROR(backend.launch());
    total += static_cast<double>(now_ns() - start) * 1e-9;
  }
  return total;
}

/// AutoTVM's time_evaluator rule: a measurement shorter than min_repeat_ms is redone with
/// max(min_repeat_ms / per-call time + 1, 1.618 * number) calls.
long long grown_number(long long number, double seconds, double min_repeat_ms) {
  const double per_call_ms = std::max(seconds * 1e3 / static_cast<double>(number), 1e-9);
  const double wanted = std::max(min_repeat_ms / per_call_ms + 1.0, number * 1.618);
  return std::min(static_cast<long long>(wanted), kMaxNumber);
}

/// AutoTVM's LocalRunner drops the fastest and the slowest of more than two repeats.
void drop_extremes(std::vector<double>& costs) {
  if (costs.size() <= 2) return;
  std::sort(costs.begin(), costs.end());
  costs = std::vector<double>(costs.begin() + 1, costs.end() - 1);
}

}  // namespace

MeasureResult run_kernel_trial(KernelBackend& backend, const KernelTiming& timing,
                               const TrialCheck& check) {
  MeasureResult result = check_call(backend, check);
  if (result.error_no != MeasureErrorNo::kNoError) return result;
  for (int i = 1; i < timing.warmup; ++i) {
    Status status = backend.launch();
    if (!status.is_ok()) return failure(MeasureErrorNo::kRuntimeDevice, status.message());
  }
  const std::vector<MemoryRange> ranges =
      timing.flush_cache ? backend.flush_ranges() : std::vector<MemoryRange>{};
  long long number = timing.flush_cache ? 1 : std::max(1, timing.number);
  for (int r = 0; r < std::max(1, timing.repeat); ++r) {
    if (r > 0 && timing.cooldown_s > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(timing.cooldown_s));
    }
    while (true) {
      Expected<double> seconds = time_number(backend, number, timing.flush_cache, ranges);
      if (!seconds) return failure(MeasureErrorNo::kRuntimeDevice, seconds.status().message());
      if (*seconds * 1e3 < timing.min_repeat_ms && number < kMaxNumber) {
        number = grown_number(number, *seconds, timing.min_repeat_ms);
        continue;
      }
      result.costs_s.push_back(*seconds / static_cast<double>(number));
      break;
    }
  }
  drop_extremes(result.costs_s);
  return result;
}

}  // namespace tunekit::measure
