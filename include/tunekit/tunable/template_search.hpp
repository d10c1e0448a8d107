// search_template: find_fastest's search of a TemplateCandidate's configuration space on one
// problem, within a share of the tuning budget, through the search layer's Tuner and the
// default strategy.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tunekit/core/clock.hpp"
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

/// What search_template found.
template <class Params>
struct TemplateSearchResult {
  Status status = Status::ok();                 ///< why nothing was found (then no instance)
  std::unique_ptr<Candidate<Params>> instance;  ///< the fastest configuration's candidate
  Config config;                                ///< its point of the space
  double ms = 0.0;                              ///< its mean time per call in the search, ms
  std::size_t trials = 0;                       ///< configurations measured
  std::size_t seeds = 0;                        ///< of which seeds (transfer, default)
  double wall_ms = 0.0;                         ///< time the search took
};

/// Searches `family`'s space for `params` on the rotating operand `copies`, each configuration
/// checked by `verify` (when given) before it is timed:
///  1. the seeds (TemplateCandidate::seeds: configurations that won on the nearest problems
///     tuned before, unless settings.search_transfer is off, then the template's default) are
///     measured first;
///  2. the default strategy (kDefaultStrategy, seeded with them through Tuner::load_history)
///     proposes the rest until settings.max_search_trials configurations were measured or
///     settings.max_search_duration_ms passed (checked per batch of 4), with early stopping
///     after half the trial budget without improvement; max_search_trials 0 measures the seeds
///     only, max_search_duration_ms 0 sets no time limit;
///  3. the fastest configuration is remembered by the template (TemplateCandidate::remember).
/// Each configuration gets max_search_duration_ms / max_search_trials ms of timed calls (at
/// least one call, at most 10): a coarse ranking; the winner is then profiled, checked and
/// re-measured by find_fastest like every other candidate.
/// Errors: status is the space's error, or kRuntimeError naming the last failure when no
/// configuration ran.
template <class Params>
TemplateSearchResult<Params> search_template(
    TemplateCandidate<Params>& family, const Params& params, OperandCopies<Params>& copies,
    const TuningSettings& settings,
    std::type_identity_t<std::function<Status(Candidate<Params>&)>> verify = nullptr) {
  TemplateSearchResult<Params> out;
  const std::int64_t start = now_ns();
  auto space = family.space(params);
  if (!space) {
    out.status = space.status();
    return out;
  }
  auto task = std::make_shared<Task>();
  task->name = family.family();
  task->flop = params.flops();
  task->space = *space;
  // Trials 0: the seeds only. Duration 0: no time limit (each configuration then gets
  // kUntimedTrialMs of calls).
  const bool seeds_only = settings.max_search_trials == 0;
  const std::size_t max_trials =
      seeds_only ? std::numeric_limits<std::size_t>::max() : settings.max_search_trials;
  const bool timed = settings.max_search_duration_ms > 0;
  const double budget_ms = timed ? static_cast<double>(settings.max_search_duration_ms)
                                 : std::numeric_limits<double>::infinity();
  const double trial_ms =
      timed && !seeds_only ? budget_ms / static_cast<double>(max_trials) : kUntimedTrialMs;
  auto runner = std::make_shared<CandidateRunner<Params>>(
      family, params, [&copies]() -> const Params& { return copies.current(); },
      [&copies] { copies.advance(); }, trial_ms, 10, settings.clock, std::move(verify));
  auto strategy = make_strategy(kDefaultStrategy);
  if (!strategy) {
    out.status = strategy.status();
    return out;
  }
  Tuner tuner(task, std::move(*strategy), /*seed=*/0);
  std::vector<Trial> seeded;
  std::string last_error;
  for (const Config& config : family.seeds(params, **space, settings.search_transfer)) {
    if (seeded.size() >= max_trials) break;
    const auto same = [&config](const Trial& t) { return t.config.index() == config.index(); };
    if (std::any_of(seeded.begin(), seeded.end(), same)) continue;
    const MeasureInput input{task, config};
    MeasureResult r = runner->run(std::span(&input, 1), {}).front();
    if (!r.ok()) last_error = r.error_msg;
    const double score = tuner.score_of(r);
    seeded.push_back(Trial{config, std::move(r), score});
  }
  tuner.load_history(seeded);
  out.seeds = seeded.size();
  const double spent_ms = static_cast<double>(now_ns() - start) / 1e6;
  if (!seeds_only && seeded.size() < max_trials && spent_ms < budget_ms) {
    TuneOptions options;
    options.n_trial = max_trials - seeded.size();
    options.measure.runner = runner;
    options.batch_size = 4;
    if (timed) options.time_budget_s = (budget_ms - spent_ms) / 1e3;
    options.early_stopping = std::max<std::size_t>(4, max_trials / 2);
    options.callbacks.push_back([&last_error](const Tuner&, std::span<const MeasureInput>,
                                              std::span<const MeasureResult> results) {
      for (const MeasureResult& r : results) {
        if (!r.ok()) last_error = r.error_msg;
      }
    });
    (void)tuner.tune(options);
  }
  out.trials = tuner.trials().size();  // the seeds included (load_history)
  out.wall_ms = static_cast<double>(now_ns() - start) / 1e6;
  out.instance = runner->take_best_instance();
  if (!out.instance) {
    out.status = Status(StatusCode::kRuntimeError,
                        family.family() + ": no configuration ran (" +
                            (last_error.empty() ? "none was measured" : last_error) + ")");
    return out;
  }
  out.config = runner->best_config();
  out.ms = runner->best_ms();
  family.remember(params, out.config, out.ms);
  return out;
}

}  // namespace tunekit
