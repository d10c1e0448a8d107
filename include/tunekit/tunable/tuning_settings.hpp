// TuningSettings: the snapshot of every setting find_fastest needs, taken once per tuning from
// the context's settings and hooks (TuningContext::tuning_settings()).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string_view>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/measure/cpu_wait.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/tunable/tolerance.hpp"

namespace tunekit {

/// Receives the configurations one template candidate's search measured (inputs[i] with
/// results[i], in the order measured), once per search, after it.
using SearchTrialsSink =
    std::function<void(std::span<const MeasureInput>, std::span<const MeasureResult>)>;

/// A snapshot of every setting find_fastest needs, taken once per tuning.
struct TuningSettings {
  long long max_tuning_duration_ms = 30;   ///< <= 0: limit off
  long long max_tuning_iterations = 100;   ///< <= 0: limit off (both off: 100 iterations)
  long long max_warmup_duration_ms = 0;    ///< <= 0: off
  long long max_warmup_iterations = 0;     ///< <= 0: off
  std::size_t rotating_buffer_bytes = 0;   ///< 0: no rotation
  std::size_t max_rotating_copies = 4096;  ///< cap on operand copies (tiny problems)
  /// Share of the budget a template candidate's configuration search gets per problem
  /// (search_template): at most this many configurations (0: its seeds only), within this many
  /// ms (0: no limit; checked per batch, so a configuration whose calls take longer completes).
  std::size_t max_search_trials = 24;
  long long max_search_duration_ms = 2000;
  /// Whether the search measures the configurations that won the nearest problems tuned before
  /// first (transfer across problems; TemplateCandidate::seeds).
  bool search_transfer = true;
  /// Where each search's trials go (TuningContext: the user database, TuningStore::
  /// add_search_trials; null when there is none): outside the search's time limit.
  SearchTrialsSink search_trials;
  bool cache_flush = true;           ///< flush operand cache lines before each timed call
  NumericalCheck numerical_check{};  ///< compare every candidate's output with Default's
  /// Robust winner selection: candidates whose mean is within this fraction of the best are
  /// re-measured interleaved. 0 disables the interleaved pass. 25%: on this project's shared
  /// machine the host drifts by 10-25% between two candidates' sequential profiles.
  double finalist_margin = 0.25;
  /// At most this many finalists (the fastest by mean) take part in the interleaved pass.
  std::size_t max_finalists = 4;
  /// Interleaved rounds (each finalist once per round, order rotating).
  int interleaved_rounds = 5;
  /// Rounds the interleaved pass runs at least, even when the tuning budget allowed fewer profile
  /// calls (slow problems): a close call is never decided by a single sample.
  int min_interleaved_rounds = 3;
  /// Time the interleaved pass may spend beyond the tuning budget per problem, in ms, on slow
  /// problems: the slowest finalists are dropped until min_interleaved_rounds rounds fit in it;
  /// the two fastest always stay (a close call between them is always re-measured).
  double max_interleaved_ms = 4000.0;
  /// CPU contention above which a timed region does not count as clean: the share of the time
  /// this process's threads wanted a CPU that they waited on a run queue (measure::contention).
  /// A profile above it cannot keep a candidate out of the finalists (those within
  /// kScreen1Ratio of the best join them), and an interleaved block above it is re-run (up to
  /// 3x the rounds, within max_interleaved_ms). 0.05: quiet, the regions of a 2-CPU guest
  /// measure 0-0.1%; with another process busy on one of its CPUs, 20-50% (docs/tunable.md,
  /// "CPU contention").
  double max_contention = 0.05;
  /// Called before each candidate's block of timed calls in the interleaved pass, so that an
  /// operator family can let other runtimes' idle workers stop spinning (ops::settle_threads).
  /// Null: nothing.
  std::function<void()> settle;
  /// Whether candidates of a library may be tuned (null: all). Errors propagate (malformed
  /// TUNEKIT_<LIBRARY>_ENABLED). The Default candidate is never filtered.
  std::function<Expected<bool>(std::string_view library)> library_enabled;
  /// Time source of every timed call (the steady clock; tests install a virtual clock).
  measure::ClockFn clock = &now_ns;
  /// Source of the CPU-wait counters behind every contention figure (null: contention is not
  /// measured and reads 0). TuningContext leaves it null under a virtual clock unless a source
  /// was installed with TuningHooks::set_cpu_wait_source(): simulated times are not slowed by other
  /// work.
  measure::CpuWaitFn cpu_wait = nullptr;
};

}  // namespace tunekit
