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

  MeasureResult measure_one(const Config& config) {
    const std::int64_t start = now_ns();
    auto instance = family_.instantiate(params_, config);
    if (!instance) return failure(MeasureErrorNo::kInstantiationError, instance.status().message());
    Candidate<Params>& c = **instance;
    if (Status s = c.supports(params_); !s.is_ok()) {
      return failure(MeasureErrorNo::kInstantiationError, s.message());
    }
    auto call = [&] { return c.run(current_()); };
    Status s = c.prepare(params_);
    if (s.is_ok() && verify_) {
      if (Status v = verify_(c); !v.is_ok()) {
        return failure(v.code() == StatusCode::kWrongResult ? MeasureErrorNo::kWrongAnswer
                                                            : MeasureErrorNo::kRuntimeDevice,
                       v.to_string());
      }
    }
    if (s.is_ok() && !verify_) s = measure::run_untimed(1, call, advance_);
    Welford stats;
    std::vector<double> samples;
    if (s.is_ok()) s = measure::time_calls(1, call, advance_, stats, &samples, clock_);
    if (s.is_ok()) {
      const long long more = static_cast<long long>(trial_ms_ / std::max(stats.mean(), 1e-6));
      s = measure::time_calls(std::clamp(more, 0LL, max_calls_ - 1), call, advance_, stats,
                              &samples, clock_);
    }
    if (!s.is_ok()) return failure(MeasureErrorNo::kRuntimeDevice, s.to_string());
    MeasureResult r;
    for (double ms : samples) r.costs_s.push_back(ms / 1e3);
    r.all_cost_s = static_cast<double>(now_ns() - start) / 1e9;
    r.timestamp_s = static_cast<double>(now_ns()) / 1e9;
    if (stats.mean() < best_ms_) {
      best_ms_ = stats.mean();
      best_config_ = config;
      best_instance_ = std::move(*instance);
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
