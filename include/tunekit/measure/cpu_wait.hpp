// CPU wait: how long this process's threads were runnable but not running, read from Linux /proc.
// A timed call made while another process holds a CPU measures that contention, not the
// candidate.
#pragma once

#include <cstdint>

namespace tunekit::measure {

/// Counters since boot, summed over this process's threads. Units: nanoseconds.
/// Source: Linux Documentation/scheduler/sched-stats.rst, /proc/<pid>/task/<tid>/schedstat
/// ("time spent on the cpu", "time spent waiting on a runqueue"). Hypervisor steal is left out:
/// /proc/stat counts it in 10 ms ticks, too coarse for regions of a few milliseconds.
struct CpuWait {
  std::int64_t run_ns = 0;        ///< time the threads ran on a CPU
  std::int64_t run_delay_ns = 0;  ///< time they were runnable but waited for a CPU
  /// False when /proc could not be read (then every contention figure is 0).
  bool available = false;
};

/// Reads the counters now (about 5 us per thread of the process).
CpuWait read_cpu_wait() noexcept;

/// A source of CpuWait readings (read_cpu_wait; tests install a virtual one).
using CpuWaitFn = CpuWait (*)();

/// The share of the time this process's threads wanted a CPU that they spent waiting for one,
/// between `before` and `after`: delay / (delay + run), in [0, 1]. It does not depend on how
/// many CPUs the machine has or how many threads a candidate uses (threads that only slept add
/// nothing). 0 when either reading is unavailable or nothing ran.
double contention(const CpuWait& before, const CpuWait& after) noexcept;

}  // namespace tunekit::measure
