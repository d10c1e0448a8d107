// TuningStore: results, validators, untuned recorder, file names, tuning databases.
// See include/tunekit/tunable/tuning_store.hpp.
#include "tunekit/tunable/tuning_store.hpp"

#include <utility>

#include "tunekit/core/env.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/version.hpp"
#include "tunekit/records/db_trials.hpp"

namespace tunekit {
namespace {

constexpr const char* kFilename = "TUNEKIT_FILENAME";
constexpr const char* kUntunedFilename = "TUNEKIT_UNTUNED_FILENAME";

}  // namespace

TuningStore::TuningStore(const ContextSettings& settings) : settings_(settings) {
  register_builtin_validators();
  reload_environment();
}

void TuningStore::register_builtin_validators() {
  (void)validators_.register_validator(std::string(kVersionValidator),
                                       [] { return std::string(version()); });
  // The CPU the results are measured on (a TUNEKIT_CPU_FIXTURE changes only what is offered).
  (void)validators_.register_validator("CPU_MODEL", [] { return hw::host_cpu().model; });
  (void)validators_.register_validator("CPU_ISA", [] { return hw::host_cpu().isa; });
  (void)validators_.register_validator("THREADS",
                                       [this] { return std::to_string(settings_.threads()); });
}

void TuningStore::set_filename(std::string name, bool insert_ordinal) {
  std::lock_guard lock(mutex_);
  api_filename_ = insert_ordinal && !name.empty()
                      ? insert_device_ordinal(name, settings_.device_ordinal())
                      : std::move(name);
  if (env_filename_) log::info(1, "{} is set and overrides set_filename()", kFilename);
}

std::string TuningStore::filename() const {
  std::lock_guard lock(mutex_);
  if (pinned_filename_) return *pinned_filename_;
  if (env_filename_) return insert_device_ordinal(*env_filename_, settings_.device_ordinal());
  if (api_filename_) return *api_filename_;
  return insert_device_ordinal(kDefaultResultsFilename, settings_.device_ordinal());
}

void TuningStore::set_untuned_filename(std::string name, bool insert_ordinal) {
  std::lock_guard lock(mutex_);
  api_untuned_filename_ = insert_ordinal && !name.empty() ? insert_device_ordinal_before_extension(
                                                                name, settings_.device_ordinal())
                                                          : std::move(name);
  if (env_untuned_filename_)
    log::info(1, "{} is set and overrides set_untuned_filename()", kUntunedFilename);
}

std::string TuningStore::untuned_filename() const {
  std::lock_guard lock(mutex_);
  if (env_untuned_filename_) {
    return insert_device_ordinal_before_extension(*env_untuned_filename_,
                                                  settings_.device_ordinal());
  }
  if (api_untuned_filename_) return *api_untuned_filename_;
  return insert_device_ordinal_before_extension(kDefaultUntunedFilename,
                                                settings_.device_ordinal());
}

Status TuningStore::read_file(const std::string& name) {
  const std::string path = name.empty() ? filename() : name;
  if (path.empty()) return Status(StatusCode::kInvalidArgument, "read_file: no results file set");
  Status s = results_.read_file(path);
  if ((s.is_ok() || s.code() == StatusCode::kNotFound) && path == filename()) {
    // The results file itself was just read: the first dispatch need not read it again.
    std::lock_guard lock(load_mutex_);
    loaded_file_ = path;
    loaded_.store(true, std::memory_order_release);
  }
  return s;
}

Status TuningStore::write_file(const std::string& name) {
  const std::string path = name.empty() ? filename() : name;
  if (path.empty()) return Status(StatusCode::kInvalidArgument, "write_file: no results file set");
  return results_.write_file(path);
}

std::vector<ResultLine> TuningStore::get_results() const { return results_.results(); }

std::vector<ValidatorEntry> TuningStore::get_validators() const { return validators_.values(); }

void TuningStore::set_database(std::string path) {
  std::lock_guard lock(mutex_);
  api_database_ = std::move(path);
  if (env_database_) log::info(1, "TUNEKIT_DB is set and overrides set_database()");
}

DbPaths TuningStore::database_paths() const {
  std::lock_guard lock(mutex_);
  DbPaths paths{default_user_db_path(), default_system_db_path()};
  if (!env_database_ && api_database_) paths.user = *api_database_;
  return paths;
}

void TuningStore::sync_database_paths() {
  const DbPaths want = database_paths();
  const DbPaths have = databases_.paths();
  if (want.user != have.user || want.system != have.system) databases_.set_paths(want);
}

DbLayers& TuningStore::databases() {
  sync_database_paths();
  return databases_;
}

void TuningStore::load_databases() {
  std::vector<Status> problems;
  const auto rows = databases().dispatch_results(validators_.values(), &problems);
  for (const Status& s : problems) log::warn(s.message());
  std::size_t added = 0;
  for (const LayeredResult& row : rows) {
    const DbResult& r = row.result;
    added +=
        results_.add(ResultLine{r.op_signature, r.params_signature, r.solution, r.time_ms, r.extra})
            ? 1
            : 0;
  }
  if (!rows.empty()) {
    log::info(1, "loaded {} of {} results of this environment from the tuning databases", added,
              rows.size());
  }
}

void TuningStore::ensure_results_loaded() {
  if (loaded_.load(std::memory_order_acquire) &&
      databases_loaded_.load(std::memory_order_acquire)) {
    return;
  }
  std::lock_guard lock(load_mutex_);
  if (!loaded_.load(std::memory_order_relaxed)) load_results_file();
  if (databases_loaded_.load(std::memory_order_relaxed)) return;
  if (!settings_.is_record_untuned_enabled()) load_databases();
  databases_loaded_.store(true, std::memory_order_release);
}

void TuningStore::load_results_file() {
  const std::string path = filename();
  if (!path.empty() && !settings_.is_record_untuned_enabled()) {
    Status s = results_.read_file(path);
    if (s.is_ok()) {
      log::info(1, "loaded results from '{}' ({} results in memory)", path, results_.size());
    } else if (s.code() == StatusCode::kNotFound) {
      log::info(2, "results file '{}' does not exist yet", path);
    } else {
      log::warn(s.message());
    }
    loaded_file_ = path;
  }
  loaded_.store(true, std::memory_order_release);
}

Expected<bool> TuningStore::add_result(ResultLine line, std::span<const DbCandidateTime> candidates,
                                       Status* not_saved) {
  const bool recording = settings_.is_record_untuned_enabled();
  const std::string path = recording ? std::string() : filename();
  const DbResult row{line.op_signature, line.params_signature,        line.solution,
                     line.time_ms,      format_time_ms(line.time_ms), line.extra};
  Status file_status;
  auto added = results_.add_and_persist(std::move(line), path, &file_status);
  if (added && !*added) return false;
  if (not_saved != nullptr) *not_saved = file_status;
  if (recording) return added;  // kept in memory only, as the file
  auto db = databases().user_for_writing();
  Status stored = db ? Status::ok() : db.status();
  if (db && *db) {
    auto inserted = (*db)->add_result(validators_.values(), row,
                                      DbProvenance{hw::host_name(), "tuned", ""}, candidates);
    stored = inserted ? Status::ok() : inserted.status();
  }
  if (stored.is_ok()) return added;
  results_.note_unsaved(stored);
  if (not_saved != nullptr && (not_saved->is_ok())) *not_saved = stored;
  if (added) return stored;
  return added;
}

Status TuningStore::add_search_trials(std::span<const MeasureInput> inputs,
                                      std::span<const MeasureResult> results) {
  if (settings_.is_record_untuned_enabled()) return Status::ok();
  auto db = databases().user_for_writing();
  Status stored = db ? Status::ok() : db.status();
  if (db && *db) {
    auto added = add_measured_trials(**db, validators_.values(), inputs, results,
                                     DbProvenance{hw::host_name(), "tuned", ""});
    stored = added ? Status::ok() : added.status();
  }
  if (!stored.is_ok() && !trials_warned_.exchange(true)) {
    log::warn(stored.message() + " (search trials not stored; tuning goes on)");
  }
  return stored;
}

Status TuningStore::record_untuned(std::string_view op_signature, std::string_view params_signature,
                                   std::string_view extra) {
  auto r = untuned_.record(op_signature, params_signature, extra, untuned_filename());
  return r ? Status::ok() : r.status();
}

Status TuningStore::register_validator(std::string key, ValidatorRegistry::Getter getter) {
  const std::string shown = key;
  TUNEKIT_RETURN_IF_ERROR(validators_.register_validator(std::move(key), std::move(getter)));
  if (loaded_.load(std::memory_order_acquire)) {
    std::lock_guard lock(load_mutex_);
    if (!loaded_file_.empty()) {
      log::warn("validator " + shown + " registered after results were read from '" + loaded_file_ +
                "'; register validators before the first dispatch");
    }
  }
  return Status::ok();
}

void TuningStore::pin_filename(std::string name) {
  std::lock_guard lock(mutex_);
  pinned_filename_ = std::move(name);
}

void TuningStore::reload_environment() {
  {
    std::lock_guard lock(mutex_);
    env_filename_ = env::get_string(kFilename);
    env_untuned_filename_ = env::get_string(kUntunedFilename);
    env_database_ = env::get_string("TUNEKIT_DB");
  }
  results_.touch();
}

void TuningStore::reset() {
  {
    std::lock_guard lock(mutex_);
    api_filename_.reset();
    pinned_filename_.reset();
    api_untuned_filename_.reset();
    api_database_.reset();
  }
  {
    std::lock_guard lock(load_mutex_);
    loaded_.store(false, std::memory_order_release);
    databases_loaded_.store(false, std::memory_order_release);
    loaded_file_.clear();
  }
  results_.clear();
  untuned_.clear();
  reload_environment();
}

}  // namespace tunekit
