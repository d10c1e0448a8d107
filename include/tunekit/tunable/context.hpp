// TuningContext: the process-wide TunableOp settings (C++ setters/getters, each overridable by a
// TUNEKIT_* environment variable), the results manager, validators and the untuned recorder.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/measure/cpu_wait.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/records/db_layers.hpp"
#include "tunekit/tunable/dynamic_dims.hpp"
#include "tunekit/tunable/results_file.hpp"
#include "tunekit/tunable/results_manager.hpp"
#include "tunekit/tunable/tolerance.hpp"
#include "tunekit/tunable/untuned.hpp"
#include "tunekit/tunable/validators.hpp"

namespace tunekit {

/// Default results file name (before the device ordinal is inserted: "tunekit_results0.csv").
inline constexpr std::string_view kDefaultResultsFilename = "tunekit_results.csv";
/// Default untuned file name (before the device ordinal is inserted: "tunekit_untuned0.csv").
inline constexpr std::string_view kDefaultUntunedFilename = "tunekit_untuned.csv";
/// The largest rotating buffer size in MiB: its byte count, mib << 20, still fits 64 bits.
inline constexpr long long kMaxRotatingBufferMib = (1LL << 44) - 1;

/// Inserts the device ordinal into a results file name: replaces the first "%d"; else inserts it
/// before the last '.' of the file's base name; else appends it.
/// Examples: ("tunekit_results.csv", 0) -> "tunekit_results0.csv"; ("res_%d_x.csv", 0) ->
/// "res_0_x.csv"; ("results", 1) -> "results1"; ("out.d/res.csv", 2) -> "out.d/res2.csv".
/// Source: PyTorch TunableOp §7 (tunekit only looks at the base name for the '.').
std::string insert_device_ordinal(std::string_view name, int device);

/// insert_device_ordinal's rule with any text in place of the ordinal: ("tunekit_results.csv",
/// "_full0") -> "tunekit_results_full0.csv".
std::string insert_at_ordinal(std::string_view name, std::string_view text);

/// Untuned-file rule: the ordinal always goes before the last '.' of the base name (no "%d"
/// handling), else at the end: ("tunekit_untuned.csv", 0) -> "tunekit_untuned0.csv".
std::string insert_device_ordinal_before_extension(std::string_view name, int device);

/// "TUNEKIT_<LIBRARY>_ENABLED" for a candidate library ("blis" -> "TUNEKIT_BLIS_ENABLED";
/// characters other than letters and digits become '_').
std::string library_env_name(std::string_view library);

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
  /// was installed with set_cpu_wait_source(): simulated times are not slowed by other work.
  measure::CpuWaitFn cpu_wait = nullptr;
};

/// Values a program's command line gives (tools/cli): each one set wins over the API and over
/// its TUNEKIT_* variable, until TuningContext::reset().
struct PinnedSettings {
  std::optional<std::string> filename;  ///< results file, used as given (no ordinal inserted)
  std::optional<int> threads;           ///< <= 0 -> default (usable cores)
  std::optional<long long> max_tuning_duration_ms;  ///< negative -> 0; 0 = off
  std::optional<long long> max_tuning_iterations;   ///< negative -> 0; 0 = off
  std::optional<int> verbose;                       ///< 0..3
};

/// Process-wide TunableOp settings and state. Obtain it with tuning_context().
///
/// Every setting has a setter/getter and an environment variable TUNEKIT_<NAME>; a set variable
/// wins over the setter (as PyTorch's PYTORCH_TUNABLEOP_*). Variables are read when the context
/// is created and by reload_environment() (TUNEKIT_NUMERICAL_CHECK also on every tuning). A
/// malformed variable makes environment_status() an error naming it; dispatch then returns that
/// error, and the getter of that setting keeps the API value.
///
/// | variable                       | default               | unit / values                      |
/// |--------------------------------|-----------------------|------------------------------------|
/// | TUNEKIT_ENABLED                | 1                     | bool                               |
/// | TUNEKIT_TUNING                 | 1                     | bool                               |
/// | TUNEKIT_RECORD_UNTUNED         | 0                     | bool                               |
/// | TUNEKIT_FILENAME               | tunekit_results.csv   | ordinal inserted                   |
/// | TUNEKIT_UNTUNED_FILENAME       | tunekit_untuned.csv   | ordinal before last '.'            |
/// | TUNEKIT_VERBOSE                | 0                     | 0..3                               |
/// | TUNEKIT_VERBOSE_FILENAME       | err                   | err, out or a path                 |
/// | TUNEKIT_NUMERICAL_CHECK        | 1                     | 0, 1, <atol>_<rtol>                |
/// | TUNEKIT_MAX_TUNING_DURATION_MS | 30                    | ms; < 0 -> 0; 0 = off              |
/// | TUNEKIT_MAX_TUNING_ITERATIONS  | 100                   | calls; < 0 -> 0; 0 = off           |
/// | TUNEKIT_MAX_WARMUP_DURATION_MS | 0                     | ms; < 0 -> 0; 0 = off              |
/// | TUNEKIT_MAX_WARMUP_ITERATIONS  | 0                     | calls; < 0 -> 0; 0 = off           |
/// | TUNEKIT_CACHE_FLUSH_ENABLED    | 1                     | bool                               |
/// | TUNEKIT_ROTATING_BUFFER_SIZE   | LLC (effective)       | MiB; < 0 -> default; 0 = off       |
/// | TUNEKIT_BLAS_LOG               | 0                     | bool                               |
/// | TUNEKIT_WILDCARD_FALLBACK      | 0                     | bool                               |
/// | TUNEKIT_DYNAMIC_DIMS           | none                  | M, N, K, B letters or mask 0..15   |
/// | TUNEKIT_THREADS                | usable cores          | threads; <= 0 -> default           |
/// | TUNEKIT_MAX_SEARCH_TRIALS      | 24                    | per template; < 0 -> 0 = seeds only |
/// | TUNEKIT_MAX_SEARCH_DURATION_MS | 2000                  | ms per template; < 0 -> 0 = off    |
/// | TUNEKIT_SEARCH_TRANSFER        | 1                     | bool: seed with nearest winners    |
/// | TUNEKIT_NATIVE_AMX             | 1                     | bool: AMX tile for bf16 (per proc.) |
/// | TUNEKIT_<LIBRARY>_ENABLED      | 1                     | bool, per candidate library        |
/// | TUNEKIT_DB                     | $XDG_DATA_HOME/tunekit/tunekit.db | user database; off: none
/// | | TUNEKIT_SYSTEM_DB              | <prefix>/share/tunekit/tunekit.db | system database; off:
/// none |
///
/// Thread-safe: dispatch-path getters are relaxed atomic loads; setters may run concurrently.
/// Source: PyTorch TunableOp TuningContext and torch.cuda.tunable (defaults differ where noted:
/// enabled and numerical check are on in tunekit).
class TuningContext {
 public:
  /// A context with default settings, the environment applied and the built-in validators
  /// (TUNEKIT_VERSION, CPU_MODEL, CPU_ISA, THREADS) registered. Production code uses the process
  /// context tuning_context(); separate instances are for tests and tools.
  TuningContext();
  ~TuningContext();
  TuningContext(const TuningContext&) = delete;
  TuningContext& operator=(const TuningContext&) = delete;

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

  // --- measurement clock ----------------------------------------------------------------------
  /// Replaces the time source of timed calls (default now_ns, the steady clock). For simulations
  /// and deterministic tests; there is no environment variable.
  void set_clock(measure::ClockFn time_source) noexcept;
  /// The current time source of timed calls.
  measure::ClockFn clock() const noexcept { return clock_.load(std::memory_order_relaxed); }
  /// Replaces the source of CPU-wait readings behind the contention figures (default
  /// measure::read_cpu_wait; null restores it). For tests with a virtual clock.
  void set_cpu_wait_source(measure::CpuWaitFn source) noexcept;

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

  // --- files ----------------------------------------------------------------------------------
  /// Sets the results file; the device ordinal is inserted only when asked (as upstream). An
  /// empty name disables results-file I/O. TUNEKIT_FILENAME wins (with the ordinal inserted).
  void set_filename(std::string name, bool insert_device_ordinal = false);
  /// Effective results file name.
  std::string filename() const;
  /// Sets the untuned file (ordinal inserted before the last '.' only when asked).
  void set_untuned_filename(std::string name, bool insert_device_ordinal = false);
  /// Effective untuned file name.
  std::string untuned_filename() const;

  /// Loads and merges a results file (default: filename()). See ResultsManager::read_file.
  /// Reading filename() itself (found or missing) is the load the first dispatch would do, so
  /// dispatch does not read it again.
  Status read_file(const std::string& name = {});
  /// Writes all validators and results to a file (default: filename()), replacing it.
  /// See ResultsManager::write_file.
  Status write_file(const std::string& name = {});
  /// All results, sorted by (op, params).
  std::vector<ResultLine> get_results() const;
  /// This machine's validators (key, value) in registration order.
  std::vector<ValidatorEntry> get_validators() const;

  /// Sets the user tuning database ("" : none). TUNEKIT_DB wins ("off": none); the default is
  /// $XDG_DATA_HOME/tunekit/tunekit.db (docs/database.md).
  void set_database(std::string path);
  /// The effective user and system database paths ("" where there is none).
  DbPaths database_paths() const;
  /// The database layers dispatch reads and tuning writes (paths as database_paths()).
  DbLayers& databases();

  /// On the first call: reads filename() (unless record-untuned is on, as upstream V25) and logs
  /// a warning when it is rejected, then the results of this environment in the user and system
  /// databases (results already loaded win: the file, then the user database, then the system
  /// one). Later calls return at once. Called by TunableOp on its first slow-path lookup.
  void ensure_results_loaded();
  /// Adds a tuned result, appends it to filename() (when record-untuned is off and the name is
  /// not empty) and stores it, with the candidates' times of its tuning, in the user database
  /// (one transaction). Returns whether it was new. With `not_saved`, it receives why a new
  /// result did not reach the file or the database (ok when it reached both, or when there is
  /// nothing to write to); such a result is also counted in results_manager().unsaved().
  /// Errors: kIoError from the append or the database (the result stays in memory).
  Expected<bool> add_result(ResultLine line, std::span<const DbCandidateTime> candidates = {},
                            Status* not_saved = nullptr);
  /// Records an untuned problem in untuned_filename() (deduplicated). Errors: kIoError.
  Status record_untuned(std::string_view op_signature, std::string_view params_signature,
                        std::string_view extra);

  /// Registers a validator (see ValidatorRegistry); logs a warning when a results file was
  /// already read without it.
  Status register_validator(std::string key, ValidatorRegistry::Getter getter);
  /// The validator registry (backends register their library-version keys here).
  ValidatorRegistry& validators() noexcept { return validators_; }
  /// The string-keyed results store behind every TunableOp of this context.
  ResultsManager& results_manager() noexcept { return results_; }
  /// The string-keyed results store (read-only view).
  const ResultsManager& results_manager() const noexcept { return results_; }
  /// The untuned-problem recorder.
  UntunedRecorder& untuned_recorder() noexcept { return untuned_; }

  // --- environment and lifecycle --------------------------------------------------------------
  /// Re-reads every TUNEKIT_* variable. Returns (and keeps, see environment_status()) an error
  /// naming each malformed variable; valid variables are applied either way.
  Status reload_environment();
  /// ok, or the error of the last environment read.
  Status environment_status() const;
  /// Restores every API setting to its default, re-reads the environment, drops all results,
  /// verdicts and the untuned dedup set, and re-arms the lazy results-file load. Validators stay.
  Status reset();
  /// Pins the settings `pinned` holds (the others keep their state): they win over the API and
  /// the environment until reset(), without touching the process environment.
  /// Errors: throws Error(kInvalidArgument) for a verbose level outside 0..3.
  void pin(const PinnedSettings& pinned);
  /// The settings snapshot for one tuning.
  /// Errors: kInvalidArgument for a malformed TUNEKIT_NUMERICAL_CHECK or environment.
  Expected<TuningSettings> tuning_settings() const;
  /// Installs the hook copied into TuningSettings::settle (null removes it). Thread-safe.
  void set_settle_hook(std::function<void()> hook);

 private:
  template <class T>
  class Setting {
   public:
    explicit Setting(T def) : def_(def), api_(def) {}
    T get() const noexcept {
      return has_env_.load(std::memory_order_acquire) ? env_.load(std::memory_order_relaxed)
                                                      : api_.load(std::memory_order_relaxed);
    }
    void set(T v) noexcept { api_.store(v, std::memory_order_relaxed); }
    void set_env(std::optional<T> v) noexcept {
      if (pinned_.load(std::memory_order_relaxed)) return;
      if (v) env_.store(*v, std::memory_order_relaxed);
      has_env_.store(v.has_value(), std::memory_order_release);
    }
    // A pinned value takes the environment's place (dispatch reads it the same way).
    void pin(T v) noexcept {
      pinned_.store(true, std::memory_order_relaxed);
      env_.store(v, std::memory_order_relaxed);
      has_env_.store(true, std::memory_order_release);
    }
    bool overridden() const noexcept { return has_env_.load(std::memory_order_acquire); }
    void reset() noexcept {
      api_.store(def_, std::memory_order_relaxed);
      if (pinned_.exchange(false, std::memory_order_relaxed)) {
        has_env_.store(false, std::memory_order_release);
      }
    }

   private:
    T def_;
    std::atomic<T> api_;
    std::atomic<T> env_{};
    std::atomic<bool> has_env_{false};
    std::atomic<bool> pinned_{false};
  };

  void register_builtin_validators();
  mutable std::mutex settle_mutex_;
  std::function<void()> settle_hook_;
  void apply_verbose();
  void note_overridden(bool overridden, std::string_view name) const;

  Setting<bool> enabled_{true};
  Setting<bool> tuning_{true};
  Setting<bool> record_untuned_{false};
  Setting<bool> wildcard_fallback_{false};
  Setting<bool> blas_log_{false};
  Setting<DynamicDimsMask> dynamic_dims_{0};
  Setting<bool> cache_flush_{true};
  Setting<int> verbose_{0};
  Setting<long long> max_tuning_duration_ms_{30};
  Setting<long long> max_tuning_iterations_{100};
  Setting<long long> max_warmup_duration_ms_{0};
  Setting<long long> max_warmup_iterations_{0};
  Setting<long long> rotating_mib_{-1};
  Setting<int> threads_{0};
  std::atomic<int> device_{0};
  std::atomic<measure::ClockFn> clock_{&now_ns};
  std::atomic<measure::CpuWaitFn> cpu_wait_{nullptr};  // null: read_cpu_wait

  mutable std::mutex mutex_;  // guards everything below
  NumericalCheck numerics_{};
  std::optional<std::string> api_filename_, env_filename_, pinned_filename_;
  std::optional<std::string> api_untuned_filename_, env_untuned_filename_;
  std::string api_verbose_filename_ = "err";
  std::optional<std::string> env_verbose_filename_;
  std::map<std::string, bool, std::less<>> api_libraries_;
  Status env_status_;

  ValidatorRegistry validators_;
  ResultsManager results_{validators_};
  UntunedRecorder untuned_;
  std::optional<std::string> api_database_, env_database_;
  DbLayers databases_;
  void sync_database_paths();
  void load_databases();
  void load_results_file();

  std::mutex load_mutex_;
  std::atomic<bool> loaded_{false};
  std::atomic<bool> databases_loaded_{false};
  std::string loaded_file_;
};

/// The process's TuningContext (created on first use, thread-safe).
TuningContext& tuning_context();

}  // namespace tunekit
