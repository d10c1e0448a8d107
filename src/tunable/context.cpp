// TuningContext: its settings, store and hooks wired together; environment, reset and the
// settings snapshot of a tuning. See include/tunekit/tunable/context.hpp.
#include "tunekit/tunable/context.hpp"

#include <algorithm>

#include "tunekit/core/env.hpp"

namespace tunekit {

TuningContext::TuningContext() {
  settings_.set_listeners(ContextSettings::Listeners{
      .dispatch_changed = [this] { store_.results_manager().touch(); },
      .recording_started = [this] { store_.untuned_recorder().clear(); }});
}

TuningContext::~TuningContext() = default;

Status TuningContext::reload_environment() {
  store_.reload_environment();
  return settings_.reload_environment();
}

Status TuningContext::reset() {
  hooks_.reset();
  store_.reset();
  return settings_.reset();
}

void TuningContext::pin(const PinnedSettings& pinned) {
  settings_.pin(pinned);
  if (pinned.filename) store_.pin_filename(*pinned.filename);
}

namespace {

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

}  // namespace

Expected<TuningSettings> TuningContext::tuning_settings() {
  TUNEKIT_RETURN_IF_ERROR(environment_status());
  auto numerics = settings_.try_numerical_check();
  if (!numerics) return numerics.status();
  TuningSettings s;
  s.max_tuning_duration_ms = settings_.max_tuning_duration_ms();
  s.max_tuning_iterations = settings_.max_tuning_iterations();
  s.max_warmup_duration_ms = settings_.max_warmup_duration_ms();
  s.max_warmup_iterations = settings_.max_warmup_iterations();
  s.rotating_buffer_bytes = settings_.rotating_buffer_size();
  s.cache_flush = settings_.is_cache_flush_enabled();
  s.numerical_check = *numerics;
  s.clock = hooks_.clock();
  s.cpu_wait = hooks_.cpu_wait();
  s.library_enabled = [this](std::string_view library) {
    return settings_.try_is_library_enabled(library);
  };
  s.settle = hooks_.settle_hook();
  if (!store_.database_paths().user.empty()) {
    s.search_trials = [this](std::span<const MeasureInput> inputs,
                             std::span<const MeasureResult> results) {
      (void)store_.add_search_trials(inputs, results);  // warned about by the store
    };
  }
  TUNEKIT_RETURN_IF_ERROR(apply_search_environment(s));
  return s;
}

TuningContext& tuning_context() {
  static TuningContext context;
  return context;
}

}  // namespace tunekit
