// TuningHooks: what timed calls call out to, apart from the settings: the clock, the source of
// CPU-wait readings (contention), and the settle hook of the interleaved pass.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>

#include "tunekit/core/clock.hpp"
#include "tunekit/measure/cpu_wait.hpp"
#include "tunekit/measure/timing.hpp"

namespace tunekit {

/// The hooks of a TuningContext (TuningContext::hooks()). There is no environment variable for
/// any of them. Thread-safe.
class TuningHooks {
 public:
  /// Replaces the time source of timed calls (null: now_ns, the steady clock). For simulations
  /// and deterministic tests.
  void set_clock(measure::ClockFn time_source) noexcept;
  /// The current time source of timed calls.
  measure::ClockFn clock() const noexcept { return clock_.load(std::memory_order_relaxed); }
  /// Replaces the source of CPU-wait readings behind the contention figures (null: the default,
  /// see cpu_wait()). For tests with a virtual clock.
  void set_cpu_wait_source(measure::CpuWaitFn source) noexcept;
  /// The source timed calls use: the one installed, else measure::read_cpu_wait under the steady
  /// clock, else null (under a virtual clock contention is not measured: simulated times are
  /// not slowed by other work).
  measure::CpuWaitFn cpu_wait() const noexcept;
  /// Installs the hook called before each candidate's block of the interleaved pass (null
  /// removes it), e.g. ops::settle_threads.
  void set_settle_hook(std::function<void()> hook);
  /// A copy of the settle hook (null: none).
  std::function<void()> settle_hook() const;
  /// Restores the steady clock (the CPU-wait source and the settle hook stay).
  void reset() noexcept { set_clock(nullptr); }

 private:
  std::atomic<measure::ClockFn> clock_{&now_ns};
  std::atomic<measure::CpuWaitFn> cpu_wait_{nullptr};  // null: the default
  mutable std::mutex settle_mutex_;
  std::function<void()> settle_hook_;
};

}  // namespace tunekit
