// ContextSettings: the settings with environment overrides and pins.
// See include/tunekit/tunable/context_settings.hpp.
#include "tunekit/tunable/context_settings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "tunekit/core/env.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit {
namespace {

constexpr const char* kEnabled = "TUNEKIT_ENABLED";
constexpr const char* kTuning = "TUNEKIT_TUNING";
constexpr const char* kRecordUntuned = "TUNEKIT_RECORD_UNTUNED";
constexpr const char* kVerbose = "TUNEKIT_VERBOSE";
constexpr const char* kVerboseFilename = "TUNEKIT_VERBOSE_FILENAME";
constexpr const char* kNumericalCheck = "TUNEKIT_NUMERICAL_CHECK";
constexpr const char* kMaxTuningDuration = "TUNEKIT_MAX_TUNING_DURATION_MS";
constexpr const char* kMaxTuningIterations = "TUNEKIT_MAX_TUNING_ITERATIONS";
constexpr const char* kConfirmCalls = "TUNEKIT_CONFIRM_CALLS";
constexpr long long kMaxConfirmCalls = 1'000'000;
constexpr const char* kMaxWarmupDuration = "TUNEKIT_MAX_WARMUP_DURATION_MS";
constexpr const char* kMaxWarmupIterations = "TUNEKIT_MAX_WARMUP_ITERATIONS";
constexpr const char* kCacheFlush = "TUNEKIT_CACHE_FLUSH_ENABLED";
constexpr const char* kRotatingBufferSize = "TUNEKIT_ROTATING_BUFFER_SIZE";
constexpr const char* kBlasLog = "TUNEKIT_BLAS_LOG";
constexpr const char* kWildcardFallback = "TUNEKIT_WILDCARD_FALLBACK";
constexpr const char* kThreads = "TUNEKIT_THREADS";
constexpr const char* kDynamicDims = "TUNEKIT_DYNAMIC_DIMS";

long long clamp_limit(long long v) { return v < 0 ? 0 : v; }

// A confirmation alternates the winner and Default, so it takes an even number of calls.
long long clamp_confirm_calls(long long calls) {
  const long long even = calls <= 0 ? 0 : std::min(calls, kMaxConfirmCalls) + 1;
  return even - even % 2;
}

}  // namespace

// Collects errors of one environment pass.
struct ContextSettings::EnvErrors {
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

std::string library_env_name(std::string_view library) {
  std::string name = "TUNEKIT_";
  for (char c : library) {
    const auto u = static_cast<unsigned char>(c);
    name.push_back(std::isalnum(u) ? static_cast<char>(std::toupper(u)) : '_');
  }
  name += "_ENABLED";
  return name;
}

ContextSettings::ContextSettings() { (void)reload_environment(); }

void ContextSettings::set_listeners(Listeners listeners) { listeners_ = std::move(listeners); }

void ContextSettings::dispatch_changed() const {
  if (listeners_.dispatch_changed) listeners_.dispatch_changed();
}

void ContextSettings::note_overridden(bool overridden, std::string_view name) const {
  if (overridden) {
    log::info(1, "{} is set and overrides the value set through the API", name);
  }
}

// --- switches ----------------------------------------------------------------------------------

void ContextSettings::enable(bool on) {
  enabled_.set(on);
  note_overridden(enabled_.overridden(), kEnabled);
  dispatch_changed();
}

void ContextSettings::enable_tuning(bool on) {
  tuning_.set(on);
  note_overridden(tuning_.overridden(), kTuning);
  dispatch_changed();
}

void ContextSettings::enable_record_untuned(bool on) {
  const bool before = record_untuned_.get();
  record_untuned_.set(on);
  note_overridden(record_untuned_.overridden(), kRecordUntuned);
  if (!before && record_untuned_.get() && listeners_.recording_started) {
    listeners_.recording_started();
  }
  dispatch_changed();
}

void ContextSettings::enable_wildcard_fallback(bool on) {
  wildcard_fallback_.set(on);
  note_overridden(wildcard_fallback_.overridden(), kWildcardFallback);
  dispatch_changed();
}

void ContextSettings::set_confirm_calls(long long calls) {
  confirm_calls_.set(clamp_confirm_calls(calls));
  note_overridden(confirm_calls_.overridden(), kConfirmCalls);
  dispatch_changed();
}

void ContextSettings::set_dynamic_dims(DynamicDimsMask mask) {
  dynamic_dims_.set(static_cast<DynamicDimsMask>(mask & kAllDynamicDims));
  note_overridden(dynamic_dims_.overridden(), kDynamicDims);
}

void ContextSettings::enable_blas_log(bool on) {
  blas_log_.set(on);
  note_overridden(blas_log_.overridden(), kBlasLog);
}

void ContextSettings::enable_cache_flush(bool on) {
  cache_flush_.set(on);
  note_overridden(cache_flush_.overridden(), kCacheFlush);
}

// --- numerical check ---------------------------------------------------------------------------

void ContextSettings::enable_numerical_check(bool on) {
  std::lock_guard lock(mutex_);
  numerics_.enabled = on;
}

void ContextSettings::set_numerical_check_tolerances(bool enable, double atol, double rtol) {
  if (!(atol > 0.0) || !(rtol > 0.0) || !std::isfinite(atol) || !std::isfinite(rtol)) {
    throw Error(StatusCode::kInvalidArgument,
                "set_numerical_check_tolerances: atol and rtol must be positive, got atol=" +
                    std::to_string(atol) + " rtol=" + std::to_string(rtol));
  }
  std::lock_guard lock(mutex_);
  numerics_ = NumericalCheck{enable, Tolerance{atol, rtol}};
}

void ContextSettings::use_default_tolerances() {
  std::lock_guard lock(mutex_);
  numerics_ = NumericalCheck{true, std::nullopt};
}

Expected<NumericalCheck> ContextSettings::try_numerical_check() const {
  if (auto raw = env::get_string(kNumericalCheck))
    return parse_numerical_check(*raw, kNumericalCheck);
  std::lock_guard lock(mutex_);
  return numerics_;
}

NumericalCheck ContextSettings::numerical_check() const { return try_numerical_check().value(); }

// --- limits ------------------------------------------------------------------------------------

void ContextSettings::set_max_tuning_duration_ms(long long ms) {
  max_tuning_duration_ms_.set(clamp_limit(ms));
  note_overridden(max_tuning_duration_ms_.overridden(), kMaxTuningDuration);
}

void ContextSettings::set_max_tuning_iterations(long long iterations) {
  max_tuning_iterations_.set(clamp_limit(iterations));
  note_overridden(max_tuning_iterations_.overridden(), kMaxTuningIterations);
}

void ContextSettings::set_max_warmup_duration_ms(long long ms) {
  max_warmup_duration_ms_.set(clamp_limit(ms));
  note_overridden(max_warmup_duration_ms_.overridden(), kMaxWarmupDuration);
}

void ContextSettings::set_max_warmup_iterations(long long iterations) {
  max_warmup_iterations_.set(clamp_limit(iterations));
  note_overridden(max_warmup_iterations_.overridden(), kMaxWarmupIterations);
}

void ContextSettings::set_rotating_buffer_size(long long mib) {
  if (mib > kMaxRotatingBufferMib) {
    throw Error(StatusCode::kInvalidArgument,
                fmt::format("set_rotating_buffer_size: {} MiB is too large (at most {} MiB)", mib,
                            kMaxRotatingBufferMib));
  }
  rotating_mib_.set(mib < 0 ? -1 : mib);
  note_overridden(rotating_mib_.overridden(), kRotatingBufferSize);
}

std::size_t ContextSettings::rotating_buffer_size() const noexcept {
  const long long mib = rotating_mib_.get();
  if (mib < 0) return hw::effective_llc_bytes();
  return static_cast<std::size_t>(mib) << 20;
}

// --- threads, device, libraries ----------------------------------------------------------------

void ContextSettings::set_threads(int threads) {
  threads_.set(threads < 0 ? 0 : threads);
  note_overridden(threads_.overridden(), kThreads);
}

int ContextSettings::threads() const noexcept {
  const int t = threads_.get();
  return t > 0 ? t : hw::cpu().usable_cores;
}

void ContextSettings::set_device_ordinal(int device) {
  device_.store(device < 0 ? 0 : device, std::memory_order_relaxed);
}

void ContextSettings::enable_library(std::string_view library, bool on) {
  std::lock_guard lock(mutex_);
  api_libraries_.insert_or_assign(std::string(library), on);
}

Expected<bool> ContextSettings::try_is_library_enabled(std::string_view library) const {
  const std::string var = library_env_name(library);
  auto from_env = env::get_bool(var.c_str());
  if (!from_env) return from_env.status();
  if (from_env->has_value()) return **from_env;
  std::lock_guard lock(mutex_);
  auto it = api_libraries_.find(library);
  return it == api_libraries_.end() ? true : it->second;
}

bool ContextSettings::is_library_enabled(std::string_view library) const {
  return try_is_library_enabled(library).value();
}

// --- verbosity ---------------------------------------------------------------------------------

void ContextSettings::set_verbose(int level) {
  if (level < 0 || level > 3) {
    throw Error(StatusCode::kInvalidArgument,
                "set_verbose: level must be 0..3, got " + std::to_string(level));
  }
  verbose_.set(level);
  note_overridden(verbose_.overridden(), kVerbose);
  apply_verbose();
}

void ContextSettings::apply_verbose() { log::set_level(verbose_.get()); }

Status ContextSettings::set_verbose_filename(const std::string& sink) {
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

std::string ContextSettings::verbose_filename() const {
  std::lock_guard lock(mutex_);
  return env_verbose_filename_ ? *env_verbose_filename_ : api_verbose_filename_;
}

// --- files -------------------------------------------------------------------------------------

Status ContextSettings::reload_environment() {
  EnvErrors errors;
  read_switches(errors);
  read_limits(errors);
  read_counts(errors);
  if (auto raw = env::get_string(kNumericalCheck)) {
    errors.add(parse_numerical_check(*raw, kNumericalCheck).status());
  }
  {
    std::lock_guard lock(mutex_);
    env_verbose_filename_ = env::get_string(kVerboseFilename);
    if (env_verbose_filename_) {
      Status s = log::set_sink(*env_verbose_filename_);
      if (!s.is_ok()) {
        errors.add(Status(s.code(), std::string(kVerboseFilename) + ": " + s.message()));
      }
    }
    env_status_ =
        errors.text.empty() ? Status::ok() : Status(StatusCode::kInvalidArgument, errors.text);
  }
  dispatch_changed();
  return environment_status();
}

void ContextSettings::read_switches(EnvErrors& errors) {
  enabled_.set_env(errors.take(env::get_bool(kEnabled)));
  tuning_.set_env(errors.take(env::get_bool(kTuning)));
  const bool recording_before = record_untuned_.get();
  record_untuned_.set_env(errors.take(env::get_bool(kRecordUntuned)));
  if (!recording_before && record_untuned_.get() && listeners_.recording_started) {
    listeners_.recording_started();
  }
  wildcard_fallback_.set_env(errors.take(env::get_bool(kWildcardFallback)));
  blas_log_.set_env(errors.take(env::get_bool(kBlasLog)));
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
  cache_flush_.set_env(errors.take(env::get_bool(kCacheFlush)));
}

void ContextSettings::read_limits(EnvErrors& errors) {
  auto limit = [&](detail::EnvSetting<long long>& setting, const char* name) {
    auto v = errors.take(env::get_int(name));
    setting.set_env(v ? std::optional<long long>(clamp_limit(*v)) : std::nullopt);
  };
  limit(max_tuning_duration_ms_, kMaxTuningDuration);
  limit(max_tuning_iterations_, kMaxTuningIterations);
  limit(max_warmup_duration_ms_, kMaxWarmupDuration);
  limit(max_warmup_iterations_, kMaxWarmupIterations);
  auto confirm = errors.take(env::get_int(kConfirmCalls));
  confirm_calls_.set_env(confirm ? std::optional<long long>(clamp_confirm_calls(*confirm))
                                 : std::nullopt);
}

void ContextSettings::read_counts(EnvErrors& errors) {
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
}

Status ContextSettings::environment_status() const {
  std::lock_guard lock(mutex_);
  return env_status_;
}

Status ContextSettings::reset() {
  enabled_.reset();
  tuning_.reset();
  record_untuned_.reset();
  wildcard_fallback_.reset();
  blas_log_.reset();
  dynamic_dims_.reset();
  cache_flush_.reset();
  confirm_calls_.reset();
  verbose_.reset();
  max_tuning_duration_ms_.reset();
  max_tuning_iterations_.reset();
  max_warmup_duration_ms_.reset();
  max_warmup_iterations_.reset();
  rotating_mib_.reset();
  threads_.reset();
  {
    std::lock_guard lock(mutex_);
    numerics_ = NumericalCheck{};
    if (api_verbose_filename_ != "err") (void)log::set_sink("err");
    api_verbose_filename_ = "err";
    api_libraries_.clear();
  }
  return reload_environment();
}

void ContextSettings::pin(const PinnedSettings& pinned) {
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
  dispatch_changed();
}

}  // namespace tunekit
