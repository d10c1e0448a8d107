// search_template: find_fastest's search of a TemplateCandidate's configuration space on one
// problem, within a share of the tuning budget, through the search layer's Tuner and the
// default strategy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/search/strategy.hpp"
#include "tunekit/search/tuner.hpp"
#include "tunekit/tunable/candidate_runner.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/operand_copies.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit {

/// Timed calls per configuration when the search has no time limit, ms.
inline constexpr double kUntimedTrialMs = 100.0;
/// Configurations of a search's coarse ranking measured a second time before one is chosen.
inline constexpr std::size_t kSearchFinalists = 3;
/// Rounds of that second measurement, at most (one per timed call a finalist gets, up to this).
inline constexpr int kMaxFinalistRounds = 5;
/// Timed calls per configuration in the search (at most).
inline constexpr long long kMaxTrialCalls = 10;

namespace detail {

/// search_template's steps over one problem (see there): the budget, the seeds, the strategy.
template <class Params>
class TemplateSearch {
 public:
  TemplateSearch(TemplateCandidate<Params>& family, const Params& params,
                 const TuningSettings& settings)
      : family_(family),
        params_(params),
        settings_(settings),
        seeds_only_(settings.max_search_trials == 0),
        timed_(settings.max_search_duration_ms > 0),
        max_trials_(seeds_only_ ? std::numeric_limits<std::size_t>::max()
                                : settings.max_search_trials),
        budget_ms_(timed_ ? static_cast<double>(settings.max_search_duration_ms)
                          : std::numeric_limits<double>::infinity()) {}

  /// The space, the task and the runner on `copies`. Errors: the space's or the strategy's.
  Status start(OperandCopies<Params>& copies, std::function<Status(Candidate<Params>&)> verify) {
    auto space = family_.space(params_);
    if (!space) return space.status();
    task_ = std::make_shared<Task>();
    task_->name = family_.family();
    // The workload is the problem: a stored search is one per (template, problem).
    task_->args = nlohmann::json::array({params_.op_signature(), params_.signature()});
    task_->target = hw::host_cpu().describe();  // the templates here run on this CPU
    task_->flop = params_.flops();
    task_->space = *space;
    // Without a time limit (or for the seeds only) each configuration gets kUntimedTrialMs.
    trial_ms_ =
        timed_ && !seeds_only_ ? budget_ms_ / static_cast<double>(max_trials_) : kUntimedTrialMs;
    runner_ = std::make_shared<CandidateRunner<Params>>(
        family_, params_, [&copies]() -> const Params& { return copies.current(); },
        [&copies] { copies.advance(); }, trial_ms_, kMaxTrialCalls, settings_.clock,
        std::move(verify));
    auto strategy = make_strategy(kDefaultStrategy);
    if (!strategy) return strategy.status();
    tuner_.emplace(task_, std::move(*strategy), /*seed=*/0);
    return Status::ok();
  }

  /// Step 1: the seeds, measured in order (duplicates once) until the time limit has passed
  /// since `start_ns` (settings.clock; the first is always measured), handed to the strategy.
  std::size_t measure_seeds(std::int64_t start_ns) {
    std::vector<Trial> seeded;
    for (const Config& config : family_.seeds(params_, *task_->space, settings_.search_transfer)) {
      if (seeded.size() >= max_trials_) break;
      const double spent_ms = static_cast<double>(settings_.clock() - start_ns) / 1e6;
      if (!seeded.empty() && spent_ms >= budget_ms_) break;
      const auto same = [&config](const Trial& t) { return t.config.index() == config.index(); };
      if (std::any_of(seeded.begin(), seeded.end(), same)) continue;
      const MeasureInput input{task_, config};
      MeasureResult r = runner_->run(std::span(&input, 1), {}).front();
      if (!r.ok()) last_error_ = r.error_msg;
      const double score = tuner_->score_of(r);
      seeded.push_back(Trial{config, std::move(r), score});
    }
    tuner_->load_history(seeded);
    return seeded.size();
  }

  /// Step 2: the default strategy within what is left of the trials and the time.
  void run_strategy(std::size_t seeded, double spent_ms) {
    if (seeds_only_ || seeded >= max_trials_ || spent_ms >= budget_ms_) return;
    TuneOptions options;
    options.n_trial = max_trials_ - seeded;
    options.measure.runner = runner_;
    // Batches of 4, fewer when a configuration takes long (the seeds' mean cost): the time
    // limit is checked per batch, and one batch should not overrun it by much.
    options.batch_size = 4;
    if (timed_ && seeded > 0) {
      const double per_config_ms = spent_ms / static_cast<double>(seeded);
      const double left_ms = budget_ms_ - spent_ms;
      options.batch_size = static_cast<std::size_t>(
          std::clamp(left_ms / (4.0 * std::max(per_config_ms, 1e-3)), 1.0, 4.0));
    }
    if (timed_) options.time_budget_s = (budget_ms_ - spent_ms) / 1e3;
    options.early_stopping = std::max<std::size_t>(4, max_trials_ / 2);
    options.callbacks.push_back([this](const Tuner&, std::span<const MeasureInput>,
                                       std::span<const MeasureResult> results) {
      for (const MeasureResult& r : results) {
        if (!r.ok()) last_error_ = r.error_msg;
      }
    });
    (void)tuner_->tune(options);
  }

  /// Step 3: the finalists (the kSearchFinalists fastest configurations of the search's coarse
  /// ranking, where each may have had a single timed call, each in its own seconds) are measured
  /// again, interleaved (CandidateRunner::run_interleaved), and the lowest median of round means
  /// wins: neither one disturbed call nor a slow phase of the machine during one configuration's
  /// trial chooses. The calls each finalist had in the search (trial_ms / its slowest finalist's
  /// mean, 1 to kMaxTrialCalls) are dealt into rounds, one per call up to kMaxFinalistRounds
  /// (calls / rounds each, rounded down: 6-9 calls give 5), so the pass costs no more than a
  /// sequential one would; a slow problem gets one round of one call, which, like a sequential
  /// pass, does not protect against a phase.
  void remeasure_finalists() {
    std::vector<const Trial*> ok;
    for (const Trial& t : tuner_->trials()) {
      if (t.result.ok()) ok.push_back(&t);
    }
    if (ok.size() < 2) return;
    const std::size_t count = std::min(kSearchFinalists, ok.size());
    std::partial_sort(ok.begin(), ok.begin() + static_cast<std::ptrdiff_t>(count), ok.end(),
                      [](const Trial* a, const Trial* b) {
                        return a->result.mean_cost_s() < b->result.mean_cost_s();
                      });
    std::vector<Config> configs;
    double slowest_ms = 0;
    for (std::size_t i = 0; i < count; ++i) {
      configs.push_back(ok[i]->config);
      slowest_ms = std::max(slowest_ms, ok[i]->result.mean_cost_s() * 1e3);
    }
    const long long calls = std::clamp(
        static_cast<long long>(trial_ms_ / std::max(slowest_ms, 1e-6)), 1LL, kMaxTrialCalls);
    const int rounds = static_cast<int>(std::min<long long>(calls, kMaxFinalistRounds));
    (void)runner_->run_interleaved(configs, rounds, std::max(1LL, calls / rounds));
  }

  /// Step 4: every configuration measured (the seeds included) to settings.search_trials.
  void hand_over_trials() const {
    if (!settings_.search_trials || tuner_->trials().empty()) return;
    std::vector<MeasureInput> inputs;
    std::vector<MeasureResult> results;
    for (const Trial& t : tuner_->trials()) {
      inputs.push_back(MeasureInput{task_, t.config});
      results.push_back(t.result);
    }
    settings_.search_trials(inputs, results);
  }

  /// Step 5: the fastest configuration (remembered by the template), or why there is none.
  void finish(TemplateSearchResult<Params>& out) {
    out.trials = tuner_->trials().size();  // the seeds included (load_history)
    out.instance = runner_->take_best_instance();
    if (!out.instance) {
      out.status = Status(StatusCode::kRuntimeError,
                          family_.family() + ": no configuration ran (" +
                              (last_error_.empty() ? "none was measured" : last_error_) + ")");
      return;
    }
    out.ms = runner_->best_ms();
    family_.remember(params_, runner_->best_config(), out.ms);
  }

 private:
  TemplateCandidate<Params>& family_;
  const Params& params_;
  const TuningSettings& settings_;
  bool seeds_only_, timed_;  // trials 0: the seeds only; duration 0: no time limit
  std::size_t max_trials_;
  double budget_ms_;
  double trial_ms_ = kUntimedTrialMs;  // timed calls' share per configuration (start())
  std::shared_ptr<Task> task_;
  std::shared_ptr<CandidateRunner<Params>> runner_;
  std::optional<Tuner> tuner_;
  std::string last_error_;
};

}  // namespace detail

/// Searches `family`'s space for `params` on the rotating operand `copies`, each configuration
/// checked by `verify` (when given) before it is timed:
///  1. the seeds (TemplateCandidate::seeds: configurations that won on the nearest problems
///     tuned before, unless settings.search_transfer is off, then the template's defaults) are
///     measured first, in order, while settings.max_search_duration_ms has not passed (the
///     first always);
///  2. the default strategy (kDefaultStrategy, seeded with them through Tuner::load_history)
///     proposes the rest until settings.max_search_trials configurations were measured or
///     settings.max_search_duration_ms passed (checked per batch of 4, or of fewer when one
///     configuration costs more than a sixteenth of what is left), with early stopping
///     after half the trial budget without improvement; max_search_trials 0 measures the seeds
///     only, max_search_duration_ms 0 sets no time limit;
///  3. the kSearchFinalists fastest configurations are measured again, interleaved in rounds
///     (outside the time limit), and the lowest median of round means wins;
///  4. every configuration measured goes to settings.search_trials (when set), and
///  5. the winner is remembered by the template (TemplateCandidate::remember).
/// Each configuration gets max_search_duration_ms / max_search_trials ms of timed calls (at
/// least one call, at most kMaxTrialCalls): a coarse ranking; the winner is then profiled, checked
/// and re-measured by find_fastest like every other candidate. Errors: status is the space's error,
/// or kRuntimeError naming the last failure when no configuration ran.
template <class Params>
TemplateSearchResult<Params> search_template(
    TemplateCandidate<Params>& family, const Params& params, OperandCopies<Params>& copies,
    const TuningSettings& settings,
    std::type_identity_t<std::function<Status(Candidate<Params>&)>> verify = nullptr) {
  TemplateSearchResult<Params> out;
  const std::int64_t start = settings.clock();
  detail::TemplateSearch<Params> search(family, params, settings);
  out.status = search.start(copies, std::move(verify));
  if (!out.status.is_ok()) return out;
  out.seeds = search.measure_seeds(start);
  search.run_strategy(out.seeds, static_cast<double>(settings.clock() - start) / 1e6);
  search.remeasure_finalists();
  search.hand_over_trials();
  search.finish(out);
  out.wall_ms = static_cast<double>(settings.clock() - start) / 1e6;
  return out;
}

/// A TemplateCandidate whose search() is search_template(): what a template derives from.
template <class Params>
class SearchedTemplate : public TemplateCandidate<Params> {
 public:
  TemplateSearchResult<Params> search(const Params& params, OperandCopies<Params>& copies,
                                      const TuningSettings& settings,
                                      std::function<Status(Candidate<Params>&)> verify) override {
    return search_template(*this, params, copies, settings, std::move(verify));
  }
};

}  // namespace tunekit
