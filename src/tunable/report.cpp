// TuneReport accessors and the plain-text table.
// See include/tunekit/tunable/report.hpp.
#include "tunekit/tunable/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tunekit {

std::string_view to_string(CandidateOutcome outcome) noexcept {
  switch (outcome) {
    case CandidateOutcome::kMeasured:
      return "measured";
    case CandidateOutcome::kDisabled:
      return "disabled";
    case CandidateOutcome::kUnsupported:
      return "unsupported";
    case CandidateOutcome::kFailed:
      return "failed";
    case CandidateOutcome::kRejectedScreen1:
      return "rejected-screen1";
    case CandidateOutcome::kRejectedScreen2:
      return "rejected-screen2";
    case CandidateOutcome::kWrongResult:
      return "wrong-result";
  }
  return "unknown";
}

const CandidateReport* TuneReport::winner_report() const noexcept {
  return winner && *winner < candidates.size() ? &candidates[*winner] : nullptr;
}

const CandidateReport* TuneReport::default_report() const noexcept {
  return candidates.empty() ? nullptr : &candidates.front();
}

const CandidateReport* TuneReport::runner_up() const noexcept {
  const CandidateReport* best = nullptr;
  for (const CandidateReport& c : candidates) {
    if (!c.measured() || (winner && c.index == *winner)) continue;
    if (best == nullptr || c.score_ms < best->score_ms) best = &c;
  }
  return best;
}

double TuneReport::speedup_over_default() const noexcept {
  const CandidateReport* w = winner_report();
  const CandidateReport* d = default_report();
  if (w == nullptr || d == nullptr || !d->measured() || !(w->score_ms > 0.0)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return d->score_ms / w->score_ms;
}

std::string format_report(const TuneReport& report) {
  std::string out = fmt::format("{}({})\n", report.op_signature, report.params_signature);
  std::size_t width = 8;
  for (const CandidateReport& c : report.candidates) width = std::max(width, c.name.size());
  out += fmt::format("  {:<{}}  {:<16} {:>10} {:>10} {:>10} {:>9} {:>10} {:>6}  {}\n", "candidate",
                     width, "outcome", "mean_ms", "min_ms", "max_ms", "stddev", "score_ms", "calls",
                     "note");
  for (const CandidateReport& c : report.candidates) {
    const bool timed = c.stats.count > 0;
    auto num = [&](double v) { return timed ? fmt::format("{:.6g}", v) : std::string("-"); };
    // The ranked value: the interleaved median of a finalist ('i' after it), else the mean.
    const std::string score = !c.measured() || std::isnan(c.score_ms)
                                  ? std::string("-")
                                  : fmt::format("{:.6g}{}", c.score_ms, c.finalist ? "i" : "");
    std::string note = c.reason;
    if (c.contention > 0.01) {
      const std::string busy = fmt::format("profile contention {:.0f}%", 100.0 * c.contention);
      note = note.empty() ? busy : note + "; " + busy;
    }
    if (report.winner && *report.winner == c.index)
      note = note.empty() ? "winner" : "winner; " + note;
    out += fmt::format("  {:<{}}  {:<16} {:>10} {:>10} {:>10} {:>9} {:>10} {:>6}  {}\n", c.name,
                       width, to_string(c.outcome), num(c.stats.mean_ms), num(c.stats.min_ms),
                       num(c.stats.max_ms), num(c.stats.stddev_ms), score, c.stats.count, note);
  }
  if (const CandidateReport* w = report.winner_report()) {
    out += fmt::format("  winner {} {} ms", w->name, fmt::format("{:.6g}", report.winner_time_ms));
    if (const CandidateReport* d = report.default_report(); d != nullptr && d->measured()) {
      out += fmt::format("; Default {:.6g} ms; speed-up {:.3f}x", d->score_ms,
                         report.speedup_over_default());
    }
    if (const CandidateReport* r = report.runner_up()) {
      out += fmt::format("; runner-up {} {:.6g} ms", r->name, r->score_ms);
    }
    out += '\n';
    if (report.interleaved) {
      out += fmt::format("  interleaved rounds {} (clean blocks per finalist: at least {})",
                         report.rounds_run, report.min_clean_blocks);
    }
    if (report.contended) {
      out += fmt::format(
          "{}CONTENDED: {:.0f}% of the CPUs' time waited for a CPU while the "
          "winner was chosen; it may not hold on a quiet machine",
          report.interleaved ? "; " : "  ", 100.0 * report.contention);
    }
    if (report.interleaved || report.contended) out += '\n';
  } else {
    out += "  no winner: " + report.status.to_string() + '\n';
  }
  return out;
}

}  // namespace tunekit
