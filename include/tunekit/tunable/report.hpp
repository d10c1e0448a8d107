// TuneReport: what find_fastest did for one problem (every candidate's outcome and timings, the
// winner, Default and the runner-up), plus a plain-text table for the CLI and logs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/tunable/results_manager.hpp"
#include "tunekit/tunable/tolerance.hpp"

namespace tunekit {

/// What happened to one candidate during tuning.
enum class CandidateOutcome : std::uint8_t {
  kMeasured = 0,     ///< fully profiled; `stats` holds its final timings
  kDisabled,         ///< its library is disabled (TUNEKIT_<LIBRARY>_ENABLED=0)
  kUnsupported,      ///< supports() said kUnsupported
  kFailed,           ///< prepare/probe/screen/warmup/profile returned an error (status says which)
  kRejectedScreen1,  ///< slower than 1.5x the best after the 3-call screen
  kRejectedScreen2,  ///< slower than 1.15x the best after the 10-call screen
  kWrongResult,      ///< output differs from Default's beyond the tolerance (or NaN)
};

/// Stable lower-case name ("measured", "disabled", "unsupported", "failed", "rejected-screen1",
/// "rejected-screen2", "wrong-result").
std::string_view to_string(CandidateOutcome outcome) noexcept;

/// One candidate's line of the report.
/// Units: milliseconds per call (steady clock).
struct CandidateReport {
  std::size_t index = 0;  ///< position in the candidate list (0 = Default)
  std::string name;       ///< solution name
  std::string library;    ///< Candidate::library()
  CandidateOutcome outcome = CandidateOutcome::kFailed;  ///< what happened
  Status status;       ///< the failure (kUnsupported, kRuntimeError, kWrongResult, ...)
  std::string reason;  ///< why it was skipped or rejected, for people
  double probe_ms = std::numeric_limits<double>::quiet_NaN();  ///< first timed call
  measure::TimingStats stats;       ///< final profile (+ interleaved calls); screens if rejected
  long long warmup_iterations = 0;  ///< untimed warmup calls before the profile
  long long iterations = 0;         ///< timed calls of the final profile
  bool finalist = false;            ///< re-measured in the interleaved pass
  double interleaved_median_ms = std::numeric_limits<double>::quiet_NaN();
  /// The value candidates are ranked by: the interleaved median for finalists, else the mean.
  double score_ms = std::numeric_limits<double>::quiet_NaN();
  /// CPU contention during its final profile (measure::contention: share of the CPUs' time lost
  /// to waiting for a CPU), 0-1.
  double contention = 0.0;
  /// For a template candidate (TemplateCandidate): `name` is the configuration its search
  /// chose; configurations measured (seeds included), seeds, and the search's wall time in ms.
  std::size_t search_trials = 0;
  std::size_t search_seeds = 0;
  double search_ms = 0.0;

  bool measured() const noexcept { return outcome == CandidateOutcome::kMeasured; }
};

/// The result of tuning one problem.
struct TuneReport {
  std::string op_signature;                 ///< e.g. "GemmTunableOp_float_NN"
  std::string params_signature;             ///< e.g. "nn_64_64_64_ld_64_64_64"
  Status status;                            ///< ok when a winner was found
  std::vector<CandidateReport> candidates;  ///< registration order, one per candidate
  std::optional<std::size_t> winner;        ///< index into `candidates`
  /// The winner's score (the value it was ranked by: its interleaved median when it was a
  /// finalist, else its profile mean); written to the results file.
  double winner_time_ms = std::numeric_limits<double>::quiet_NaN();
  bool interleaved = false;  ///< the interleaved re-measurement ran
  /// Interleaved rounds run, and the fewest clean blocks (contention at most
  /// TuningSettings::max_contention) any surviving finalist had; rounds are added while a
  /// finalist lacks clean blocks, and scores use the clean ones when there are enough.
  int rounds_run = 0;
  int min_clean_blocks = 0;
  /// The contention of the timings the winner was chosen by (the interleaved rounds the scores
  /// used, or the winner's profile when there was no interleaved pass), 0-1.
  double contention = 0.0;
  /// contention exceeded TuningSettings::max_contention: the choice was made while other work
  /// held the CPUs and may not hold on a quiet machine.
  bool contended = false;
  std::size_t rotating_copies = 1;
  double timer_overhead_ms = 0.0;       ///< cost of one empty timed call (not subtracted)
  std::string cache_flush_method;       ///< "clflushopt", "clflush", ..., or "off"
  std::optional<Tolerance> tolerance;   ///< used by the numerical check (nullopt: check off)
  std::optional<ResultEntry> previous;  ///< tune(): the result stored before this tuning
  bool persisted = false;               ///< the winner was added as a new result
  /// Why the new result did not reach the results file or the tuning database (it stays in
  /// memory); ok when it was saved, or when nothing was to be written.
  Status not_saved;
  double wall_ms = 0.0;  ///< whole tuning, untimed calls and flushes included

  /// The winner's line, or nullptr.
  const CandidateReport* winner_report() const noexcept;
  /// Default's line (index 0), or nullptr when there are no candidates.
  const CandidateReport* default_report() const noexcept;
  /// The best measured candidate other than the winner (by score_ms), or nullptr.
  const CandidateReport* runner_up() const noexcept;
  /// Default's score / the winner's score (> 1: the winner is faster); NaN when either is
  /// missing. Scores, not means: the ratio compares the values the ranking used.
  double speedup_over_default() const noexcept;
};

/// A fixed-width table: one row per candidate (name, outcome, score, mean/min/max/stddev ms,
/// calls, reason), then the winner, its score, Default's score, the runner-up's score and the
/// speed-up. Every time on the last line is a score, so the runner-up is never shown faster
/// than the winner.
std::string format_report(const TuneReport& report);

}  // namespace tunekit
