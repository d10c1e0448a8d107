// ContextSettings: the TunableOp settings of a TuningContext (switches, numerical check, limits,
// rotating buffers, threads, libraries, verbosity), each from the API, its TUNEKIT_* variable
// (which wins) or a command line's pin (which wins over both).
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/core/status.hpp"
#include "tunekit/tunable/dynamic_dims.hpp"
#include "tunekit/tunable/env_setting.hpp"
#include "tunekit/tunable/tolerance.hpp"

namespace tunekit {

/// The largest rotating buffer size in MiB: its byte count, mib << 20, still fits 64 bits.
inline constexpr long long kMaxRotatingBufferMib = (1LL << 44) - 1;

/// "TUNEKIT_<LIBRARY>_ENABLED" for a candidate library ("blis" -> "TUNEKIT_BLIS_ENABLED";
/// characters other than letters and digits become '_').
std::string library_env_name(std::string_view library);

/// Values a program's command line gives (tools/cli): each one set wins over the API and over
/// its TUNEKIT_* variable, until TuningContext::reset().
struct PinnedSettings {
  std::optional<std::string> filename;  ///< results file, used as given (no ordinal inserted)
  std::optional<int> threads;           ///< <= 0 -> default (usable cores)
  std::optional<long long> max_tuning_duration_ms;  ///< negative -> 0; 0 = off
  std::optional<long long> max_tuning_iterations;   ///< negative -> 0; 0 = off
  std::optional<int> verbose;                       ///< 0..3
};

/// The settings of a TuningContext (TuningContext::settings(); the variables are listed there).
/// Variables are read when the context is created and by reload_environment()
/// (TUNEKIT_NUMERICAL_CHECK and TUNEKIT_<LIBRARY>_ENABLED also on every read). A malformed
/// variable makes environment_status() an error naming it, and the getter of that setting keeps
/// the API value. Thread-safe: dispatch-path getters are relaxed atomic loads.
class ContextSettings {
 public:
  /// What the context's store is told when settings change: `dispatch_changed` after a setting
  /// dispatch depends on changed (cached verdicts re-check), `recording_started` when untuned
  /// recording is turned on (its per-process dedup set is cleared).
  struct Listeners {
    std::function<void()> dispatch_changed;
    std::function<void()> recording_started;
  };

  /// Default settings with the environment applied.
  ContextSettings();
  ContextSettings(const ContextSettings&) = delete;
  ContextSettings& operator=(const ContextSettings&) = delete;
  /// Installs the listeners (TuningContext does, once).
  void set_listeners(Listeners listeners);

  // --- switches -----------------------------------------------------------------------------
  /// TunableOp on/off (TUNEKIT_ENABLED). Off: every call runs Default.
  void enable(bool on = true);
  /// Effective switch (environment first).
  bool is_enabled() const noexcept { return enabled_.get(); }
  /// Tuning of misses on/off (TUNEKIT_TUNING).
  void enable_tuning(bool on = true);
  /// Effective switch (environment first).
  bool is_tuning_enabled() const noexcept { return tuning_.get(); }
  /// Recording of untuned problems on/off (TUNEKIT_RECORD_UNTUNED). Turning it on again clears
  /// the per-process dedup set.
  void enable_record_untuned(bool on = true);
  /// Effective switch (environment first).
  bool is_record_untuned_enabled() const noexcept { return record_untuned_.get(); }
  /// Wildcard fallback for misses with tuning off (TUNEKIT_WILDCARD_FALLBACK).
  void enable_wildcard_fallback(bool on = true);
  /// Effective switch (environment first).
  bool is_wildcard_fallback_enabled() const noexcept { return wildcard_fallback_.get(); }
  /// Process-wide dynamic-dims mask (TUNEKIT_DYNAMIC_DIMS), used on threads without a
  /// DynamicDimsGuard. Bits beyond kAllDynamicDims are dropped.
  void set_dynamic_dims(DynamicDimsMask mask);
  /// Effective process-wide mask (environment first).
  DynamicDimsMask dynamic_dims() const noexcept { return dynamic_dims_.get(); }
  /// The mask that applies to a dispatch on the calling thread: the innermost DynamicDimsGuard's,
  /// else dynamic_dims().
  DynamicDimsMask effective_dynamic_dims() const noexcept {
    if (detail::live_dynamic_dims_guards.load(std::memory_order_relaxed) == 0)
      return dynamic_dims_.get();
    const ThreadDynamicDims t = thread_dynamic_dims();
    return t.set ? t.mask : dynamic_dims_.get();
  }
  /// BLAS_PARAMS suffix on results and untuned lines (TUNEKIT_BLAS_LOG).
  void enable_blas_log(bool on = true);
  /// Effective switch (environment first).
  bool is_blas_log_enabled() const noexcept { return blas_log_.get(); }
  /// Calls that confirm a stored or tuned winner in place (TUNEKIT_CONFIRM_CALLS): its first
  /// `calls` dispatches in this process alternate between the winner and Default, timed, and
  /// Default keeps the problem when its median time is lower (Confirmation). 0 (the default)
  /// is off; < 0 -> 0; odd counts round up.
  void set_confirm_calls(long long calls);
  /// Effective count (environment first).
  long long confirm_calls() const noexcept { return confirm_calls_.get(); }
  /// Operand cache flush between timed calls (TUNEKIT_CACHE_FLUSH_ENABLED).
  void enable_cache_flush(bool on = true);
  /// Effective switch (environment first).
  bool is_cache_flush_enabled() const noexcept { return cache_flush_.get(); }

  // --- numerical check -------------------------------------------------------------------------
  /// Turns the check on (with the current tolerances) or off.
  void enable_numerical_check(bool on = true);
  /// Turns the check on/off with explicit tolerances.
  /// Errors: throws Error(kInvalidArgument) unless atol > 0 and rtol > 0 (finite).
  void set_numerical_check_tolerances(bool enable, double atol = 1e-5, double rtol = 1e-5);
  /// Turns the check on with the per-dtype default tolerances (Params::default_tolerance()).
  void use_default_tolerances();
  /// The effective setting (TUNEKIT_NUMERICAL_CHECK, re-read on every call, wins).
  /// Errors: throws Error(kInvalidArgument) naming the variable when it is malformed.
  NumericalCheck numerical_check() const;
  /// As numerical_check(), returning the error instead of throwing.
  Expected<NumericalCheck> try_numerical_check() const;
  /// numerical_check().enabled. Errors: throws as numerical_check().
  bool is_numerical_check_enabled() const { return numerical_check().enabled; }

  // --- limits ---------------------------------------------------------------------------------
  /// Budget of the final profile per candidate (ms); negative -> 0; 0 = off.
  void set_max_tuning_duration_ms(long long ms);
  /// Effective limit in ms (environment first); 0 = off.
  long long max_tuning_duration_ms() const noexcept { return max_tuning_duration_ms_.get(); }
  /// Cap on timed calls per candidate; negative -> 0; 0 = off. Both limits 0 -> 100 calls.
  void set_max_tuning_iterations(long long iterations);
  /// Effective limit in calls (environment first); 0 = off.
  long long max_tuning_iterations() const noexcept { return max_tuning_iterations_.get(); }
  /// Warmup budget before the final profile (ms); negative -> 0; 0 = off.
  void set_max_warmup_duration_ms(long long ms);
  /// Effective warmup budget in ms (environment first); 0 = off.
  long long max_warmup_duration_ms() const noexcept { return max_warmup_duration_ms_.get(); }
  /// Cap on warmup calls; negative -> 0; 0 = off.
  void set_max_warmup_iterations(long long iterations);
  /// Effective warmup cap in calls (environment first); 0 = off.
  long long max_warmup_iterations() const noexcept { return max_warmup_iterations_.get(); }

  // --- rotating buffers -------------------------------------------------------------------------
  /// Rotating buffer size in MiB: negative -> the default (the last-level cache this process can
  /// use, hw::effective_llc_bytes()), 0 -> rotation off.
  /// Errors: throws Error(kInvalidArgument) above kMaxRotatingBufferMib (the bytes would not fit
  ///   64 bits); TUNEKIT_ROTATING_BUFFER_SIZE above it is an environment error.
  void set_rotating_buffer_size(long long mib);
  /// Effective rotating buffer size in **bytes** (set 1 -> 1048576; set -1 -> LLC bytes).
  std::size_t rotating_buffer_size() const noexcept;

  // --- threads and device ---------------------------------------------------------------------
  /// Thread count the ops layer gives its libraries; <= 0 -> default (usable cores). Stored only.
  void set_threads(int threads);
  /// Effective thread count (>= 1); also the THREADS validator value.
  int threads() const noexcept;
  /// Device ordinal inserted into default file names (CPU: 0; distributed ranks set theirs).
  void set_device_ordinal(int device);
  /// The device ordinal (>= 0).
  int device_ordinal() const noexcept { return device_.load(std::memory_order_relaxed); }

  // --- libraries --------------------------------------------------------------------------------
  /// Allows or excludes candidates whose library() is `library` (TUNEKIT_<LIBRARY>_ENABLED).
  void enable_library(std::string_view library, bool on = true);
  /// Errors: throws Error(kInvalidArgument) naming the variable when it is malformed.
  bool is_library_enabled(std::string_view library) const;
  /// As is_library_enabled(), returning the error instead of throwing.
  Expected<bool> try_is_library_enabled(std::string_view library) const;

  // --- verbosity ------------------------------------------------------------------------------
  /// Log level 0 (off), 1 (basic), 2 (tuning status), 3 (full trace) (TUNEKIT_VERBOSE).
  /// Errors: throws Error(kInvalidArgument) outside 0..3.
  void set_verbose(int level);
  /// Effective level 0..3 (environment first).
  int verbose() const noexcept { return verbose_.get(); }
  /// Log sink: "err", "out" or a file path (TUNEKIT_VERBOSE_FILENAME).
  /// Errors: kIoError when the file cannot be opened (the previous sink stays).
  Status set_verbose_filename(const std::string& sink);
  /// Effective sink: "err", "out" or a path (environment first).
  std::string verbose_filename() const;

  // --- environment and lifecycle --------------------------------------------------------------
  /// Re-reads every TUNEKIT_* variable of these settings. Returns (and keeps, see
  /// environment_status()) an error naming each malformed variable; valid ones are applied.
  Status reload_environment();
  /// ok, or the error of the last environment read.
  Status environment_status() const;
  /// Pins the settings `pinned` holds except its filename (the store's), until reset().
  /// Errors: throws Error(kInvalidArgument) for a verbose level outside 0..3.
  void pin(const PinnedSettings& pinned);
  /// Restores every API setting to its default, drops the pins and re-reads the environment.
  Status reset();

 private:
  struct EnvErrors;
  void read_switches(EnvErrors& errors);
  void read_limits(EnvErrors& errors);
  void read_counts(EnvErrors& errors);
  void apply_verbose();
  void note_overridden(bool overridden, std::string_view name) const;
  void dispatch_changed() const;

  detail::EnvSetting<bool> enabled_{true};
  detail::EnvSetting<bool> tuning_{true};
  detail::EnvSetting<bool> record_untuned_{false};
  detail::EnvSetting<bool> wildcard_fallback_{false};
  detail::EnvSetting<bool> blas_log_{false};
  detail::EnvSetting<DynamicDimsMask> dynamic_dims_{0};
  detail::EnvSetting<bool> cache_flush_{true};
  detail::EnvSetting<long long> confirm_calls_{0};
  detail::EnvSetting<int> verbose_{0};
  detail::EnvSetting<long long> max_tuning_duration_ms_{30};
  detail::EnvSetting<long long> max_tuning_iterations_{100};
  detail::EnvSetting<long long> max_warmup_duration_ms_{0};
  detail::EnvSetting<long long> max_warmup_iterations_{0};
  detail::EnvSetting<long long> rotating_mib_{-1};
  detail::EnvSetting<int> threads_{0};
  std::atomic<int> device_{0};
  Listeners listeners_;

  mutable std::mutex mutex_;  // guards everything below
  NumericalCheck numerics_{};
  std::string api_verbose_filename_ = "err";
  std::optional<std::string> env_verbose_filename_;
  std::map<std::string, bool, std::less<>> api_libraries_;
  Status env_status_;
};

}  // namespace tunekit
