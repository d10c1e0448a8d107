// find_fastest: times every candidate of a problem (probe, two screens, numerical check, warmup,
// profile), re-measures the close finalists interleaved, and reports the fastest.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/params_traits.hpp"
#include "tunekit/tunable/report.hpp"

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

/// Times every candidate on a problem and picks the fastest.
///
/// Procedure (PyTorch TunableOp FindFastest, V26; tunekit additions marked +):
///  1. Operand copies: copies = floor(R / P) + 1 (P = output + input bytes, R the rotating buffer
///     size; 1 copy when R == 0), plus a reference and a check copy when the numerical check is
///     on. Calls rotate through the copies with one running offset shared by all candidates.
///  2. Numerics reference: Default runs once on the reference copy.
///  3. Per candidate in registration order: library filter, supports(), prepare(), a timed probe
///     call, screen 1 (min(2, n-1) untimed + n = screen_iters(probe, 3) timed calls; rejected if
///     mean > 1.5x the best), screen 2 (n2 = screen_iters(screen-1 mean, 10) timed calls, only if
///     n2 > n; rejected if mean > 1.15x the best), numerical check against the reference (error,
///     mismatch or NaN: skipped), warmup (warmup_iterations), final profile (tuning_iterations
///     timed calls after min(2, n-1) untimed). Every timed call is timed on its own with the
///     steady clock; the + operand cache flush (settings.cache_flush) and the rotation happen
///     before each call, outside the timed region. A failure at any step skips the candidate
///     with its reason.
///  4. + Robust winner: the candidates whose mean is within settings.finalist_margin (25%) of the
///     best (at most settings.max_finalists, the fastest) are re-measured interleaved: `rounds` =
///     min(settings.interleaved_rounds, fewest profile calls among them), raised to
///     settings.min_interleaved_rounds (3) for slow problems, where the slowest finalists are
///     dropped until that many rounds fit in settings.max_interleaved_ms (4 s) but the two fastest
///     always stay; in each round every finalist (order rotated by one
///     per round) makes max(1, its profile calls / rounds) timed calls, and the round's median is
///     kept; a finalist's score is the median of its round medians. The winner has the lowest
///     score (the mean for non-finalists). Its written time is the mean of all its profile and
///     interleaved calls.
/// Units:  milliseconds. The caller's output is never written (copies only).
/// Errors: report.status is kInvalidArgument for a malformed TUNEKIT_<LIBRARY>_ENABLED, the
///         workspace error when operands cannot be copied, kRuntimeError when no candidate
///         succeeded; candidate failures are data in report.candidates.
template <TunableParams Params>
TuneReport find_fastest(const Params& params, CandidateList<Params>& candidates,
                        const TuningSettings& settings) {
  using Traits = ParamsTraits<Params>;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::int64_t wall_start = now_ns();

  TuneReport report;
  report.op_signature = params.op_signature();
  report.params_signature = params.signature();
  report.timer_overhead_ms = measure::timer_overhead_ms();
  report.cache_flush_method =
      settings.cache_flush ? std::string(measure::cache_flush_method()) : std::string("off");
  const std::string problem = report.op_signature + "(" + report.params_signature + ")";
  auto finish = [&]() -> TuneReport {
    report.wall_ms = elapsed_ms(wall_start, now_ns());
    return std::move(report);
  };

  report.candidates.resize(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    CandidateReport& r = report.candidates[i];
    r.index = i;
    r.name = candidates[i]->name();
    r.library = std::string(candidates[i]->library());
  }
  if (candidates.empty()) {
    report.status = Status(StatusCode::kInvalidArgument, problem + ": no candidates");
    return finish();
  }

  // 1. Operand copies.
  const std::size_t copies =
      measure::rotating_copies(settings.rotating_buffer_bytes, Traits::output_bytes(params),
                               Traits::input_bytes(params), settings.max_rotating_copies);
  report.rotating_copies = copies;
  const bool check = settings.numerical_check.enabled && Traits::kCanCompare;
  if (settings.numerical_check.enabled && !Traits::kCanCompare) {
    log::info(2, "{}: this operator offers no output comparison; numerical check skipped", problem);
  }
  auto workspace = Traits::make_workspace(params, copies + (check ? 2 : 0));
  if (!workspace) {
    report.status = workspace.status();
    return finish();
  }
  auto& ws = **workspace;
  std::vector<Params> bound;
  bound.reserve(copies);
  for (std::size_t i = 0; i < copies; ++i) bound.push_back(Traits::bind(ws, i));
  std::vector<std::vector<measure::MemoryRange>> ranges;
  if (settings.cache_flush) {
    ranges.reserve(copies);
    for (const Params& p : bound) ranges.push_back(Traits::operand_ranges(p));
  }
  std::size_t offset = 0;
  std::size_t current = 0;
  auto before_call = [&] {
    current = offset++ % copies;
    if (settings.cache_flush) measure::flush_data_cache(ranges[current]);
  };
  auto call_of = [&](Candidate<Params>& c) {
    return [&c, &bound, &current] { return detail::guarded_run(c, bound[current]); };
  };

  // 2. Numerics reference from Default.
  const Tolerance tolerance =
      settings.numerical_check.tolerance.value_or(Traits::default_tolerance(params));
  bool have_reference = false;
  bool default_prepared = false;
  Status default_prepare = Status::ok();
  if (check) {
    report.tolerance = tolerance;
    default_prepare = detail::guarded_prepare(*candidates[0], params);
    default_prepared = true;
    if (default_prepare.is_ok()) {
      Traits::reset_output(ws, copies);
      Status s = detail::guarded_run(*candidates[0], Traits::bind(ws, copies));
      have_reference = s.is_ok();
      if (!have_reference) {
        log::warn(problem + ": Default failed on the numerics reference (" + s.to_string() +
                  "); numerical check skipped");
      }
    }
  }

  // 3. Per candidate.
  const long long max_ms = settings.max_tuning_duration_ms;
  const long long max_iters = settings.max_tuning_iterations;
  double best = kInf;
  std::vector<Welford> welford(candidates.size());
  std::vector<std::vector<double>> samples(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Candidate<Params>& c = *candidates[i];
    CandidateReport& r = report.candidates[i];
    auto skip = [&](CandidateOutcome outcome, Status status, std::string reason) {
      r.outcome = outcome;
      r.status = std::move(status);
      r.reason = std::move(reason);
      log::info(2, "{}: {} {}: {}", problem, r.name, to_string(outcome), r.reason);
    };

    if (i != 0 && settings.library_enabled) {
      auto enabled = settings.library_enabled(r.library);
      if (!enabled) {
        report.status = enabled.status();
        return finish();
      }
      if (!*enabled) {
        skip(CandidateOutcome::kDisabled, Status(StatusCode::kUnsupported, "library disabled"),
             library_env_name(r.library) + "=0");
        continue;
      }
    }
    if (Status s = c.supports(params); !s.is_ok()) {
      const bool unsupported = s.code() == StatusCode::kUnsupported;
      std::string reason = (unsupported ? "unsupported: " : "supports() failed: ") + s.message();
      skip(unsupported ? CandidateOutcome::kUnsupported : CandidateOutcome::kFailed, std::move(s),
           std::move(reason));
      continue;
    }
    Status prepared =
        (i == 0 && default_prepared) ? default_prepare : detail::guarded_prepare(c, params);
    if (!prepared.is_ok()) {
      std::string reason = "prepare: " + prepared.message();
      skip(prepared.code() == StatusCode::kUnsupported ? CandidateOutcome::kUnsupported
                                                       : CandidateOutcome::kFailed,
           std::move(prepared), std::move(reason));
      continue;
    }

    // Timed probe.
    {
      Welford probe;
      Status s = measure::time_calls(1, call_of(c), before_call, probe, nullptr, settings.clock);
      if (!s.is_ok()) {
        std::string reason = "probe: " + s.message();
        skip(s.code() == StatusCode::kUnsupported ? CandidateOutcome::kUnsupported
                                                  : CandidateOutcome::kFailed,
             std::move(s), std::move(reason));
        continue;
      }
      r.probe_ms = probe.mean();
    }

    // Screen 1.
    const long long n1 = measure::screen_iters(r.probe_ms, kScreen1Calls, max_ms, max_iters);
    Welford screen;
    std::vector<double> screen_samples;
    Status s = measure::run_untimed(std::min(kLeadInCalls, n1 - 1), call_of(c), before_call);
    if (s.is_ok())
      s = measure::time_calls(n1, call_of(c), before_call, screen, &screen_samples, settings.clock);
    if (!s.is_ok()) {
      std::string reason = "screen 1: " + s.message();
      skip(CandidateOutcome::kFailed, std::move(s), std::move(reason));
      continue;
    }
    double approx = screen.mean();
    if (approx > kScreen1Ratio * best) {
      r.stats = measure::TimingStats::from(screen, screen_samples);
      skip(CandidateOutcome::kRejectedScreen1, Status::ok(),
           detail::ratio_reason("screen 1", approx, best, kScreen1Ratio));
      continue;
    }

    // Screen 2 (only when the budget allows more calls than screen 1 had).
    const long long n2 = measure::screen_iters(approx, kScreen2Calls, max_ms, max_iters);
    if (n2 > n1) {
      Welford screen2;
      std::vector<double> screen2_samples;
      s = measure::time_calls(n2, call_of(c), before_call, screen2, &screen2_samples,
                              settings.clock);
      if (!s.is_ok()) {
        std::string reason = "screen 2: " + s.message();
        skip(CandidateOutcome::kFailed, std::move(s), std::move(reason));
        continue;
      }
      approx = screen2.mean();
      if (approx > kScreen2Ratio * best) {
        r.stats = measure::TimingStats::from(screen2, screen2_samples);
        skip(CandidateOutcome::kRejectedScreen2, Status::ok(),
             detail::ratio_reason("screen 2", approx, best, kScreen2Ratio));
        continue;
      }
    }

    // Numerical check against Default's output.
    if (have_reference && i != 0) {
      const std::size_t check_copy = copies + 1;
      Traits::reset_output(ws, check_copy);
      const Params got = Traits::bind(ws, check_copy);
      s = detail::guarded_run(c, got);
      if (!s.is_ok()) {
        std::string reason = "numerical check run: " + s.message();
        skip(CandidateOutcome::kFailed, std::move(s), std::move(reason));
        continue;
      }
      s = Traits::compare_output(Traits::bind(ws, copies), got, tolerance);
      if (!s.is_ok()) {
        std::string reason = fmt::format("wrong result (atol {:g}, rtol {:g}): {}", tolerance.atol,
                                         tolerance.rtol, s.message());
        Status wrong = s.code() == StatusCode::kWrongResult
                           ? std::move(s)
                           : Status(StatusCode::kWrongResult, s.message());
        skip(CandidateOutcome::kWrongResult, std::move(wrong), std::move(reason));
        continue;
      }
    }

    // Warmup and final profile.
    r.warmup_iterations = measure::warmup_iterations(approx, settings.max_warmup_duration_ms,
                                                     settings.max_warmup_iterations);
    r.iterations = measure::tuning_iterations(approx, max_ms, max_iters);
    s = measure::run_untimed(r.warmup_iterations, call_of(c), before_call);
    if (s.is_ok()) {
      s = measure::run_untimed(std::min(kLeadInCalls, r.iterations - 1), call_of(c), before_call);
    }
    if (!s.is_ok()) {
      std::string reason = "warmup: " + s.message();
      skip(CandidateOutcome::kFailed, std::move(s), std::move(reason));
      continue;
    }
    s = measure::time_calls(r.iterations, call_of(c), before_call, welford[i], &samples[i],
                            settings.clock);
    if (!s.is_ok()) {
      std::string reason = "profile: " + s.message();
      skip(CandidateOutcome::kFailed, std::move(s), std::move(reason));
      continue;
    }
    r.outcome = CandidateOutcome::kMeasured;
    r.status = Status::ok();
    r.stats = measure::TimingStats::from(welford[i], samples[i]);
    r.score_ms = r.stats.mean_ms;
    best = std::min(best, r.stats.mean_ms);
    log::info(2,
              "{}: {} probe {:.6g} ms, approx {:.6g} ms, warmup {} calls, tuning {} calls, "
              "mean {:.6g} ms (min {:.6g}, max {:.6g}, stddev {:.3g})",
              problem, r.name, r.probe_ms, approx, r.warmup_iterations, r.iterations,
              r.stats.mean_ms, r.stats.min_ms, r.stats.max_ms, r.stats.stddev_ms);
  }

  // 4. Robust winner: interleaved re-measurement of the finalists.
  std::vector<std::size_t> finalists;
  if (settings.finalist_margin > 0.0 && best < kInf) {
    for (const CandidateReport& r : report.candidates) {
      if (r.measured() && r.stats.mean_ms <= best * (1.0 + settings.finalist_margin)) {
        finalists.push_back(r.index);
      }
    }
    std::stable_sort(finalists.begin(), finalists.end(), [&](std::size_t a, std::size_t b) {
      return report.candidates[a].stats.mean_ms < report.candidates[b].stats.mean_ms;
    });
    if (finalists.size() > std::max<std::size_t>(2, settings.max_finalists)) {
      finalists.resize(std::max<std::size_t>(2, settings.max_finalists));
    }
  }
  long long rounds = 0;
  if (finalists.size() >= 2) {
    rounds = settings.interleaved_rounds;
    for (std::size_t f : finalists) rounds = std::min(rounds, report.candidates[f].iterations);
    if (rounds < settings.min_interleaved_rounds) {
      // Slow problems: the budget allowed few profile calls. Still decide close calls on at
      // least min_interleaved_rounds interleaved samples; the slowest finalists leave until the
      // rounds fit max_interleaved_ms, but the two fastest are always re-measured.
      rounds = settings.min_interleaved_rounds;
      auto per_round_ms = [&] {
        double sum = 0.0;
        for (std::size_t f : finalists) sum += report.candidates[f].stats.mean_ms;
        return sum;
      };
      while (finalists.size() > 2 &&
             per_round_ms() * static_cast<double>(rounds) > settings.max_interleaved_ms) {
        finalists.pop_back();
      }
    }
    std::sort(finalists.begin(), finalists.end());  // registration order within a round
  }
  if (rounds >= 3) {
    report.interleaved = true;
    std::vector<std::vector<double>> round_medians(candidates.size());
    std::vector<bool> alive(candidates.size(), false);
    for (std::size_t f : finalists) {
      alive[f] = true;
      report.candidates[f].finalist = true;
    }
    for (long long round = 0; round < rounds; ++round) {
      for (std::size_t k = 0; k < finalists.size(); ++k) {
        const std::size_t f = finalists[(static_cast<std::size_t>(round) + k) % finalists.size()];
        if (!alive[f]) continue;
        CandidateReport& r = report.candidates[f];
        if (settings.settle) settings.settle();
        const long long calls = std::max<long long>(1, r.iterations / rounds);
        std::vector<double> round_samples;
        round_samples.reserve(static_cast<std::size_t>(calls));
        Status s = measure::time_calls(calls, call_of(*candidates[f]), before_call, welford[f],
                                       &round_samples, settings.clock);
        if (!s.is_ok()) {
          alive[f] = false;
          r.outcome = CandidateOutcome::kFailed;
          r.reason = "interleaved re-measure: " + s.message();
          r.status = std::move(s);
          r.score_ms = std::numeric_limits<double>::quiet_NaN();
          continue;
        }
        round_medians[f].push_back(median(round_samples));
        samples[f].insert(samples[f].end(), round_samples.begin(), round_samples.end());
      }
    }
    for (std::size_t f : finalists) {
      if (!alive[f]) continue;
      CandidateReport& r = report.candidates[f];
      r.interleaved_median_ms = median(round_medians[f]);
      r.score_ms = r.interleaved_median_ms;
      r.stats = measure::TimingStats::from(welford[f], samples[f]);
    }
  }

  for (const CandidateReport& r : report.candidates) {
    if (!r.measured()) continue;
    if (!report.winner || r.score_ms < report.candidates[*report.winner].score_ms) {
      report.winner = r.index;
    }
  }
  if (!report.winner) {
    const CandidateReport& d = report.candidates[0];
    report.status = Status(StatusCode::kRuntimeError,
                           problem + ": no candidate succeeded (Default: " +
                               (d.reason.empty() ? d.status.to_string() : d.reason) + ")");
    return finish();
  }
  const CandidateReport& w = report.candidates[*report.winner];
  report.winner_time_ms = w.stats.mean_ms;
  if (log::level() >= 2) {
    std::vector<const CandidateReport*> ranked;
    for (const CandidateReport& r : report.candidates) {
      if (r.measured()) ranked.push_back(&r);
    }
    std::sort(ranked.begin(), ranked.end(), [](const CandidateReport* a, const CandidateReport* b) {
      return a->score_ms < b->score_ms;
    });
    for (std::size_t k = 0; k < ranked.size() && k < 5; ++k) {
      log::info(2, "{}: top {} {} score {:.6g} ms (mean {:.6g} ms{})", problem, k + 1,
                ranked[k]->name, ranked[k]->score_ms, ranked[k]->stats.mean_ms,
                ranked[k]->finalist ? ", interleaved" : "");
    }
  }
  return finish();
}

}  // namespace tunekit
