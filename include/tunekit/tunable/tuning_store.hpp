// TuningStore: where a TuningContext's results live and come from: the results manager, the
// validators, the untuned recorder, the results and untuned file names, and the tuning databases.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/records/db_layers.hpp"
#include "tunekit/tunable/context_settings.hpp"
#include "tunekit/tunable/file_names.hpp"
#include "tunekit/tunable/results_file.hpp"
#include "tunekit/tunable/results_manager.hpp"
#include "tunekit/tunable/untuned.hpp"
#include "tunekit/tunable/validators.hpp"

namespace tunekit {

/// The store of a TuningContext (TuningContext::store()). It reads the settings it depends on
/// (device ordinal, record-untuned, threads for the THREADS validator) from `settings`, and
/// TUNEKIT_FILENAME, TUNEKIT_UNTUNED_FILENAME and TUNEKIT_DB from the environment. Thread-safe.
class TuningStore {
 public:
  /// A store with the built-in validators (TUNEKIT_VERSION, CPU_MODEL, CPU_ISA, THREADS) and
  /// the environment's file names; `settings` must outlive it.
  explicit TuningStore(const ContextSettings& settings);
  TuningStore(const TuningStore&) = delete;
  TuningStore& operator=(const TuningStore&) = delete;

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
  /// Stores the configurations one template candidate's search measured as trials of this
  /// environment (the validators') in the user database, one transaction (db_trials.hpp,
  /// add_measured_trials): one search per (template, problem). Nothing when there is no user
  /// database or untuned problems are recorded. A failure is logged as a warning once per
  /// store and returned; tuning goes on. Errors: kIoError (opening or writing the database).
  Status add_search_trials(std::span<const MeasureInput> inputs,
                           std::span<const MeasureResult> results);
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

  /// Pins the results file (PinnedSettings::filename): it wins over set_filename() and
  /// TUNEKIT_FILENAME until reset().
  void pin_filename(std::string name);
  /// Re-reads TUNEKIT_FILENAME, TUNEKIT_UNTUNED_FILENAME and TUNEKIT_DB.
  void reload_environment();
  /// Drops the API file names and database, the pin, all results and the untuned dedup set, and
  /// re-arms the lazy loads; validators stay. Re-reads the environment.
  void reset();

 private:
  void register_builtin_validators();
  void sync_database_paths();
  void load_databases();
  void load_results_file();

  const ContextSettings& settings_;
  ValidatorRegistry validators_;
  ResultsManager results_{validators_};
  UntunedRecorder untuned_;
  DbLayers databases_;

  mutable std::mutex mutex_;  // guards the names below
  std::optional<std::string> api_filename_, env_filename_, pinned_filename_;
  std::optional<std::string> api_untuned_filename_, env_untuned_filename_;
  std::optional<std::string> api_database_, env_database_;

  std::mutex load_mutex_;
  std::atomic<bool> loaded_{false};
  std::atomic<bool> databases_loaded_{false};
  std::atomic<bool> trials_warned_{false};
  std::string loaded_file_;
};

}  // namespace tunekit
