// tune_kernel: tunes one kernel spec end to end (builder, runner, strategy, log, resume) and
// returns the best configuration, every trial and why the run stopped.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/kernel/kernel_spec.hpp"
#include "tunekit/records/record_store.hpp"
#include "tunekit/search/tuner.hpp"

namespace tunekit {

/// Options of tune_kernel beyond the spec (override spec fields by editing the KernelSpec).
struct KernelTuneOptions {
  /// AutoTVM progress bar (search/tuner.hpp progress_bar) written here; null = quiet.
  std::FILE* progress = nullptr;
  /// Load the log's records of this task first: they are neither measured nor proposed again
  /// and count toward the trial budget.
  bool resume = true;
  /// Called after every batch, after the log was written.
  std::vector<TuneCallback> callbacks;
  /// Measures the configurations instead of the spec's builder and runner (e.g. a
  /// distributed::RemoteRunner whose ranks build, verify and run); null = the spec's.
  std::shared_ptr<Runner> runner;
  /// A run whose records did not all reach the log fails (kIoError, unsaved_records_status)
  /// when true; when false it returns its result with KernelTuneResult::unsaved set, for a
  /// caller that reports the run before failing (the tune-kernel command).
  bool fail_on_unsaved = true;
};

/// The outcome of tune_kernel.
struct KernelTuneResult {
  /// The tuned task; the configurations of `trials` and `best` point into its space.
  std::shared_ptr<const Task> task;
  /// Every trial of the task: the log's first (resumed), then this run's, in measurement order.
  std::vector<Trial> trials;
  /// Trials read from the log (the first `resumed` of `trials`).
  std::size_t resumed = 0;
  /// The best successful trial (resumed ones included); nullopt when every trial failed.
  std::optional<Trial> best;
  /// Why the run stopped (kTrialCount also when the log already held the budget).
  StopReason stop_reason = StopReason::kTrialCount;
  /// Wall seconds of this run.
  double wall_s = 0.0;
  /// Records of this run that could not be appended to the log (lost), and why.
  UnsavedRecords unsaved;
};

/// Tunes `spec`: the Task of make_kernel_task, make_kernel_builder(spec.source, spec.build),
/// the reference built first when the spec names one (a configuration or a kernel), then
/// make_kernel_runner with the spec's isolation, timing and verification; the spec's strategy
/// and seed; records appended to spec.log_path (its directory created); resume from it.
/// Budget: spec.budget.trials (default kDefaultKernelTrials) counts the log's trials of the task
/// too, seconds and early stopping count this run only; the run also ends when the strategy
/// has proposed every valid configuration.
/// Errors: those of make_kernel_builder / make_kernel_runner / make_strategy; kCompileError
///   naming the reference when it does not build; resume_from_log's (a log written for another
///   definition of the space: kInvalidArgument naming the log); kIoError when records of the
///   run could not be appended to the log (a full disk, a file size limit), unless
///   options.fail_on_unsaved is false. Failed configurations are trials, not errors.
Expected<KernelTuneResult> tune_kernel(const KernelSpec& spec, const KernelTuneOptions& options);

/// The spec's builder and runner for `task` (make_kernel_task(spec)), with the verification
/// reference built first when the spec names one: what tune_kernel measures with.
/// Errors: as tune_kernel's setup (builder, reference, runner).
Expected<MeasureOptions> make_kernel_measure(const KernelSpec& spec,
                                             const std::shared_ptr<const Task>& task);

}  // namespace tunekit
