// TuningHooks: clock, CPU-wait source and settle hook.
// See include/tunekit/tunable/tuning_hooks.hpp.
#include "tunekit/tunable/tuning_hooks.hpp"

#include <utility>

namespace tunekit {

void TuningHooks::set_clock(measure::ClockFn time_source) noexcept {
  clock_.store(time_source != nullptr ? time_source : &now_ns, std::memory_order_relaxed);
}

void TuningHooks::set_cpu_wait_source(measure::CpuWaitFn source) noexcept {
  cpu_wait_.store(source, std::memory_order_relaxed);
}

measure::CpuWaitFn TuningHooks::cpu_wait() const noexcept {
  if (measure::CpuWaitFn source = cpu_wait_.load(std::memory_order_relaxed)) return source;
  return clock() == &now_ns ? &measure::read_cpu_wait : nullptr;
}

void TuningHooks::set_settle_hook(std::function<void()> hook) {
  std::lock_guard lock(settle_mutex_);
  settle_hook_ = std::move(hook);
}

std::function<void()> TuningHooks::settle_hook() const {
  std::lock_guard lock(settle_mutex_);
  return settle_hook_;
}

}  // namespace tunekit
