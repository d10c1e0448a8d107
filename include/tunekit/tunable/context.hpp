// TuningContext: the process-wide TunableOp context, composed of its settings (ContextSettings),
// its store of results (TuningStore) and its hooks (TuningHooks); tuning_context() is the
// process's.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/tunable/context_settings.hpp"
#include "tunekit/tunable/file_names.hpp"
#include "tunekit/tunable/tuning_hooks.hpp"
#include "tunekit/tunable/tuning_settings.hpp"
#include "tunekit/tunable/tuning_store.hpp"

namespace tunekit {

/// Process-wide TunableOp settings and state. Obtain it with tuning_context(). It composes three
/// parts, each usable on its own: settings() (ContextSettings), store() (TuningStore: results,
/// validators, files, databases) and hooks() (TuningHooks: clock, CPU-wait source, settle
/// hook); the methods below forward to them.
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
/// | TUNEKIT_CONFIRM_CALLS          | 0                     | calls; < 0 -> 0 = off; even        |
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

  /// The settings (switches, limits, numerical check, threads, libraries, verbosity).
  ContextSettings& settings() noexcept { return settings_; }
  /// The settings (read-only).
  const ContextSettings& settings() const noexcept { return settings_; }
  /// The store: results, validators, untuned recorder, file names, tuning databases.
  TuningStore& store() noexcept { return store_; }
  /// The store (read-only).
  const TuningStore& store() const noexcept { return store_; }
  /// The hooks: clock, CPU-wait source, settle hook.
  TuningHooks& hooks() noexcept { return hooks_; }
  /// The hooks (read-only).
  const TuningHooks& hooks() const noexcept { return hooks_; }

  // --- switches -----------------------------------------------------------------------------
  /// TunableOp on/off (TUNEKIT_ENABLED). Off: every call runs Default.
  void enable(bool on = true) { settings_.enable(on); }
  /// Effective switch (environment first).
  bool is_enabled() const noexcept { return settings_.is_enabled(); }
  /// Tuning of misses on/off (TUNEKIT_TUNING).
  void enable_tuning(bool on = true) { settings_.enable_tuning(on); }
  /// Effective switch (environment first).
  bool is_tuning_enabled() const noexcept { return settings_.is_tuning_enabled(); }
  /// Recording of untuned problems on/off (TUNEKIT_RECORD_UNTUNED). Turning it on again clears
  /// the per-process dedup set.
  void enable_record_untuned(bool on = true) { settings_.enable_record_untuned(on); }
  /// Effective switch (environment first).
  bool is_record_untuned_enabled() const noexcept { return settings_.is_record_untuned_enabled(); }
  /// Wildcard fallback for misses with tuning off (TUNEKIT_WILDCARD_FALLBACK).
  void enable_wildcard_fallback(bool on = true) { settings_.enable_wildcard_fallback(on); }
  /// Effective switch (environment first).
  bool is_wildcard_fallback_enabled() const noexcept {
    return settings_.is_wildcard_fallback_enabled();
  }
  /// Process-wide dynamic-dims mask (TUNEKIT_DYNAMIC_DIMS), used on threads without a
  /// DynamicDimsGuard. Bits beyond kAllDynamicDims are dropped.
  void set_dynamic_dims(DynamicDimsMask mask) { settings_.set_dynamic_dims(mask); }
  /// Effective process-wide mask (environment first).
  DynamicDimsMask dynamic_dims() const noexcept { return settings_.dynamic_dims(); }
  /// The mask that applies to a dispatch on the calling thread: the innermost DynamicDimsGuard's,
  /// else dynamic_dims().
  DynamicDimsMask effective_dynamic_dims() const noexcept {
    return settings_.effective_dynamic_dims();
  }
  /// BLAS_PARAMS suffix on results and untuned lines (TUNEKIT_BLAS_LOG).
  void enable_blas_log(bool on = true) { settings_.enable_blas_log(on); }
  /// Effective switch (environment first).
  bool is_blas_log_enabled() const noexcept { return settings_.is_blas_log_enabled(); }
  /// Operand cache flush between timed calls (TUNEKIT_CACHE_FLUSH_ENABLED).
  void enable_cache_flush(bool on = true) { settings_.enable_cache_flush(on); }
  /// Effective switch (environment first).
  bool is_cache_flush_enabled() const noexcept { return settings_.is_cache_flush_enabled(); }

  // --- numerical check -------------------------------------------------------------------------
  /// Turns the check on (with the current tolerances) or off.
  void enable_numerical_check(bool on = true) { settings_.enable_numerical_check(on); }
  /// Turns the check on/off with explicit tolerances.
  /// Errors: throws Error(kInvalidArgument) unless atol > 0 and rtol > 0 (finite).
  void set_numerical_check_tolerances(bool enable, double atol = 1e-5, double rtol = 1e-5) {
    settings_.set_numerical_check_tolerances(enable, atol, rtol);
  }
  /// Turns the check on with the per-dtype default tolerances (Params::default_tolerance()).
  void use_default_tolerances() { settings_.use_default_tolerances(); }
  /// The effective setting (TUNEKIT_NUMERICAL_CHECK, re-read on every call, wins).
  /// Errors: throws Error(kInvalidArgument) naming the variable when it is malformed.
  NumericalCheck numerical_check() const { return settings_.numerical_check(); }
  /// As numerical_check(), returning the error instead of throwing.
  Expected<NumericalCheck> try_numerical_check() const { return settings_.try_numerical_check(); }
  /// numerical_check().enabled. Errors: throws as numerical_check().
  bool is_numerical_check_enabled() const { return settings_.is_numerical_check_enabled(); }

  // --- limits ---------------------------------------------------------------------------------
  /// Budget of the final profile per candidate (ms); negative -> 0; 0 = off.
  void set_max_tuning_duration_ms(long long ms) { settings_.set_max_tuning_duration_ms(ms); }
  /// Effective limit in ms (environment first); 0 = off.
  long long max_tuning_duration_ms() const noexcept { return settings_.max_tuning_duration_ms(); }
  /// Calls that confirm a winner in place against Default (TUNEKIT_CONFIRM_CALLS; 0 = off).
  void set_confirm_calls(long long calls) { settings_.set_confirm_calls(calls); }
  /// Effective count (environment first).
  long long confirm_calls() const noexcept { return settings_.confirm_calls(); }
  /// Cap on timed calls per candidate; negative -> 0; 0 = off. Both limits 0 -> 100 calls.
  void set_max_tuning_iterations(long long iterations) {
    settings_.set_max_tuning_iterations(iterations);
  }
  /// Effective limit in calls (environment first); 0 = off.
  long long max_tuning_iterations() const noexcept { return settings_.max_tuning_iterations(); }
  /// Warmup budget before the final profile (ms); negative -> 0; 0 = off.
  void set_max_warmup_duration_ms(long long ms) { settings_.set_max_warmup_duration_ms(ms); }
  /// Effective warmup budget in ms (environment first); 0 = off.
  long long max_warmup_duration_ms() const noexcept { return settings_.max_warmup_duration_ms(); }
  /// Cap on warmup calls; negative -> 0; 0 = off.
  void set_max_warmup_iterations(long long iterations) {
    settings_.set_max_warmup_iterations(iterations);
  }
  /// Effective warmup cap in calls (environment first); 0 = off.
  long long max_warmup_iterations() const noexcept { return settings_.max_warmup_iterations(); }

  // --- rotating buffers -------------------------------------------------------------------------
  /// Rotating buffer size in MiB: negative -> the default (the last-level cache this process can
  /// use, hw::effective_llc_bytes()), 0 -> rotation off.
  /// Errors: throws Error(kInvalidArgument) above kMaxRotatingBufferMib (the bytes would not fit
  ///   64 bits); TUNEKIT_ROTATING_BUFFER_SIZE above it is an environment error.
  void set_rotating_buffer_size(long long mib) { settings_.set_rotating_buffer_size(mib); }
  /// Effective rotating buffer size in **bytes** (set 1 -> 1048576; set -1 -> LLC bytes).
  std::size_t rotating_buffer_size() const noexcept { return settings_.rotating_buffer_size(); }

  // --- threads and device ---------------------------------------------------------------------
  /// Thread count the ops layer gives its libraries; <= 0 -> default (usable cores). Stored only.
  void set_threads(int threads) { settings_.set_threads(threads); }
  /// Effective thread count (>= 1); also the THREADS validator value.
  int threads() const noexcept { return settings_.threads(); }
  /// Device ordinal inserted into default file names (CPU: 0; distributed ranks set theirs).
  void set_device_ordinal(int device) { settings_.set_device_ordinal(device); }
  /// The device ordinal (>= 0).
  int device_ordinal() const noexcept { return settings_.device_ordinal(); }

  // --- libraries --------------------------------------------------------------------------------
  /// Allows or excludes candidates whose library() is `library` (TUNEKIT_<LIBRARY>_ENABLED).
  void enable_library(std::string_view library, bool on = true) {
    settings_.enable_library(library, on);
  }
  /// Errors: throws Error(kInvalidArgument) naming the variable when it is malformed.
  bool is_library_enabled(std::string_view library) const {
    return settings_.is_library_enabled(library);
  }
  /// As is_library_enabled(), returning the error instead of throwing.
  Expected<bool> try_is_library_enabled(std::string_view library) const {
    return settings_.try_is_library_enabled(library);
  }

  // --- verbosity ------------------------------------------------------------------------------
  /// Log level 0 (off), 1 (basic), 2 (tuning status), 3 (full trace) (TUNEKIT_VERBOSE).
  /// Errors: throws Error(kInvalidArgument) outside 0..3.
  void set_verbose(int level) { settings_.set_verbose(level); }
  /// Effective level 0..3 (environment first).
  int verbose() const noexcept { return settings_.verbose(); }
  /// Log sink: "err", "out" or a file path (TUNEKIT_VERBOSE_FILENAME).
  /// Errors: kIoError when the file cannot be opened (the previous sink stays).
  Status set_verbose_filename(const std::string& sink) {
    return settings_.set_verbose_filename(sink);
  }
  /// Effective sink: "err", "out" or a path (environment first).
  std::string verbose_filename() const { return settings_.verbose_filename(); }

  // --- files ----------------------------------------------------------------------------------
  /// Sets the results file; the device ordinal is inserted only when asked (as upstream). An
  /// empty name disables results-file I/O. TUNEKIT_FILENAME wins (with the ordinal inserted).
  void set_filename(std::string name, bool insert_device_ordinal = false) {
    store_.set_filename(std::move(name), insert_device_ordinal);
  }
  /// Effective results file name.
  std::string filename() const { return store_.filename(); }
  /// Sets the untuned file (ordinal inserted before the last '.' only when asked).
  void set_untuned_filename(std::string name, bool insert_device_ordinal = false) {
    store_.set_untuned_filename(std::move(name), insert_device_ordinal);
  }
  /// Effective untuned file name.
  std::string untuned_filename() const { return store_.untuned_filename(); }

  /// Loads and merges a results file (default: filename()). See ResultsManager::read_file.
  /// Reading filename() itself (found or missing) is the load the first dispatch would do, so
  /// dispatch does not read it again.
  Status read_file(const std::string& name = {}) { return store_.read_file(name); }
  /// Writes all validators and results to a file (default: filename()), replacing it.
  /// See ResultsManager::write_file.
  Status write_file(const std::string& name = {}) { return store_.write_file(name); }
  /// All results, sorted by (op, params).
  std::vector<ResultLine> get_results() const { return store_.get_results(); }
  /// This machine's validators (key, value) in registration order.
  std::vector<ValidatorEntry> get_validators() const { return store_.get_validators(); }

  /// Sets the user tuning database ("" : none). TUNEKIT_DB wins ("off": none); the default is
  /// $XDG_DATA_HOME/tunekit/tunekit.db (docs/database.md).
  void set_database(std::string path) { store_.set_database(std::move(path)); }
  /// The effective user and system database paths ("" where there is none).
  DbPaths database_paths() const { return store_.database_paths(); }
  /// The database layers dispatch reads and tuning writes (paths as database_paths()).
  DbLayers& databases() { return store_.databases(); }

  /// On the first call: reads filename() (unless record-untuned is on, as upstream V25) and logs
  /// a warning when it is rejected, then the results of this environment in the user and system
  /// databases (results already loaded win: the file, then the user database, then the system
  /// one). Later calls return at once. Called by TunableOp on its first slow-path lookup.
  void ensure_results_loaded() { store_.ensure_results_loaded(); }
  /// Adds a tuned result, appends it to filename() (when record-untuned is off and the name is
  /// not empty) and stores it, with the candidates' times of its tuning, in the user database
  /// (one transaction). Returns whether it was new. With `not_saved`, it receives why a new
  /// result did not reach the file or the database (ok when it reached both, or when there is
  /// nothing to write to); such a result is also counted in results_manager().unsaved().
  /// Errors: kIoError from the append or the database (the result stays in memory).
  Expected<bool> add_result(ResultLine line, std::span<const DbCandidateTime> candidates = {},
                            Status* not_saved = nullptr) {
    return store_.add_result(std::move(line), candidates, not_saved);
  }
  /// Records an untuned problem in untuned_filename() (deduplicated). Errors: kIoError.
  Status record_untuned(std::string_view op_signature, std::string_view params_signature,
                        std::string_view extra) {
    return store_.record_untuned(op_signature, params_signature, extra);
  }

  /// Registers a validator (see ValidatorRegistry); logs a warning when a results file was
  /// already read without it.
  Status register_validator(std::string key, ValidatorRegistry::Getter getter) {
    return store_.register_validator(std::move(key), std::move(getter));
  }
  /// The validator registry (backends register their library-version keys here).
  ValidatorRegistry& validators() noexcept { return store_.validators(); }
  /// The string-keyed results store behind every TunableOp of this context.
  ResultsManager& results_manager() noexcept { return store_.results_manager(); }
  /// The string-keyed results store (read-only view).
  const ResultsManager& results_manager() const noexcept { return store_.results_manager(); }
  /// The untuned-problem recorder.
  UntunedRecorder& untuned_recorder() noexcept { return store_.untuned_recorder(); }

  // --- environment and lifecycle --------------------------------------------------------------
  /// Re-reads every TUNEKIT_* variable. Returns (and keeps, see environment_status()) an error
  /// naming each malformed variable; valid variables are applied either way.
  Status reload_environment();
  /// ok, or the error of the last environment read.
  Status environment_status() const { return settings_.environment_status(); }
  /// Restores every API setting to its default, drops the pins, re-reads the environment, drops
  /// all results, verdicts and the untuned dedup set, re-arms the lazy results-file load and
  /// restores the steady clock. Validators stay.
  Status reset();
  /// Pins the settings `pinned` holds (the others keep their state): they win over the API and
  /// the environment until reset(), without touching the process environment.
  /// Errors: throws Error(kInvalidArgument) for a verbose level outside 0..3.
  void pin(const PinnedSettings& pinned);
  /// The settings snapshot for one tuning (settings and hooks; with a user database, its
  /// search_trials stores each template search's trials there: TuningStore::add_search_trials).
  /// Errors: kInvalidArgument for a malformed TUNEKIT_NUMERICAL_CHECK or environment.
  Expected<TuningSettings> tuning_settings();

 private:
  ContextSettings settings_;
  TuningStore store_{settings_};
  TuningHooks hooks_;
};

/// The process's TuningContext (created on first use, thread-safe).
TuningContext& tuning_context();

}  // namespace tunekit
