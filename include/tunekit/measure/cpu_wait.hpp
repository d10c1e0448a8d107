// CPU wait: how long this process's threads were runnable but not running, read from Linux /proc.
// A timed call made while another process holds a CPU measures that contention, not the
// candidate.
#pragma once

#include <cstdint>

namespace tunekit::measure {

/// Counters since boot. Units: nanoseconds.
struct CpuWait {
  /// Sum over this process's threads of schedstat's run_delay (time spent on a run queue waiting
  /// for a CPU). Source: Linux Documentation/scheduler/sched-stats.rst, /proc/<pid>/schedstat.
  /// Hypervisor steal is left out: /proc/stat counts it in 10 ms ticks, too coarse for regions of
  /// a few milliseconds.
  std::int64_t run_delay_ns = 0;
  /// False when /proc could not be read (then every contention figure is 0).
  bool available = false;
};

/// Reads the counters now (about 5 us per thread of the process).
CpuWait read_cpu_wait() noexcept;

/// A source of CpuWait readings (read_cpu_wait; tests install a virtual one).
using CpuWaitFn = CpuWait (*)();

/// The share of the CPU time of `cpus` CPUs over `wall_ns` that was lost to waiting:
/// the run delay between `before` and `after` divided by wall_ns * cpus, in [0, 1].
/// 0 when either reading is unavailable or wall_ns <= 0.
double contention(const CpuWait& before, const CpuWait& after, std::int64_t wall_ns,
                  int cpus) noexcept;

/// CPUs this process may run on (sched_getaffinity), at least 1.
int usable_cpus() noexcept;

}  // namespace tunekit::measure
