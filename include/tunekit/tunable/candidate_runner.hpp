// CandidateRunner<Params>: the search layer's Runner for one configuration of a
// TemplateCandidate<Params>, timed on find_fastest's rotating operand copies with the timing code
// every other candidate is measured with.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit {

/// Measures configurations of one template on one problem. Per configuration: instantiate,
/// supports(), prepare(), the numerical check (`verify`, when given: find_fastest's check
/// against Default's output, which is also the configuration's untimed first call) or else one
/// untimed call, then timed calls while they fit in `trial_ms`
/// (at least 1, at most `max_calls`), each on the next rotating copy (`advance` runs before
/// every call, outside the timed region: the copies' cache flush). MeasureResult::costs_s holds
/// the per-call times in seconds.
/// Errors (as results): kInstantiationError when instantiate() or supports() refuses,
/// kWrongAnswer when the check fails, kRuntimeDevice when prepare() or a call fails (error_msg
/// gives the status).
template <class Params>
class CandidateRunner final : public Runner {
 public:
  /// `current` gives the operand copy the next call runs on, after `advance`. All references
  /// must outlive the runner.
  CandidateRunner(TemplateCandidate<Params>& family, const Params& params,
                  std::function<const Params&()> current, std::function<void()> advance,
                  double trial_ms, long long max_calls, measure::ClockFn clock = &now_ns,
                  std::function<Status(Candidate<Params>&)> verify = nullptr)
      : family_(family),
        params_(params),
        current_(std::move(current)),
        advance_(std::move(advance)),
        verify_(std::move(verify)),
        trial_ms_(trial_ms),
        max_calls_(std::max(1LL, max_calls)),
        clock_(clock) {}

  /// The measurement clock in seconds (the tuner's time budget runs on it, as the timed calls
  /// and the search's own limit do).
  double clock_s() const override { return static_cast<double>(clock_()) * 1e-9; }

  std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                 std::span<const BuildResult> /*builds*/) override {
    std::vector<MeasureResult> results;
    results.reserve(inputs.size());
    for (const MeasureInput& input : inputs) results.push_back(measure_one(input.config));
    return results;
  }

  /// Measures `configs` again, interleaved: each is admitted once as run() does (instantiate,
  /// supports(), prepare(), the check or one untimed call), then `rounds` rounds give every
  /// configuration `calls` timed calls in turn, the order rotated by one per round, so that a
  /// slow phase of the machine falls on all of them. A configuration's score is the median of
  /// its rounds' mean times; forget_best() is implied and the lowest score becomes the best
  /// (best_ms() is that score). Results are in the order of `configs`; costs_s holds the round
  /// means in seconds, and a configuration that fails has the error as run() gives it.
  std::vector<MeasureResult> run_interleaved(std::span<const Config> configs, int rounds,
                                             long long calls) {
    forget_best();
    std::vector<MeasureResult> results(configs.size());
    std::vector<std::unique_ptr<Candidate<Params>>> ready(configs.size());
    for (std::size_t i = 0; i < configs.size(); ++i) ready[i] = admit(configs[i], results[i]);
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t j = 0; j < configs.size(); ++j) {
        const std::size_t i = (j + static_cast<std::size_t>(r)) % configs.size();
        if (ready[i]) time_block(*ready[i], std::max(1LL, calls), results[i]);
        if (!results[i].ok()) ready[i].reset();
      }
    }
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (!ready[i] || results[i].costs_s.empty()) continue;
      const double score_ms = median(results[i].costs_s) * 1e3;
      if (score_ms < best_ms_) {
        best_ms_ = score_ms;
        best_config_ = configs[i];
        best_instance_ = std::move(ready[i]);
      }
    }
    return results;
  }

  /// The instance of the last successful measurement of `config`, if it is still held (the
  /// runner keeps the instance of the fastest configuration so far).
  std::unique_ptr<Candidate<Params>> take_best_instance() { return std::move(best_instance_); }
  /// Drops the fastest configuration so far: the next measurements choose anew.
  void forget_best() {
    best_instance_.reset();
    best_config_ = Config();
    best_ms_ = std::numeric_limits<double>::infinity();
  }
  /// The configuration take_best_instance() belongs to.
  const Config& best_config() const noexcept { return best_config_; }
  /// Its mean time per call, ms (infinity before any success).
  double best_ms() const noexcept { return best_ms_; }

 private:
  static MeasureResult failure(MeasureErrorNo code, std::string message) {
    MeasureResult r;
    r.error_no = code;
    r.error_msg = std::move(message);
    return r;
  }

  // The instance of `config` ready for timed calls: instantiated, supported, prepared, then
  // checked by verify_ (its untimed first call) or given one untimed call. Null on a failure,
  // which is then in `failed`.
  std::unique_ptr<Candidate<Params>> admit(const Config& config, MeasureResult& failed) {
    auto instance = family_.instantiate(params_, config);
    if (!instance) {
      failed = failure(MeasureErrorNo::kInstantiationError, instance.status().message());
      return nullptr;
    }
    Candidate<Params>& c = **instance;
    if (Status s = c.supports(params_); !s.is_ok()) {
      failed = failure(MeasureErrorNo::kInstantiationError, s.message());
      return nullptr;
    }
    Status s = c.prepare(params_);
    if (s.is_ok() && verify_) {
      if (Status v = verify_(c); !v.is_ok()) {
        failed = failure(v.code() == StatusCode::kWrongResult ? MeasureErrorNo::kWrongAnswer
                                                              : MeasureErrorNo::kRuntimeDevice,
                         v.to_string());
        return nullptr;
      }
    }
    if (s.is_ok() && !verify_)
      s = measure::run_untimed(
          1, [&] { return c.run(current_()); }, advance_);
    if (!s.is_ok()) {
      failed = failure(MeasureErrorNo::kRuntimeDevice, s.to_string());
      return nullptr;
    }
    return std::move(*instance);
  }

  // `calls` timed calls of `c`; their mean joins r.costs_s (seconds), or r becomes the failure.
  void time_block(Candidate<Params>& c, long long calls, MeasureResult& r) {
    Welford stats;
    const Status s = measure::time_calls(
        calls, [&] { return c.run(current_()); }, advance_, stats, nullptr, clock_);
    if (!s.is_ok()) {
      r = failure(MeasureErrorNo::kRuntimeDevice, s.to_string());
      return;
    }
    r.costs_s.push_back(stats.mean() / 1e3);
    r.timestamp_s = static_cast<double>(now_ns()) / 1e9;
  }

  MeasureResult measure_one(const Config& config) {
    const std::int64_t start = now_ns();
    MeasureResult r;
    std::unique_ptr<Candidate<Params>> instance = admit(config, r);
    if (!instance) return r;
    auto call = [&] { return instance->run(current_()); };
    Welford stats;
    std::vector<double> samples;
    Status s = measure::time_calls(1, call, advance_, stats, &samples, clock_);
    if (s.is_ok()) {
      const long long more = static_cast<long long>(trial_ms_ / std::max(stats.mean(), 1e-6));
      s = measure::time_calls(std::clamp(more, 0LL, max_calls_ - 1), call, advance_, stats,
                              &samples, clock_);
    }
    if (!s.is_ok()) return failure(MeasureErrorNo::kRuntimeDevice, s.to_string());
    for (double ms : samples) r.costs_s.push_back(ms / 1e3);
    r.all_cost_s = static_cast<double>(now_ns() - start) / 1e9;
    r.timestamp_s = static_cast<double>(now_ns()) / 1e9;
    if (stats.mean() < best_ms_) {
      best_ms_ = stats.mean();
      best_config_ = config;
      best_instance_ = std::move(instance);
    }
    return r;
  }

  TemplateCandidate<Params>& family_;
  const Params& params_;
  std::function<const Params&()> current_;
  std::function<void()> advance_;
  std::function<Status(Candidate<Params>&)> verify_;
  double trial_ms_;
  long long max_calls_;
  measure::ClockFn clock_;
  std::unique_ptr<Candidate<Params>> best_instance_;
  Config best_config_;
  double best_ms_ = std::numeric_limits<double>::infinity();
};

}  // namespace tunekit
