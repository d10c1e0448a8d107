// Strategy evaluation on brute-forced data: replayed runs (traces), fraction of optimum, and the
// methodology score of Willemsen et al. (random-search baseline computed analytically).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/simulated_runner.hpp"

namespace tunekit {

/// One replayed tuning run: for each unique evaluation, in order, the simulated clock after it
/// (seconds) and the recorded objective (ms; NaN for a failed configuration).
struct ReplayTrace {
  std::vector<double> clock_s;
  std::vector<double> time_ms;
  /// Wall seconds the run took (strategy and replay, excluding data loading).
  double wall_s = 0.0;

  /// Best objective among the first `n` evaluations (ms); NaN when none succeeded.
  double best_after(std::size_t n) const noexcept;
  /// Best objective among evaluations finished by simulated time `t_s`; NaN when none.
  double best_at_clock(double t_s) const noexcept;
};

/// Fraction of optimum after `evaluations` unique evaluations, averaged over runs:
/// mean of t_opt / t_best (0 for a run without a success), t_opt the data's optimum.
/// Source: Schoonhoven et al., IEEE TEVC 2022 (peers.md §D1).
double fraction_of_optimum(const ReplayData& data, std::span<const ReplayTrace> runs,
                           std::size_t evaluations);
/// The same per run: t_opt / t_best after `evaluations` (0 for a run without a success).
std::vector<double> fraction_of_optimum_per_run(const ReplayData& data,
                                                std::span<const ReplayTrace> runs,
                                                std::size_t evaluations);

/// Settings of the methodology score (Willemsen et al., FGCS 2024; peers.md §D2).
struct MethodologySettings {
  /// p of the target t* = t_opt + (t_median - t_opt) * (1 - p) that ends the budget.
  double cutoff_percentile = 0.95;
  /// p of the target that starts the scored range.
  double cutoff_percentile_start = 0.01;
  /// Points of the grid the score averages over.
  std::size_t resolution = 1000;
  /// What the budget counts: simulated time (the recorded compile, benchmark and framework times
  /// charged per evaluation, as the reference software does) or unique evaluations (the scored
  /// range is fevals(cutoff_percentile_start) to fevals evaluations and the random baseline makes
  /// one draw per evaluation), so that neither tool's time accounting enters the score.
  enum class Axis { kTime, kEvaluations } axis = Axis::kTime;
};

/// The time budget the methodology derives from the data.
struct MethodologyBudget {
  double target_ms = 0.0;  ///< t* of cutoff_percentile
  std::uint64_t fevals =
      0;  ///< ceil(i / (N + 1 - i)), i = valid configs worse than t*, N = valid configs
  double median_total_s = 0.0;     ///< median recorded time of one evaluation (all time keys)
  std::uint64_t start_fevals = 0;  ///< fevals of cutoff_percentile_start
  double start_s = 0.0;            ///< fevals(cutoff_percentile_start) * median_total_s
  double end_s = 0.0;              ///< fevals * median_total_s
  double time_per_feval_s = 0.0;   ///< median over valid + fraction failed * median over failed
};

/// The budget of `data` under `settings`.
MethodologyBudget methodology_budget(const ReplayData& data,
                                     const MethodologySettings& settings = {});

/// Expected best objective (ms) of random search without replacement after `draws` draws,
/// computed analytically: the value at position round(M (N+1) / (M+1)) (capped at N-1) of all
/// N recorded configurations ordered failed first, then worst to best.
double random_search_expected_ms(const ReplayData& data, std::uint64_t draws);

/// Methodology score of a set of runs: the mean over a grid of `resolution` times x in
/// [start_s, end_s] of (f_s(x) - f_r(x)) / (f_opt - f_r(x)), where f_r(x) is the random
/// baseline at M = max(round(x / time_per_feval_s), 1) draws, and f_s(x) the value at the mean
/// position (same order as the baseline) of the runs' best objective found by simulated time x
/// (a run with no success yet counts the baseline's one-draw position). Averaging positions,
/// not values, matches the baseline (a value at an expected position) and upstream, which fits
/// positions by isotonic regression. 0 = random search, 1 = optimum at once, < 0 = worse than
/// random. Points where f_r == f_opt are skipped. Runs should last at least end_s.
/// With Axis::kEvaluations the grid is x in [start_fevals, fevals] evaluations, f_r(x) is the
/// baseline at M = max(round(x), 1) draws and f_s(x) uses each run's best among its first M
/// evaluations (a run that stopped earlier keeps its last best); runs should last fevals.
double methodology_score(const ReplayData& data, std::span<const ReplayTrace> runs,
                         const MethodologySettings& settings = {});

/// Settings of simulate_strategy.
struct SimulationOptions {
  std::string strategy = "auto";
  nlohmann::json settings = nlohmann::json::object();
  /// Each run lasts at least this many unique evaluations...
  std::size_t evaluations = 200;
  /// ...and at least this much simulated time (0 = no time requirement), unless the space is
  /// exhausted first.
  double time_s = 0.0;
  std::size_t runs = 50;
  /// Run r uses seed `seed + r`.
  std::uint64_t seed = 0;
  std::size_t batch_size = 1;
  /// Worker threads over runs (results do not depend on it).
  unsigned threads = 1;
};

/// Replays `options.runs` tuning runs of a strategy on `data` with SimulatedRunner.
/// Errors: kNotFound / kInvalidArgument from make_strategy.
Expected<std::vector<ReplayTrace>> simulate_strategy(std::shared_ptr<const ReplayData> data,
                                                     const SimulationOptions& options);

}  // namespace tunekit
