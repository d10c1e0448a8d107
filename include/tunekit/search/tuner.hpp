// Tuner: AutoTVM's tuning loop (batching, error counting, best tracking, early stopping, error
// threshold) over a SearchStrategy, with a measurement cache, stop conditions and callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/search/strategy.hpp"

namespace tunekit {

class Tuner;

/// Called after every batch with the inputs measured in it and their results (configurations
/// served from the measurement cache are not passed again). AutoTVM callback(tuner, inputs,
/// results).
using TuneCallback = std::function<void(const Tuner&, std::span<const MeasureInput>,
                                        std::span<const MeasureResult>)>;

/// Settings of one Tuner::tune call.
struct TuneOptions {
  /// Stop after this many measured (unique) configurations.
  std::size_t n_trial = 0;
  /// Builder and runner. Batch size is measure.batch_size() unless `batch_size` is set.
  MeasureOptions measure;
  /// Stop when this many trials passed without improving the best (AutoTVM early_stopping;
  /// checked per batch, so it can overshoot by a batch). nullopt = off.
  std::optional<std::size_t> early_stopping;
  /// Stop once the runner's clock (Runner::clock_s: wall time, or simulated time for replay)
  /// has advanced this many seconds since the start of tune(). nullopt = off.
  std::optional<double> time_budget_s;
  /// Overrides the batch size of `measure`.
  std::optional<std::size_t> batch_size;
  /// Consecutive failed trials after which the loop warns once, "Too many errors happen in the
  /// tuning. Switching to debug mode." (AutoTVM set_error_threshold, default 150).
  std::size_t error_threshold = 150;
  /// Called in order after every batch.
  std::vector<TuneCallback> callbacks;
};

/// Why tune() returned.
enum class StopReason : std::uint8_t {
  kTrialCount,     ///< n_trial measurements done
  kEarlyStopping,  ///< no improvement for early_stopping trials
  kTimeBudget,     ///< time_budget_s spent
  kExhausted,      ///< the strategy had nothing left to propose
  kRequested,      ///< a callback called request_stop()
};

/// Human-readable name of a StopReason ("trial count", ...).
std::string_view to_string(StopReason reason) noexcept;

/// Runs a SearchStrategy against a task (AutoTVM Tuner).
///
/// Loop semantics follow autotvm.md §8.1 with two deliberate differences: a configuration the
/// strategy proposes again is served from the measurement cache and is not a trial (trials
/// count unique configurations, as in Schoonhoven et al.), and n_trial = 0 measures nothing and
/// warns nothing. Best tracking is strict (a later equal score does not replace the best);
/// failures never become the best.
class Tuner {
 public:
  /// `task.space` must be set; the strategy is initialised on it with `seed`.
  /// Errors: throws Error(kInvalidArgument) when the task has no space or the strategy refuses it.
  Tuner(std::shared_ptr<const Task> task, std::unique_ptr<SearchStrategy> strategy,
        std::uint64_t seed = 0);

  /// Runs the tuning loop; returns why it stopped. Can be called again to continue.
  StopReason tune(const TuneOptions& options);

  /// Feeds earlier measurements to the strategy. Trials of this task's space also fill the
  /// measurement cache and the best (resume); trials of other spaces (other workloads of the
  /// template) only reach the strategy (transfer learning).
  void load_history(std::span<const Trial> trials);

  /// Asks the loop to stop after the current batch (callbacks receive a const Tuner&).
  void request_stop() const noexcept { stop_requested_ = true; }

  const Task& task() const noexcept { return *task_; }
  std::shared_ptr<const Task> task_ptr() const noexcept { return task_; }
  SearchStrategy& strategy() noexcept { return *strategy_; }
  /// Measured trials so far, in measurement order (unique configurations).
  const std::vector<Trial>& trials() const noexcept { return trials_; }
  /// True once a successful trial exists.
  bool has_best() const noexcept { return best_index_.has_value(); }
  /// The best trial. Precondition: has_best().
  const Trial& best() const { return trials_.at(*best_index_); }
  /// Best score (0 before any success): FLOP/s when the task has FLOPs, else 1/seconds.
  double best_score() const noexcept { return best_score_; }
  /// 0-based trial number of the best among all trials (AutoTVM best_iter; 0 before any
  /// success). Early stopping counts from max(best_iter, trials before this tune call).
  std::size_t best_iter() const noexcept { return best_iter_; }
  /// Consecutive failed trials at the end of the last batch.
  std::size_t error_count() const noexcept { return error_ct_; }
  /// The score of a result for this task (see Trial::score).
  double score_of(const MeasureResult& result) const noexcept;

 private:
  /// After a tune call whose `measured` trials (from trials_[first]) all failed: AutoTVM's
  /// "Could not find any valid schedule" warning, or, when an earlier trial holds the best, a
  /// warning that says the best is still that one.
  void warn_if_all_failed(std::size_t first, std::size_t measured) const;

  std::shared_ptr<const Task> task_;
  std::unique_ptr<SearchStrategy> strategy_;
  std::vector<Trial> trials_;
  std::unordered_map<std::uint64_t, std::size_t> measured_;  // config index -> trials_ slot
  std::optional<std::size_t> best_index_;
  double best_score_ = 0.0;
  std::size_t best_iter_ = 0;
  std::size_t error_ct_ = 0;
  bool warned_errors_ = false;
  mutable bool stop_requested_ = false;
};

/// AutoTVM progress_bar: prints, with '\r', after every batch,
/// `<prefix> Current/Best: %7.2f/%7.2f GFLOPS | Progress: (ct/total) | %.2f s`
/// (for tasks without FLOPs: `Current/Best: %7.4f/%7.4f ms`, the last successful and the best
/// mean time). Current is the last successful result of the batch, else 0. The time is
/// measured from construction; " Done.\n" is printed when the returned callback's state is
/// destroyed (after the last copy is gone). Nothing is printed when `out` is null.
/// `si_prefix` is one of "", "K", "M", "G", "T" (scale 1e0..1e12).
TuneCallback progress_bar(std::size_t total, std::string prefix = "", std::string si_prefix = "G",
                          std::FILE* out = stdout);

}  // namespace tunekit
