// Re-timing of one GEMM problem for `tunekit compare`: every supported candidate alone and the
// tuned dispatch, interleaved, then the tuned dispatch head to head with the fastest of them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/ops/gemm.hpp"

namespace tunekit::cli {

/// How `tunekit compare` times a problem.
struct CompareOptions {
  int repeats = 5;        ///< interleaved repeats of every contender (median taken)
  int head_to_head = 10;  ///< rounds alternating the tuned dispatch and the best single
  /// Further head-to-head rounds, up to 4 x head_to_head, while the rounds so far took less than
  /// this (ms): a fast problem's paired ratio gets more rounds where they are cheap.
  double head_to_head_ms = 4000.0;
  double sample_ms = 20.0;         ///< time per contender per repeat; calls are sized to it (1-200)
  bool flush = true;               ///< flush the operands from the data cache before each call
  std::size_t rotating_bytes = 0;  ///< rotating-buffer size (as in tuning), at most 64 copies
};

/// One timed contender: a candidate of the op, or the op's own dispatch.
struct Contender {
  static constexpr int kTuned = -1;  ///< `index` of the tuned dispatch
  int index = 0;                     ///< candidate index, or kTuned
  std::string name;                  ///< candidate name, or "tuned (<solution>)"
  std::string library;               ///< Candidate::library() ("native": tunekit's own kernels)
  int calls = 1;                     ///< calls per sample (0: its first call failed)
  std::vector<double> samples;       ///< per sample: the median per-call ms
  /// Per interleaved repeat: that repeat's sample, NaN when it failed (pairs repeats across
  /// contenders).
  std::vector<double> repeat_ms;
  /// Median of the interleaved repeats only (the same footing for every contender), ms.
  double repeats_median_ms = 0.0;
  /// Median of all samples (the head-to-head rounds included for the tuned and best), ms.
  double median_ms = 0.0;
};

/// What compare measured on one problem.
/// Units: milliseconds per call; ratios are tuned time / other time.
struct ProblemComparison {
  std::vector<Contender> contenders;  ///< supported candidates in list order, the tuned last
  std::optional<std::size_t> best;    ///< fastest single candidate (index into contenders)
  /// Median of the paired per-round ratios tuned / best (repeats medians without rounds).
  double tuned_over_best = 0.0;

  const Contender& tuned() const { return contenders.back(); }
  /// `c`'s time over the tuned dispatch's, paired repeat by repeat (both ran in the same
  /// rounds, so host drift cancels out): the median of the per-repeat ratios; NaN when no repeat
  /// has both.
  double paired_ratio_to_tuned(const Contender& c) const;
  /// The Default contender, or nullptr when Default could not run.
  const Contender* default_contender() const;
};

/// Times `shape` as described in docs/performance.md ("Interleaved re-timing"): operands in
/// rotating copies (seeded fresh data), every contender sized to `sample_ms` per sample, thread
/// pools settled before each sample, `repeats` interleaved rounds with the order rotated, then
/// `head_to_head` rounds of the tuned dispatch against the best single candidate.
/// `solution` is the stored winner's name (for the label only); the op must hit for `shape`.
/// Errors: kResourceExhausted (or the workspace's error) when the operands cannot be allocated.
Expected<ProblemComparison> compare_problem(GemmTunableOp& op, const ops::GemmParams& shape,
                                            const std::string& solution,
                                            const CompareOptions& options);

}  // namespace tunekit::cli
