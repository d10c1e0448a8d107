// find_fastest: times every candidate of a problem (probe, two screens, numerical check, warmup,
// profile), re-measures the close finalists interleaved, and reports the fastest.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/cpu_wait.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/operand_copies.hpp"
#include "tunekit/tunable/params_traits.hpp"
#include "tunekit/tunable/report.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit {

/// Screen 1 rejects a candidate whose mean exceeds this multiple of the best final mean so far.
/// Source: PyTorch TunableOp (V25+).
inline constexpr double kScreen1Ratio = 1.5;
/// Screen 2 rejects a candidate whose mean exceeds this multiple of the best final mean so far.
/// Source: PyTorch TunableOp (V25+).
inline constexpr double kScreen2Ratio = 1.15;
/// Nominal calls of the two screens (each capped by screen_iters). Source: PyTorch TunableOp.
inline constexpr long long kScreen1Calls = 3;
inline constexpr long long kScreen2Calls = 10;
/// Untimed lead-in calls before screen 1 and the final profile (fewer when the budget allows
/// fewer timed calls: min(2, n - 1)). Source: PyTorch TunableOp ProfileStats (2 untimed calls).
inline constexpr long long kLeadInCalls = 2;
/// Untimed calls at the start of every finalist's block of the interleaved pass, after
/// settings.settle(): settling lets the previous runtime's workers fall asleep, so the block's
/// first call would otherwise pay for waking this candidate's own sleeping thread pool, a cost
/// single-threaded candidates never pay and back-to-back production calls do not see either.
inline constexpr long long kBlockLeadInCalls = 1;
/// A sequential measurement that puts a candidate above a screen's ratio (or outside the
/// finalist margin) by at most this much more is checked again paired with the best candidate,
/// call by call (FastestSearch::paired_ratio). The read bandwidth of the shared 2-core AMD EPYC
/// Zen 4 swung between about 29 and 48 GB/s within minutes (docs/native.md), so a memory-bound
/// candidate timed in a slow phase looked up to 1.65x slower than one timed in a fast phase.
inline constexpr double kPhaseSwing = 1.7;

namespace detail {

/// Runs a candidate, turning an escaped exception into kRuntimeError (candidates must not throw,
/// but a tuning run must survive one that does).
template <class Params>
Status guarded_run(Candidate<Params>& candidate, const Params& params) {
  try {
    return candidate.run(params);
  } catch (const std::exception& e) {
    return Status(StatusCode::kRuntimeError, std::string("threw: ") + e.what());
  } catch (...) {
    return Status(StatusCode::kRuntimeError, "threw a non-standard exception");
  }
}

template <class Params>
Status guarded_prepare(Candidate<Params>& candidate, const Params& params) {
  try {
    return candidate.prepare(params);
  } catch (const std::exception& e) {
    return Status(StatusCode::kRuntimeError, std::string("prepare threw: ") + e.what());
  } catch (...) {
    return Status(StatusCode::kRuntimeError, "prepare threw a non-standard exception");
  }
}

inline std::string ratio_reason(std::string_view stage, double mean_ms, double best_ms,
                                double limit) {
  return fmt::format("{}: mean {:.6g} ms is {:.3f}x the best ({:.6g} ms; limit {}x)", stage,
                     mean_ms, mean_ms / best_ms, best_ms, limit);
}

}  // namespace detail

/// The steps of find_fastest on one problem, each callable on its own (tests drive them one by
/// one; find_fastest() runs them in order). The procedure (PyTorch TunableOp FindFastest, V26;
/// tunekit additions marked +):
///  1. make_operands(): rotating operand copies (OperandCopies), plus a reference and a check
///     copy when the numerical check is on; calls rotate through the copies with one running
///     offset shared by all candidates, and the + operand cache flush happens before each call,
///     outside the timed region.
///  2. make_reference(): Default runs once on the reference copy.
///  3. measure(i) per candidate in registration order: admit (library filter, supports(),
///     prepare()), a timed probe call, screen 1 (min(2, n-1) untimed + n = screen_iters(probe, 3)
///     timed calls; rejected if mean > 1.5x the best), screen 2 (n2 = screen_iters(screen-1
///     mean, 10) timed calls, only if n2 > n; rejected if mean > 1.15x the best), numerical check
///     against the reference (error, mismatch or NaN: skipped), warmup (warmup_iterations),
///     profile (tuning_iterations timed calls after min(2, n-1) untimed). A failure at any step
///     skips the candidate with its reason. + A screen whose calls ran under CPU contention
///     above settings.max_contention rejects nothing (the candidate goes on). + A screen that
///     would reject by at most kPhaseSwing x its ratio first times the candidate paired with
///     the best so far, alternately, over n pairs (paired_ratio: one timed call each after an
///     untimed one; the median of the pairs' ratios), and rejects only when that ratio is above
///     the limit too (else the candidate goes on with paired ratio x best as its estimate): a
///     phase of the machine without CPU contention (memory bandwidth taken by other tenants)
///     falls on both.
///  4. + remeasure_finalists(): the candidates whose mean is within settings.finalist_margin
///     (25%) of the best, or whose ratio to the best paired call by call (over their profile's
///     calls, at most kScreen2Calls; asked up to kPhaseSwing x the margin) is within it, or
///     within kScreen1Ratio of it when their profile ran under contention
///     (at most settings.max_finalists, the fastest) are re-measured
///     interleaved: `rounds` = min(settings.interleaved_rounds, fewest profile calls among them),
///     raised to settings.min_interleaved_rounds (3) for slow problems, where the slowest
///     finalists are dropped until that many rounds fit in settings.max_interleaved_ms (4 s) but
///     the two fastest always stay; in each round every finalist (order rotated by one per
///     round) makes max(1, its profile calls / rounds) timed calls after settings.settle() and
///     kBlockLeadInCalls untimed calls, and the round's median is kept; a finalist's score is the
///     median of its round medians. + A block is clean when its calls ran under contention at
///     most settings.max_contention; rounds are added until every finalist has `rounds` clean
///     blocks (at most 3 x rounds in all, none started after settings.max_interleaved_ms), and
///     the scores use the clean blocks when every finalist has at least
///     min(rounds, settings.min_interleaved_rounds) of them, else every block (the report is
///     then marked contended).
///  5. pick_winner(): the lowest score wins (a non-finalist's score is its profile mean); the
///     written time is the winner's score, the value it was ranked by.
/// Units: milliseconds. The caller's output is never written (copies only).
template <TunableParams Params>
class FastestSearch {
 public:
  using Traits = ParamsTraits<Params>;

  /// Keeps references to params, candidates and settings: all three must outlive the search
  /// (temporaries are refused at compile time).
  FastestSearch(Params&&, CandidateList<Params>&, const TuningSettings&) = delete;
  FastestSearch(const Params&, CandidateList<Params>&, TuningSettings&&) = delete;
  FastestSearch(const Params& params, CandidateList<Params>& candidates,
                const TuningSettings& settings)
      : params_(params), candidates_(candidates), settings_(settings) {
    report_.op_signature = params.op_signature();
    report_.params_signature = params.signature();
    problem_ = report_.op_signature + "(" + report_.params_signature + ")";
    report_.timer_overhead_ms = measure::timer_overhead_ms();
    report_.cache_flush_method =
        settings.cache_flush ? std::string(measure::cache_flush_method()) : std::string("off");
    report_.candidates.resize(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      CandidateReport& r = report_.candidates[i];
      r.index = i;
      r.name = candidates[i]->name();
      r.library = std::string(candidates[i]->library());
    }
    samples_.resize(candidates.size());
    welford_.resize(candidates.size());
  }

  /// Step 1. Errors: kInvalidArgument without candidates; the workspace's error.
  Status make_operands() {
    if (candidates_.empty())
      return Status(StatusCode::kInvalidArgument, problem_ + ": no candidates");
    check_ = settings_.numerical_check.enabled && Traits::kCanCompare;
    if (settings_.numerical_check.enabled && !Traits::kCanCompare) {
      log::info(2, "{}: this operator offers no output comparison; numerical check skipped",
                problem_);
    }
    auto copies =
        OperandCopies<Params>::create(params_, settings_.rotating_buffer_bytes,
                                      settings_.max_rotating_copies, check_, settings_.cache_flush);
    if (!copies) return copies.status();
    copies_.emplace(std::move(*copies));
    report_.rotating_copies = copies_->rotating();
    return Status::ok();
  }

  /// Step 2: Default's output on the reference copy (nothing when the check is off).
  void make_reference() {
    if (!check_) return;
    tolerance_ = settings_.numerical_check.tolerance.value_or(Traits::default_tolerance(params_));
    report_.tolerance = tolerance_;
    default_prepare_ = detail::guarded_prepare(*candidates_[0], params_);
    default_prepared_ = true;
    if (!default_prepare_.is_ok()) return;
    const Status s = detail::guarded_run(*candidates_[0], copies_->fresh_reference());
    have_reference_ = s.is_ok();
    if (!have_reference_) {
      log::warn(problem_ + ": Default failed on the numerics reference (" + s.to_string() +
                "); numerical check skipped");
    }
  }

  /// Step 3 for candidate `i`. Errors: a malformed TUNEKIT_<LIBRARY>_ENABLED (tuning stops);
  /// candidate failures are data in its report line.
  Status measure(std::size_t i) {
    if (!search(i)) return Status::ok();
    auto admitted = admit(i);
    if (!admitted) return admitted.status();
    if (!*admitted || !probe(i)) return Status::ok();
    if (const std::optional<double> approx = screen(i); approx && check(i))
      (void)profile(i, *approx);
    return Status::ok();
  }

  /// Step 4: the interleaved re-measurement of the finalists (none when fewer than two).
  void remeasure_finalists() {
    std::vector<std::size_t> finalists = pick_finalists(pair_near_finalists());
    const long long rounds = interleaved_rounds(finalists);
    if (rounds < 3) return;
    report_.interleaved = true;
    Rounds log(candidates_.size());
    std::vector<bool> alive(candidates_.size(), false);
    for (std::size_t f : finalists) {
      alive[f] = true;
      report_.candidates[f].finalist = true;
    }
    const std::int64_t start_ns = settings_.clock();
    while (another_round(finalists, alive, rounds, log, start_ns)) {
      for (std::size_t k = 0; k < finalists.size(); ++k) {
        const std::size_t f = finalists[(static_cast<std::size_t>(log.run) + k) % finalists.size()];
        if (alive[f]) alive[f] = remeasure_block(f, rounds, log.medians[f], log.share[f]);
      }
      ++log.run;
    }
    report_.rounds_run = static_cast<int>(log.run);
    score_finalists(finalists, alive, log, rounds);
  }

  /// Step 5: the winner (lowest score) and its written time; report.status says when none.
  void pick_winner() {
    for (const CandidateReport& r : report_.candidates) {
      if (!r.measured()) continue;
      if (!report_.winner || r.score_ms < report_.candidates[*report_.winner].score_ms) {
        report_.winner = r.index;
      }
    }
    if (!report_.winner) {
      const CandidateReport& d = report_.candidates[0];
      report_.status = Status(StatusCode::kRuntimeError,
                              problem_ + ": no candidate succeeded (Default: " +
                                  (d.reason.empty() ? d.status.to_string() : d.reason) + ")");
      return;
    }
    report_.winner_time_ms = report_.candidates[*report_.winner].score_ms;
    if (!report_.interleaved) report_.contention = report_.candidates[*report_.winner].contention;
    report_.contended = report_.contention > settings_.max_contention;
    if (report_.contended) {
      log::warn(fmt::format(
          "{}: timed under CPU contention ({:.0f}% of the CPUs' time waited for a CPU while the "
          "winner was chosen): other work held the CPUs, so {} may not be the fastest on a quiet "
          "machine; re-tune there",
          problem_, 100.0 * report_.contention, report_.candidates[*report_.winner].name));
    }
    log_ranking();
  }

  /// The concrete candidate a template candidate `i` was measured as (its search's winner),
  /// moved out; null for plain candidates (and after a first take).
  std::unique_ptr<Candidate<Params>> take_instance(std::size_t i) {
    return i < instances_.size() ? std::move(instances_[i]) : nullptr;
  }

  /// The report so far (complete after pick_winner()).
  const TuneReport& report() const noexcept { return report_; }
  /// Moves the report out.
  TuneReport take_report() { return std::move(report_); }
  /// The best profile mean so far (the screens' reference), ms; infinity before any.
  double best_mean_ms() const noexcept { return best_; }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  // The interleaved pass's record: each finalist's median and contention per block.
  struct Rounds {
    explicit Rounds(std::size_t candidates) : medians(candidates), share(candidates) {}
    std::vector<std::vector<double>> medians;
    std::vector<std::vector<double>> share;
    long long run = 0;
  };

  // A timed region's start, for its contention (nothing without a CPU-wait source).
  measure::CpuWait region_start() const {
    return settings_.cpu_wait ? settings_.cpu_wait() : measure::CpuWait{};
  }
  double region_share(const measure::CpuWait& start) const {
    return settings_.cpu_wait ? measure::contention(start, settings_.cpu_wait()) : 0.0;
  }
  bool contended(double share) const noexcept { return share > settings_.max_contention; }

  // The candidate measured in slot i: the search's instance for a template, else the entry.
  Candidate<Params>& candidate(std::size_t i) {
    return i < instances_.size() && instances_[i] ? *instances_[i] : *candidates_[i];
  }

  // A template candidate's configuration search (step 3's first part): true when slot i goes
  // on to be measured (a plain candidate, or a template whose search found a configuration,
  // which then stands in the slot under its own name). A disabled library is not searched.
  bool search(std::size_t i) {
    TemplateCandidate<Params>* family = as_template(*candidates_[i]);
    if (family == nullptr) return true;
    if (i != 0 && settings_.library_enabled) {
      auto enabled = settings_.library_enabled(report_.candidates[i].library);
      if (!enabled || !*enabled) return true;  // admit() reports it
    }
    if (Status s = candidates_[i]->supports(params_); !s.is_ok()) return true;  // admit() too
    TemplateSearchResult<Params> found = family->search(
        params_, *copies_, settings_, [this](Candidate<Params>& c) { return verify_output(c); });
    CandidateReport& r = report_.candidates[i];
    r.search_trials = found.trials;
    r.search_seeds = found.seeds;
    r.search_ms = found.wall_ms;
    if (!found.instance) {
      skip_failed(i, "configuration search", std::move(found.status), true);
      return false;
    }
    r.name = found.instance->name();
    log::info(2, "{}: {} searched {} configuration{} ({} seeds) in {:.0f} ms: {} at {:.6g} ms",
              problem_, family->family(), found.trials, found.trials == 1 ? "" : "s", found.seeds,
              found.wall_ms, r.name, found.ms);
    if (instances_.size() < candidates_.size()) instances_.resize(candidates_.size());
    instances_[i] = std::move(found.instance);
    return true;
  }

  auto call_of(Candidate<Params>& c) {
    return [&c, this] { return detail::guarded_run(c, copies_->current()); };
  }
  auto before_call() {
    return [this] { copies_->advance(); };
  }

  void skip(std::size_t i, CandidateOutcome outcome, Status status, std::string reason) {
    CandidateReport& r = report_.candidates[i];
    r.outcome = outcome;
    r.status = std::move(status);
    r.reason = std::move(reason);
    log::info(2, "{}: {} {}: {}", problem_, r.name, to_string(outcome), r.reason);
  }
  // A failed step: unsupported when the candidate said so, else failed.
  void skip_failed(std::size_t i, std::string_view step, Status s, bool may_be_unsupported) {
    std::string reason = std::string(step) + ": " + s.message();
    const bool unsupported = may_be_unsupported && s.code() == StatusCode::kUnsupported;
    skip(i, unsupported ? CandidateOutcome::kUnsupported : CandidateOutcome::kFailed, std::move(s),
         std::move(reason));
  }

  // Library filter, supports() and prepare(): whether candidate i takes part.
  Expected<bool> admit(std::size_t i) {
    Candidate<Params>& c = candidate(i);
    const std::string& library = report_.candidates[i].library;
    if (i != 0 && settings_.library_enabled) {
      auto enabled = settings_.library_enabled(library);
      if (!enabled) return enabled.status();
      if (!*enabled) {
        skip(i, CandidateOutcome::kDisabled, Status(StatusCode::kUnsupported, "library disabled"),
             library_env_name(library) + "=0");
        return false;
      }
    }
    if (Status s = c.supports(params_); !s.is_ok()) {
      const bool unsupported = s.code() == StatusCode::kUnsupported;
      std::string reason = (unsupported ? "unsupported: " : "supports() failed: ") + s.message();
      skip(i, unsupported ? CandidateOutcome::kUnsupported : CandidateOutcome::kFailed,
           std::move(s), std::move(reason));
      return false;
    }
    Status prepared =
        (i == 0 && default_prepared_) ? default_prepare_ : detail::guarded_prepare(c, params_);
    if (!prepared.is_ok()) {
      skip_failed(i, "prepare", std::move(prepared), true);
      return false;
    }
    return true;
  }

  bool probe(std::size_t i) {
    Welford probe;
    Status s = measure::time_calls(1, call_of(candidate(i)), before_call(), probe, nullptr,
                                   settings_.clock);
    if (!s.is_ok()) {
      skip_failed(i, "probe", std::move(s), true);
      return false;
    }
    report_.candidates[i].probe_ms = probe.mean();
    return true;
  }

  // Screens 1 and 2; the per-call estimate when the candidate passes.
  std::optional<double> screen(std::size_t i) {
    CandidateReport& r = report_.candidates[i];
    const long long max_ms = settings_.max_tuning_duration_ms;
    const long long max_iters = settings_.max_tuning_iterations;
    const long long n1 = measure::screen_iters(r.probe_ms, kScreen1Calls, max_ms, max_iters);
    Status s =
        measure::run_untimed(std::min(kLeadInCalls, n1 - 1), call_of(candidate(i)), before_call());
    if (!s.is_ok()) {
      skip_failed(i, "screen 1", std::move(s), false);
      return std::nullopt;
    }
    const std::optional<double> approx =
        screen_pass(i, "screen 1", n1, kScreen1Ratio, CandidateOutcome::kRejectedScreen1);
    if (!approx) return std::nullopt;
    const long long n2 = measure::screen_iters(*approx, kScreen2Calls, max_ms, max_iters);
    if (n2 <= n1) return approx;  // the budget allows no more calls than screen 1 had
    return screen_pass(i, "screen 2", n2, kScreen2Ratio, CandidateOutcome::kRejectedScreen2);
  }

  std::optional<double> screen_pass(std::size_t i, std::string_view stage, long long n,
                                    double ratio, CandidateOutcome rejected) {
    Welford stats;
    std::vector<double> samples;
    const measure::CpuWait region = region_start();
    Status s = measure::time_calls(n, call_of(candidate(i)), before_call(), stats, &samples,
                                   settings_.clock);
    if (!s.is_ok()) {
      skip_failed(i, stage, std::move(s), false);
      return std::nullopt;
    }
    if (const double share = region_share(region); contended(share)) {
      log::info(2, "{}: {} {} under {:.0f}% CPU contention: rejects nothing", problem_,
                report_.candidates[i].name, stage, 100.0 * share);
      return stats.mean();
    }
    if (stats.mean() > ratio * best_) {
      // Within the ratio paired with the best: goes on, its estimate from the pairing.
      const std::optional<double> paired = paired_near_miss(i, stage, n, ratio, stats.mean());
      if (paired && *paired <= ratio) return *paired * best_;
      report_.candidates[i].stats = measure::TimingStats::from(stats, samples);
      skip(i, rejected, Status::ok(), detail::ratio_reason(stage, stats.mean(), best_, ratio));
      return std::nullopt;
    }
    return stats.mean();
  }

  // `c`'s output on the check copy against Default's (ok when there is no reference): the
  // run's failure, or kWrongResult with the mismatch.
  Status verify_output(Candidate<Params>& c) {
    if (!have_reference_) return Status::ok();
    const Params got = copies_->fresh_check();
    TUNEKIT_RETURN_IF_ERROR(detail::guarded_run(c, got));
    Status s = Traits::compare_output(copies_->reference(), got, tolerance_);
    if (s.is_ok() || s.code() == StatusCode::kWrongResult) return s;
    return Status(StatusCode::kWrongResult, s.message());
  }

  // Numerical check against Default's output (passes when there is no reference).
  bool check(std::size_t i) {
    if (!have_reference_ || i == 0) return true;
    const Params got = copies_->fresh_check();
    Status s = detail::guarded_run(candidate(i), got);
    if (!s.is_ok()) {
      skip_failed(i, "numerical check run", std::move(s), false);
      return false;
    }
    s = Traits::compare_output(copies_->reference(), got, tolerance_);
    if (s.is_ok()) return true;
    std::string reason = fmt::format("wrong result (atol {:g}, rtol {:g}): {}", tolerance_.atol,
                                     tolerance_.rtol, s.message());
    Status wrong = s.code() == StatusCode::kWrongResult
                       ? std::move(s)
                       : Status(StatusCode::kWrongResult, s.message());
    skip(i, CandidateOutcome::kWrongResult, std::move(wrong), std::move(reason));
    return false;
  }

  // Warmup and the final profile.
  bool profile(std::size_t i, double approx) {
    CandidateReport& r = report_.candidates[i];
    Candidate<Params>& c = candidate(i);
    r.warmup_iterations = measure::warmup_iterations(approx, settings_.max_warmup_duration_ms,
                                                     settings_.max_warmup_iterations);
    r.iterations = measure::tuning_iterations(approx, settings_.max_tuning_duration_ms,
                                              settings_.max_tuning_iterations);
    Status s = measure::run_untimed(r.warmup_iterations, call_of(c), before_call());
    if (s.is_ok()) {
      s = measure::run_untimed(std::min(kLeadInCalls, r.iterations - 1), call_of(c), before_call());
    }
    if (!s.is_ok()) {
      skip_failed(i, "warmup", std::move(s), false);
      return false;
    }
    const measure::CpuWait region = region_start();
    s = measure::time_calls(r.iterations, call_of(c), before_call(), welford_[i], &samples_[i],
                            settings_.clock);
    r.contention = region_share(region);
    if (!s.is_ok()) {
      skip_failed(i, "profile", std::move(s), false);
      return false;
    }
    r.outcome = CandidateOutcome::kMeasured;
    r.status = Status::ok();
    r.stats = measure::TimingStats::from(welford_[i], samples_[i]);
    r.score_ms = r.stats.mean_ms;
    if (r.stats.mean_ms < best_) {
      best_ = r.stats.mean_ms;
      best_index_ = i;
    }
    log::info(2,
              "{}: {} probe {:.6g} ms, approx {:.6g} ms, warmup {} calls, tuning {} calls, "
              "mean {:.6g} ms (min {:.6g}, max {:.6g}, stddev {:.3g}), contention {:.1f}%",
              problem_, r.name, r.probe_ms, approx, r.warmup_iterations, r.iterations,
              r.stats.mean_ms, r.stats.min_ms, r.stats.max_ms, r.stats.stddev_ms,
              100.0 * r.contention);
    return true;
  }

  // Candidate i's time over the best candidate's from `n` pairs of blocks, each side's block one
  // timed call after settings.settle() and kBlockLeadInCalls untimed ones (as in the interleaved
  // pass: no side pays for waking its thread pool), the median of the pairs' ratios: a slow
  // phase of the machine, which a sequential measurement blames on whoever runs in it, falls on
  // both. nullopt without a best other than i, or when a call fails (the sequential result
  // stands then).
  std::optional<double> paired_ratio(std::size_t i, long long n) {
    if (best_index_ >= candidates_.size() || best_index_ == i) return std::nullopt;
    auto block_ms = [this](std::size_t k) -> std::optional<double> {
      if (settings_.settle) settings_.settle();
      Welford one;
      Status s = measure::run_untimed(kBlockLeadInCalls, call_of(candidate(k)), before_call());
      if (s.is_ok()) {
        s = measure::time_calls(1, call_of(candidate(k)), before_call(), one, nullptr,
                                settings_.clock);
      }
      if (!s.is_ok()) return std::nullopt;
      return one.mean();
    };
    std::vector<double> ratios;
    for (long long k = 0; k < std::max(1LL, n); ++k) {
      const std::optional<double> mine = block_ms(i), best = block_ms(best_index_);
      if (!mine || !best) return std::nullopt;
      ratios.push_back(*mine / std::max(*best, 1e-12));
    }
    return median(ratios);
  }

  // Candidate i's ratio to the best paired with it over n pairs (paired_ratio) when `mean` ms
  // in a sequential `stage` puts it above `ratio` x best_ by at most kPhaseSwing (a phase could
  // explain that); nullopt otherwise, or when no pairing was possible.
  std::optional<double> paired_near_miss(std::size_t i, std::string_view stage, long long n,
                                         double ratio, double mean) {
    if (mean > kPhaseSwing * ratio * best_) return std::nullopt;
    const std::optional<double> paired = paired_ratio(i, n);
    if (paired) {
      log::info(2, "{}: {} {} at {:.3f}x the best, {:.3f}x paired call by call with it", problem_,
                report_.candidates[i].name, stage, mean / best_, *paired);
    }
    return paired;
  }

  // Per candidate, whether it joins the finalists by pairing: measured outside the finalist
  // margin but within kPhaseSwing of it, with its ratio paired with the best (over its profile's
  // calls, at most kScreen2Calls) within it.
  std::vector<bool> pair_near_finalists() {
    std::vector<bool> joined(candidates_.size(), false);
    if (!(settings_.finalist_margin > 0.0) || !(best_ < kInf)) return joined;
    // A full list of finalists within the margin leaves no place for one that joins by pairing.
    if (pick_finalists(joined).size() >= std::max<std::size_t>(2, settings_.max_finalists)) {
      return joined;
    }
    const double limit = 1.0 + settings_.finalist_margin;
    for (const CandidateReport& r : report_.candidates) {
      // A contended profile joins by the wider limit of pick_finalists instead.
      if (!r.measured() || r.stats.mean_ms <= best_ * limit || contended(r.contention)) continue;
      const long long n = std::clamp(r.iterations, 1LL, kScreen2Calls);
      const std::optional<double> paired =
          paired_near_miss(r.index, "profile", n, limit, r.stats.mean_ms);
      joined[r.index] = paired && *paired <= limit;
    }
    return joined;
  }

  // The measured candidates within the margin of the best (within kScreen1Ratio when their
  // profile was contended) or `joined` by pairing, fastest first, at most max(2, max_finalists).
  std::vector<std::size_t> pick_finalists(const std::vector<bool>& joined) const {
    std::vector<std::size_t> finalists;
    if (!(settings_.finalist_margin > 0.0) || !(best_ < kInf)) return finalists;
    for (const CandidateReport& r : report_.candidates) {
      const double limit = contended(r.contention)
                               ? std::max(kScreen1Ratio, 1.0 + settings_.finalist_margin)
                               : 1.0 + settings_.finalist_margin;
      if (r.measured() && (r.stats.mean_ms <= best_ * limit || joined[r.index])) {
        finalists.push_back(r.index);
      }
    }
    std::stable_sort(finalists.begin(), finalists.end(), [&](std::size_t a, std::size_t b) {
      return report_.candidates[a].stats.mean_ms < report_.candidates[b].stats.mean_ms;
    });
    const std::size_t cap = std::max<std::size_t>(2, settings_.max_finalists);
    if (finalists.size() > cap) finalists.resize(cap);
    return finalists;
  }

  // Rounds of the interleaved pass; drops the slowest finalists of slow problems (see step 4)
  // and leaves the rest in registration order. 0 when fewer than two finalists.
  long long interleaved_rounds(std::vector<std::size_t>& finalists) const {
    if (finalists.size() < 2) return 0;
    long long rounds = settings_.interleaved_rounds;
    for (std::size_t f : finalists) rounds = std::min(rounds, report_.candidates[f].iterations);
    if (rounds < settings_.min_interleaved_rounds) {
      rounds = settings_.min_interleaved_rounds;
      auto per_round_ms = [&] {
        double sum = 0.0;
        for (std::size_t f : finalists) sum += report_.candidates[f].stats.mean_ms;
        return sum;
      };
      while (finalists.size() > 2 &&
             per_round_ms() * static_cast<double>(rounds) > settings_.max_interleaved_ms) {
        finalists.pop_back();
      }
    }
    std::sort(finalists.begin(), finalists.end());  // registration order within a round
    return rounds;
  }

  // One finalist's block of a round; false (and the candidate failed) on an error.
  long long clean_blocks(const Rounds& log, std::size_t f) const {
    return std::count_if(log.share[f].begin(), log.share[f].end(),
                         [this](double share) { return !contended(share); });
  }
  // The fewest clean blocks of a finalist still alive.
  long long fewest_clean(const std::vector<std::size_t>& finalists, const std::vector<bool>& alive,
                         const Rounds& log) const {
    long long fewest = std::numeric_limits<long long>::max();
    for (std::size_t f : finalists) {
      if (alive[f]) fewest = std::min(fewest, clean_blocks(log, f));
    }
    return fewest;
  }

  // Whether the interleaved pass runs another round: until `rounds`, then while a finalist has
  // fewer clean blocks (at most 3 x rounds, none started after max_interleaved_ms).
  bool another_round(const std::vector<std::size_t>& finalists, const std::vector<bool>& alive,
                     long long rounds, const Rounds& log, std::int64_t start_ns) const {
    if (log.run < rounds) return true;
    const double elapsed_ms = static_cast<double>(settings_.clock() - start_ns) / 1e6;
    return fewest_clean(finalists, alive, log) < rounds && log.run < 3 * rounds &&
           elapsed_ms < settings_.max_interleaved_ms;
  }

  // Scores of the finalists still alive: the median of their clean blocks' medians when every
  // finalist has enough, else of all their blocks'; the report's contention is the mean
  // contention of the blocks used.
  void score_finalists(const std::vector<std::size_t>& finalists, const std::vector<bool>& alive,
                       const Rounds& log, long long rounds) {
    const long long needed = std::min<long long>(rounds, settings_.min_interleaved_rounds);
    report_.min_clean_blocks = static_cast<int>(fewest_clean(finalists, alive, log));
    const bool clean_only = report_.min_clean_blocks >= needed;
    double share_sum = 0.0;
    std::size_t blocks = 0;
    for (std::size_t f : finalists) {
      if (!alive[f]) continue;
      std::vector<double> used;
      for (std::size_t b = 0; b < log.medians[f].size(); ++b) {
        if (clean_only && contended(log.share[f][b])) continue;
        used.push_back(log.medians[f][b]);
        share_sum += log.share[f][b];
        ++blocks;
      }
      CandidateReport& r = report_.candidates[f];
      r.interleaved_median_ms = median(used);
      r.score_ms = r.interleaved_median_ms;
      r.stats = measure::TimingStats::from(welford_[f], samples_[f]);
    }
    report_.contention = blocks == 0 ? 0.0 : share_sum / static_cast<double>(blocks);
  }

  bool remeasure_block(std::size_t f, long long rounds, std::vector<double>& round_medians,
                       std::vector<double>& block_shares) {
    CandidateReport& r = report_.candidates[f];
    if (settings_.settle) settings_.settle();
    const long long calls = std::max<long long>(1, r.iterations / rounds);
    std::vector<double> round_samples;
    round_samples.reserve(static_cast<std::size_t>(calls));
    Status s = measure::run_untimed(kBlockLeadInCalls, call_of(candidate(f)), before_call());
    if (s.is_ok()) {
      const measure::CpuWait region = region_start();
      s = measure::time_calls(calls, call_of(candidate(f)), before_call(), welford_[f],
                              &round_samples, settings_.clock);
      block_shares.push_back(region_share(region));
    }
    if (!s.is_ok()) {
      r.outcome = CandidateOutcome::kFailed;
      r.reason = "interleaved re-measure: " + s.message();
      r.status = std::move(s);
      r.score_ms = std::numeric_limits<double>::quiet_NaN();
      return false;
    }
    round_medians.push_back(median(round_samples));
    samples_[f].insert(samples_[f].end(), round_samples.begin(), round_samples.end());
    return true;
  }

  void log_ranking() const {
    if (log::level() < 2) return;
    std::vector<const CandidateReport*> ranked;
    for (const CandidateReport& r : report_.candidates) {
      if (r.measured()) ranked.push_back(&r);
    }
    std::sort(ranked.begin(), ranked.end(), [](const CandidateReport* a, const CandidateReport* b) {
      return a->score_ms < b->score_ms;
    });
    for (std::size_t k = 0; k < ranked.size() && k < 5; ++k) {
      log::info(2, "{}: top {} {} score {:.6g} ms (mean {:.6g} ms{})", problem_, k + 1,
                ranked[k]->name, ranked[k]->score_ms, ranked[k]->stats.mean_ms,
                ranked[k]->finalist ? ", interleaved" : "");
    }
  }

  const Params& params_;
  CandidateList<Params>& candidates_;
  const TuningSettings& settings_;
  TuneReport report_;
  std::string problem_;
  std::optional<OperandCopies<Params>> copies_;
  bool check_ = false;
  Tolerance tolerance_{};
  bool have_reference_ = false;
  bool default_prepared_ = false;
  Status default_prepare_ = Status::ok();
  double best_ = kInf;
  std::size_t best_index_ = std::numeric_limits<std::size_t>::max();  // whose profile is best_
  std::vector<Welford> welford_;
  std::vector<std::vector<double>> samples_;
  std::vector<std::unique_ptr<Candidate<Params>>> instances_;  // template slots' instances
};

/// Times every candidate on a problem and picks the fastest: FastestSearch's steps in order.
/// When the winner is a template candidate (TemplateCandidate), report.candidates[winner].name
/// is its configuration's solution name and `winner_instance` (when not null) receives the
/// concrete candidate that ran it.
/// Errors: report.status is kInvalidArgument for a malformed TUNEKIT_<LIBRARY>_ENABLED or no
///         candidates, the workspace error when operands cannot be copied, kRuntimeError when no
///         candidate succeeded; candidate failures are data in report.candidates.
template <TunableParams Params>
TuneReport find_fastest(const Params& params, CandidateList<Params>& candidates,
                        const TuningSettings& settings,
                        std::unique_ptr<Candidate<Params>>* winner_instance = nullptr) {
  const std::int64_t wall_start = now_ns();
  FastestSearch<Params> search(params, candidates, settings);
  Status s = search.make_operands();
  if (s.is_ok()) {
    search.make_reference();
    for (std::size_t i = 0; i < candidates.size() && s.is_ok(); ++i) s = search.measure(i);
  }
  if (s.is_ok()) {
    search.remeasure_finalists();
    search.pick_winner();
  }
  if (winner_instance != nullptr && search.report().winner) {
    *winner_instance = search.take_instance(*search.report().winner);
  }
  TuneReport report = search.take_report();
  if (!s.is_ok()) report.status = std::move(s);
  report.wall_ms = elapsed_ms(wall_start, now_ns());
  return report;
}

}  // namespace tunekit
