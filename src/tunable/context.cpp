// TuningContext: settings with environment overrides, file names, lazy results loading.
// See include/tunekit/tunable/context.hpp.
#include "tunekit/tunable/context.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "tunekit/core/env.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/version.hpp"

namespace tunekit {
namespace {

constexpr const char* kEnabled = "TUNEKIT_ENABLED";
constexpr const char* kTuning = "TUNEKIT_TUNING";
constexpr const char* kRecordUntuned = "TUNEKIT_RECORD_UNTUNED";
constexpr const char* kFilename = "TUNEKIT_FILENAME";
constexpr const char* kUntunedFilename = "TUNEKIT_UNTUNED_FILENAME";
constexpr const char* kVerbose = "TUNEKIT_VERBOSE";
constexpr const char* kVerboseFilename = "TUNEKIT_VERBOSE_FILENAME";
constexpr const char* kNumericalCheck = "TUNEKIT_NUMERICAL_CHECK";
constexpr const char* kMaxTuningDuration = "TUNEKIT_MAX_TUNING_DURATION_MS";
constexpr const char* kMaxTuningIterations = "TUNEKIT_MAX_TUNING_ITERATIONS";
constexpr const char* kMaxWarmupDuration = "TUNEKIT_MAX_WARMUP_DURATION_MS";
constexpr const char* kMaxWarmupIterations = "TUNEKIT_MAX_WARMUP_ITERATIONS";
constexpr const char* kCacheFlush = "TUNEKIT_CACHE_FLUSH_ENABLED";
constexpr const char* kRotatingBufferSize = "TUNEKIT_ROTATING_BUFFER_SIZE";
constexpr const char* kBlasLog = "TUNEKIT_BLAS_LOG";
constexpr const char* kWildcardFallback = "TUNEKIT_WILDCARD_FALLBACK";
constexpr const char* kThreads = "TUNEKIT_THREADS";
constexpr const char* kDynamicDims = "TUNEKIT_DYNAMIC_DIMS";

std::size_t base_name_start(std::string_view name) {
  const std::size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? 0 : slash + 1;
}

std::string insert_before_last_dot(std::string_view name, std::string_view ordinal) {
  const std::size_t base = base_name_start(name);
  const std::size_t dot = name.rfind('.');
  std::string out(name);
  if (dot == std::string_view::npos || dot < base) return out.append(ordinal);
  out.insert(dot, ordinal);
  return out;
}

long long clamp_limit(long long v) { return v < 0 ? 0 : v; }

// Collects errors of one environment pass.
struct EnvErrors {
  std::string text;
  void add(const Status& s) {
    if (s.is_ok()) return;
    if (!text.empty()) text += "; ";
    text += s.message();
  }
  template <class T>
  std::optional<T> take(Expected<std::optional<T>> value) {
    if (!value) {
      add(value.status());
      return std::nullopt;
    }
    return *value;
  }
};

}  // namespace

std::string insert_at_ordinal(std::string_view name, std::string_view text) {
  if (const std::size_t pct = name.find("%d"); pct != std::string_view::npos) {
    std::string out(name);
    out.replace(pct, 2, text);
    return out;
  }
  return insert_before_last_dot(name, text);
}

std::string insert_device_ordinal(std::string_view name, int device) {
  return insert_at_ordinal(name, std::to_string(device));
}

std::string insert_device_ordinal_before_extension(std::string_view name, int device) {
  return insert_before_last_dot(name, std::to_string(device));
}

std::string library_env_name(std::string_view library) {
  std::string name = "TUNEKIT_";
  for (char c : library) {
    const auto u = static_cast<unsigned char>(c);
    name.push_back(std::isalnum(u) ? static_cast<char>(std::toupper(u)) : '_');
  }
  name += "_ENABLED";
  return name;
}

TuningContext::TuningContext() {
  register_builtin_validators();
  (void)reload_environment();
}

TuningContext::~TuningContext() = default;

void TuningContext::register_builtin_validators() {
  (void)validators_.register_validator(std::string(kVersionValidator),
                                       [] { return std::string(version()); });
  // The CPU the results are measured on (a TUNEKIT_CPU_FIXTURE changes only what is offered).
  (void)validators_.register_validator("CPU_MODEL", [] { return hw::host_cpu().model; });
  (void)validators_.register_validator("CPU_ISA", [] { return hw::host_cpu().isa; });
  (void)validators_.register_validator("THREADS", [this] { return std::to_string(threads()); });
}

void TuningContext::note_overridden(bool overridden, std::string_view name) const {
  if (overridden) {
    log::info(1, "{} is set and overrides the value set through the API", name);
  }
}

// --- switches ----------------------------------------------------------------------------------

void TuningContext::enable(bool on) {
  enabled_.set(on);
  note_overridden(enabled_.overridden(), kEnabled);
  results_.touch();
}

void TuningContext::enable_tuning(bool on) {
  tuning_.set(on);
  note_overridden(tuning_.overridden(), kTuning);
  results_.touch();
}

void TuningContext::enable_record_untuned(bool on) {
  const bool before = record_untuned_.get();
  record_untuned_.set(on);
  note_overridden(record_untuned_.overridden(), kRecordUntuned);
  if (!before && record_untuned_.get()) untuned_.clear();
  results_.touch();
}

void TuningContext::enable_wildcard_fallback(bool on) {
  wildcard_fallback_.set(on);
  note_overridden(wildcard_fallback_.overridden(), kWildcardFallback);
  results_.touch();
}

void TuningContext::set_dynamic_dims(DynamicDimsMask mask) {
  dynamic_dims_.set(static_cast<DynamicDimsMask>(mask & kAllDynamicDims));
  note_overridden(dynamic_dims_.overridden(), kDynamicDims);
}

void TuningContext::enable_blas_log(bool on) {
  blas_log_.set(on);
  note_overridden(blas_log_.overridden(), kBlasLog);
}

void TuningContext::enable_cache_flush(bool on) {
  cache_flush_.set(on);
  note_overridden(cache_flush_.overridden(), kCacheFlush);
}

// --- numerical check ---------------------------------------------------------------------------

void TuningContext::enable_numerical_check(bool on) {
  std::lock_guard lock(mutex_);
  numerics_.enabled = on;
}

void TuningContext::set_numerical_check_tolerances(bool enable, double atol, double rtol) {
  if (!(atol > 0.0) || !(rtol > 0.0) || !std::isfinite(atol) || !std::isfinite(rtol)) {
    throw Error(StatusCode::kInvalidArgument,
                "set_numerical_check_tolerances: atol and rtol must be positive, got atol=" +
                    std::to_string(atol) + " rtol=" + std::to_string(rtol));
  }
  std::lock_guard lock(mutex_);
  numerics_ = NumericalCheck{enable, Tolerance{atol, rtol}};
}

void TuningContext::use_default_tolerances() {
  std::lock_guard lock(mutex_);
  numerics_ = NumericalCheck{true, std::nullopt};
}

Expected<NumericalCheck> TuningContext::try_numerical_check() const {
  if (auto raw = env::get_string(kNumericalCheck))
    return parse_numerical_check(*raw, kNumericalCheck);
  std::lock_guard lock(mutex_);
  return numerics_;
}

NumericalCheck TuningContext::numerical_check() const { return try_numerical_check().value(); }

// --- limits ------------------------------------------------------------------------------------

void TuningContext::set_max_tuning_duration_ms(long long ms) {
  max_tuning_duration_ms_.set(clamp_limit(ms));
  note_overridden(max_tuning_duration_ms_.overridden(), kMaxTuningDuration);
}

void TuningContext::set_max_tuning_iterations(long long iterations) {
  max_tuning_iterations_.set(clamp_limit(iterations));
  note_overridden(max_tuning_iterations_.overridden(), kMaxTuningIterations);
}

void TuningContext::set_max_warmup_duration_ms(long long ms) {
  max_warmup_duration_ms_.set(clamp_limit(ms));
  note_overridden(max_warmup_duration_ms_.overridden(), kMaxWarmupDuration);
}

void TuningContext::set_max_warmup_iterations(long long iterations) {
  max_warmup_iterations_.set(clamp_limit(iterations));
  note_overridden(max_warmup_iterations_.overridden(), kMaxWarmupIterations);
}

void TuningContext::set_rotating_buffer_size(long long mib) {
  if (mib > kMaxRotatingBufferMib) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("set_rotating_buffer_size: {} MiB is too large (at most {} MiB)", mib,
                            kMaxRotatingBufferMib));
  }
  rotating_mib_.set(mib < 0 ? -1 : mib);
  note_overridden(rotating_mib_.overridden(), kRotatingBufferSize);
}

std::size_t TuningContext::rotating_buffer_size() const noexcept {
  const long long mib = rotating_mib_.get();
  if (mib < 0) return hw::effective_llc_bytes();
  return static_cast<std::size_t>(mib) << 20;
}

// --- threads, device, libraries ----------------------------------------------------------------

void TuningContext::set_threads(int threads) {
  threads_.set(threads < 0 ? 0 : threads);
  note_overridden(threads_.overridden(), kThreads);
}

int TuningContext::threads() const noexcept {
  const int t = threads_.get();
  return t > 0 ? t : hw::cpu().usable_cores;
}

void TuningContext::set_device_ordinal(int device) {
  device_.store(device < 0 ? 0 : device, std::memory_order_relaxed);
}

void TuningContext::enable_library(std::string_view library, bool on) {
  std::lock_guard lock(mutex_);
  api_libraries_.insert_or_assign(std::string(library), on);
}

Expected<bool> TuningContext::try_is_library_enabled(std::string_view library) const {
  const std::string var = library_env_name(library);
  auto from_env = env::get_bool(var.c_str());
  if (!from_env) return from_env.status();
  if (from_env->has_value()) return **from_env;
  std::lock_guard lock(mutex_);
  auto it = api_libraries_.find(library);
  return it == api_libraries_.end() ? true : it->second;
}

bool TuningContext::is_library_enabled(std::string_view library) const {
  return try_is_library_enabled(library).value();
}

void TuningContext::set_cpu_wait_source(measure::CpuWaitFn source) noexcept {
  cpu_wait_.store(source, std::memory_order_relaxed);
}

void TuningContext::set_clock(measure::ClockFn time_source) noexcept {
  clock_.store(time_source != nullptr ? time_source : &now_ns, std::memory_order_relaxed);
}

// --- verbosity ---------------------------------------------------------------------------------

void TuningContext::set_verbose(int level) {
  if (level < 0 || level > 3) {
    throw Error(StatusCode::kInvalidArgument,
                "set_verbose: level must be 0..3, got " + std::to_string(level));
  }
  verbose_.set(level);
  note_overridden(verbose_.overridden(), kVerbose);
  apply_verbose();
}

void TuningContext::apply_verbose() { log::set_level(verbose_.get()); }

Status TuningContext::set_verbose_filename(const std::string& sink) {
  std::lock_guard lock(mutex_);
  if (env_verbose_filename_) {
    api_verbose_filename_ = sink;
    log::info(1, "{} is set and overrides the value set through the API", kVerboseFilename);
    return Status::ok();
  }
  TUNEKIT_RETURN_IF_ERROR(log::set_sink(sink));
  api_verbose_filename_ = sink;
  return Status::ok();
}

std::string TuningContext::verbose_filename() const {
  std::lock_guard lock(mutex_);
  return env_verbose_filename_ ? *env_verbose_filename_ : api_verbose_filename_;
}

// --- files -------------------------------------------------------------------------------------

void TuningContext::set_filename(std::string name, bool insert_ordinal) {
  std::lock_guard lock(mutex_);
  api_filename_ = insert_ordinal && !name.empty() ? insert_device_ordinal(name, device_ordinal())
                                                  : std::move(name);
  if (env_filename_) log::info(1, "{} is set and overrides set_filename()", kFilename);
}

std::string TuningContext::filename() const {
  std::lock_guard lock(mutex_);
  if (pinned_filename_) return *pinned_filename_;
  if (env_filename_) return insert_device_ordinal(*env_filename_, device_ordinal());
  if (api_filename_) return *api_filename_;
  return insert_device_ordinal(kDefaultResultsFilename, device_ordinal());
}

void TuningContext::set_untuned_filename(std::string name, bool insert_ordinal) {
  std::lock_guard lock(mutex_);
  api_untuned_filename_ = insert_ordinal && !name.empty()
                              ? insert_device_ordinal_before_extension(name, device_ordinal())
                              : std::move(name);
  if (env_untuned_filename_)
    log::info(1, "{} is set and overrides set_untuned_filename()", kUntunedFilename);
}

std::string TuningContext::untuned_filename() const {
  std::lock_guard lock(mutex_);
  if (env_untuned_filename_) {
    return insert_device_ordinal_before_extension(*env_untuned_filename_, device_ordinal());
  }
  if (api_untuned_filename_) return *api_untuned_filename_;
  return insert_device_ordinal_before_extension(kDefaultUntunedFilename, device_ordinal());
}

Status TuningContext::read_file(const std::string& name) {
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

Status TuningContext::write_file(const std::string& name) {
  const std::string path = name.empty() ? filename() : name;
  if (path.empty()) return Status(StatusCode::kInvalidArgument, "write_file: no results file set");
  return results_.write_file(path);
}

std::vector<ResultLine> TuningContext::get_results() const { return results_.results(); }

std::vector<ValidatorEntry> TuningContext::get_validators() const { return validators_.values(); }

void TuningContext::set_database(std::string path) {
  std::lock_guard lock(mutex_);
  api_database_ = std::move(path);
  if (env_database_) log::info(1, "TUNEKIT_DB is set and overrides set_database()");
}

DbPaths TuningContext::database_paths() const {
  std::lock_guard lock(mutex_);
  DbPaths paths{default_user_db_path(), default_system_db_path()};
  if (!env_database_ && api_database_) paths.user = *api_database_;
  return paths;
}

void TuningContext::sync_database_paths() {
  const DbPaths want = database_paths();
  const DbPaths have = databases_.paths();
  if (want.user != have.user || want.system != have.system) databases_.set_paths(want);
}

DbLayers& TuningContext::databases() {
  sync_database_paths();
  return databases_;
}

void TuningContext::load_databases() {
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

void TuningContext::ensure_results_loaded() {
  if (loaded_.load(std::memory_order_acquire) &&
      databases_loaded_.load(std::memory_order_acquire)) {
    return;
  }
  std::lock_guard lock(load_mutex_);
  if (!loaded_.load(std::memory_order_relaxed)) load_results_file();
  if (databases_loaded_.load(std::memory_order_relaxed)) return;
  if (!is_record_untuned_enabled()) load_databases();
  databases_loaded_.store(true, std::memory_order_release);
}

void TuningContext::load_results_file() {
  const std::string path = filename();
  if (!path.empty() && !is_record_untuned_enabled()) {
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

Expected<bool> TuningContext::add_result(ResultLine line,
                                         std::span<const DbCandidateTime> candidates,
                                         Status* not_saved) {
  const bool recording = is_record_untuned_enabled();
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

Status TuningContext::record_untuned(std::string_view op_signature,
                                     std::string_view params_signature, std::string_view extra) {
  auto r = untuned_.record(op_signature, params_signature, extra, untuned_filename());
  return r ? Status::ok() : r.status();
}

Status TuningContext::register_validator(std::string key, ValidatorRegistry::Getter getter) {
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

// --- environment and lifecycle -----------------------------------------------------------------

Status TuningContext::reload_environment() {
  EnvErrors errors;
  enabled_.set_env(errors.take(env::get_bool(kEnabled)));
  tuning_.set_env(errors.take(env::get_bool(kTuning)));
  const bool recording_before = record_untuned_.get();
  record_untuned_.set_env(errors.take(env::get_bool(kRecordUntuned)));
  if (!recording_before && record_untuned_.get()) untuned_.clear();
  wildcard_fallback_.set_env(errors.take(env::get_bool(kWildcardFallback)));
  blas_log_.set_env(errors.take(env::get_bool(kBlasLog)));
  {
    std::optional<DynamicDimsMask> dims;
    if (auto raw = env::get_string(kDynamicDims)) {
      auto parsed = parse_dynamic_dims(*raw);
      if (parsed) {
        dims = *parsed;
      } else {
        errors.add(Status(StatusCode::kInvalidArgument,
                          std::string(kDynamicDims) + ": " + parsed.status().message()));
      }
    }
    dynamic_dims_.set_env(dims);
  }
  cache_flush_.set_env(errors.take(env::get_bool(kCacheFlush)));

  auto limit = [&](Setting<long long>& setting, const char* name) {
    auto v = errors.take(env::get_int(name));
    setting.set_env(v ? std::optional<long long>(clamp_limit(*v)) : std::nullopt);
  };
  limit(max_tuning_duration_ms_, kMaxTuningDuration);
  limit(max_tuning_iterations_, kMaxTuningIterations);
  limit(max_warmup_duration_ms_, kMaxWarmupDuration);
  limit(max_warmup_iterations_, kMaxWarmupIterations);

  auto rotating = errors.take(env::get_int(kRotatingBufferSize));
  if (rotating && *rotating > kMaxRotatingBufferMib) {
    errors.add(Status(StatusCode::kInvalidArgument,
                      fmt::format("{}: {} MiB is too large (at most {} MiB)", kRotatingBufferSize,
                                  *rotating, kMaxRotatingBufferMib)));
    rotating.reset();
  }
  rotating_mib_.set_env(rotating ? std::optional<long long>(*rotating < 0 ? -1 : *rotating)
                                 : std::nullopt);

  auto threads = errors.take(env::get_int(kThreads));
  if (threads && (*threads > 1'000'000 || *threads < -1'000'000)) {
    errors.add(
        Status(StatusCode::kInvalidArgument,
               std::string(kThreads) + ": thread count out of range: " + std::to_string(*threads)));
    threads.reset();
  }
  threads_.set_env(threads ? std::optional<int>(*threads < 0 ? 0 : static_cast<int>(*threads))
                           : std::nullopt);

  auto verbose = errors.take(env::get_int(kVerbose));
  if (verbose && (*verbose < 0 || *verbose > 3)) {
    errors.add(Status(
        StatusCode::kInvalidArgument,
        std::string(kVerbose) + ": expected a level 0..3, got '" + std::to_string(*verbose) + "'"));
    verbose.reset();
  }
  verbose_.set_env(verbose ? std::optional<int>(static_cast<int>(*verbose)) : std::nullopt);
  apply_verbose();

  if (auto raw = env::get_string(kNumericalCheck)) {
    errors.add(parse_numerical_check(*raw, kNumericalCheck).status());
  }

  {
    std::lock_guard lock(mutex_);
    env_filename_ = env::get_string(kFilename);
    env_untuned_filename_ = env::get_string(kUntunedFilename);
    env_verbose_filename_ = env::get_string(kVerboseFilename);
    env_database_ = env::get_string("TUNEKIT_DB");
    if (env_verbose_filename_) {
      Status s = log::set_sink(*env_verbose_filename_);
      if (!s.is_ok()) {
        errors.add(Status(s.code(), std::string(kVerboseFilename) + ": " + s.message()));
      }
    }
    env_status_ =
        errors.text.empty() ? Status::ok() : Status(StatusCode::kInvalidArgument, errors.text);
  }
  results_.touch();
  return environment_status();
}

Status TuningContext::environment_status() const {
  std::lock_guard lock(mutex_);
  return env_status_;
}

Status TuningContext::reset() {
  enabled_.reset();
  tuning_.reset();
  record_untuned_.reset();
  wildcard_fallback_.reset();
  blas_log_.reset();
  dynamic_dims_.reset();
  cache_flush_.reset();
  verbose_.reset();
  max_tuning_duration_ms_.reset();
  max_tuning_iterations_.reset();
  max_warmup_duration_ms_.reset();
  max_warmup_iterations_.reset();
  rotating_mib_.reset();
  threads_.reset();
  clock_.store(&now_ns, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    numerics_ = NumericalCheck{};
    api_filename_.reset();
    pinned_filename_.reset();
    api_untuned_filename_.reset();
    if (api_verbose_filename_ != "err") (void)log::set_sink("err");
    api_verbose_filename_ = "err";
    api_libraries_.clear();
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
  return reload_environment();
}

void TuningContext::pin(const PinnedSettings& pinned) {
  if (pinned.verbose && (*pinned.verbose < 0 || *pinned.verbose > 3)) {
    throw Error(StatusCode::kInvalidArgument,
                "pin: verbose level must be 0..3, got " + std::to_string(*pinned.verbose));
  }
  if (pinned.threads) threads_.pin(*pinned.threads < 0 ? 0 : *pinned.threads);
  if (pinned.max_tuning_duration_ms) {
    max_tuning_duration_ms_.pin(clamp_limit(*pinned.max_tuning_duration_ms));
  }
  if (pinned.max_tuning_iterations) {
    max_tuning_iterations_.pin(clamp_limit(*pinned.max_tuning_iterations));
  }
  if (pinned.verbose) {
    verbose_.pin(*pinned.verbose);
    apply_verbose();
  }
  if (pinned.filename) {
    std::lock_guard lock(mutex_);
    pinned_filename_ = pinned.filename;
  }
  results_.touch();
}

// The template search's share of the budget (TUNEKIT_MAX_SEARCH_TRIALS,
// TUNEKIT_MAX_SEARCH_DURATION_MS, TUNEKIT_SEARCH_TRANSFER), read whenever settings are made;
// TUNEKIT_NATIVE_AMX (read by hw::amx_permitted) is only validated here.
Status apply_search_environment(TuningSettings& s) {
  auto trials = env::get_int("TUNEKIT_MAX_SEARCH_TRIALS");
  if (!trials) return trials.status();
  if (*trials) s.max_search_trials = static_cast<std::size_t>(std::max(0LL, **trials));
  auto ms = env::get_int("TUNEKIT_MAX_SEARCH_DURATION_MS");
  if (!ms) return ms.status();
  if (*ms) s.max_search_duration_ms = std::max(0LL, **ms);
  auto transfer = env::get_bool("TUNEKIT_SEARCH_TRANSFER");
  if (!transfer) return transfer.status();
  if (*transfer) s.search_transfer = **transfer;
  auto amx = env::get_bool("TUNEKIT_NATIVE_AMX");
  if (!amx) return amx.status();
  return Status::ok();
}

Expected<TuningSettings> TuningContext::tuning_settings() const {
  TUNEKIT_RETURN_IF_ERROR(environment_status());
  auto numerics = try_numerical_check();
  if (!numerics) return numerics.status();
  TuningSettings s;
  s.max_tuning_duration_ms = max_tuning_duration_ms();
  s.max_tuning_iterations = max_tuning_iterations();
  s.max_warmup_duration_ms = max_warmup_duration_ms();
  s.max_warmup_iterations = max_warmup_iterations();
  s.rotating_buffer_bytes = rotating_buffer_size();
  s.cache_flush = is_cache_flush_enabled();
  s.numerical_check = *numerics;
  s.clock = clock();
  if (measure::CpuWaitFn source = cpu_wait_.load(std::memory_order_relaxed)) {
    s.cpu_wait = source;
  } else if (s.clock == &now_ns) {
    s.cpu_wait = &measure::read_cpu_wait;
  }
  s.library_enabled = [this](std::string_view library) { return try_is_library_enabled(library); };
  {
    std::lock_guard lock(settle_mutex_);
    s.settle = settle_hook_;
  }
  TUNEKIT_RETURN_IF_ERROR(apply_search_environment(s));
  return s;
}

void TuningContext::set_settle_hook(std::function<void()> hook) {
  std::lock_guard lock(settle_mutex_);
  settle_hook_ = std::move(hook);
}

TuningContext& tuning_context() {
  static TuningContext context;
  return context;
}

}  // namespace tunekit
