// Offline tuning of GEMM problems in one process: tunes a share of problems with a GemmTunableOp
// and reports every outcome and result (the same code serves tune-file, local jobs and MPI
// ranks; distributed/offline.hpp splits the problems and gathers the reports).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::ops {

/// One problem of an offline tuning job as it travels between workers.
struct ProblemRef {
  std::string op_signature;      ///< e.g. "GemmTunableOp_float_TN"
  std::string params_signature;  ///< e.g. "tn_4096_16_4096_ld_4096_4096_4096"
  friend bool operator==(const ProblemRef&, const ProblemRef&) = default;
};

/// What happened to one problem on a worker.
struct ProblemOutcome {
  /// How the problem ended.
  enum class Kind : std::uint8_t {
    kTuned = 0,   ///< tuned now
    kCached = 1,  ///< a result existed already (not re-tuned)
    kFailed = 2,  ///< not tuned: `note` says why
  };
  std::string op_signature;
  std::string params_signature;
  Kind kind = Kind::kFailed;
  std::string winner;                                            ///< solution name (tuned, cached)
  double time_ms = std::numeric_limits<double>::quiet_NaN();     ///< winner's mean per call
  double default_ms = std::numeric_limits<double>::quiet_NaN();  ///< Default's mean (tuned)
  std::string runner_up;                                         ///< second best (tuned)
  double runner_up_ms = std::numeric_limits<double>::quiet_NaN();
  double flops = 0;   ///< operations per call
  std::string note;   ///< "tuned", "tuned, NOT SAVED: <reason>", "already tuned", or the failure
  int rank = 0;       ///< worker that handled it
  bool saved = true;  ///< false: tuned, but the result could not be written to the results file
};

/// Everything a worker sends back.
struct WorkerReport {
  int rank = 0;                            ///< the worker's rank / job index
  std::string host;                        ///< host name
  int threads = 0;                         ///< thread count it tuned with
  Status status;                           ///< setup or transport failure (its share is lost)
  std::vector<ValidatorEntry> validators;  ///< its environment (validator lines)
  std::vector<ResultLine> results;         ///< a result for each tuned or cached problem
  std::vector<ProblemOutcome> outcomes;    ///< one per problem of its share
};

/// Expands file arguments: an existing path stays as it is; an argument with glob characters
/// (`*`, `?`, `[`) is expanded (sorted, regular files only), e.g. 'tunekit_untuned?.csv'.
/// Duplicate paths are dropped. Errors: kNotFound naming the argument when it is missing or
/// its pattern matches nothing.
Expected<std::vector<std::string>> expand_file_patterns(const std::vector<std::string>& args);

/// Progress callback: (problems done, problems in the share, the problem starting now).
using ProgressFn = std::function<void(std::size_t, std::size_t, const std::string&)>;
/// Called after each problem: (its index in the share, problems in the share, its outcome).
using FinishedFn = std::function<void(std::size_t, std::size_t, const ProblemOutcome&)>;

/// Tunes one problem with `op` unless its context already holds a result (then kCached), on
/// operands filled from a fixed seed; the leading dimensions of the signature are kept (padded
/// operands are sub-matrix views of larger buffers). Fills `result` (when not null) with the
/// stored line of a tuned or cached problem. A problem whose tuning would not fit in memory (its
/// operands and every copy the tuning makes: ops::gemm_tuning_bytes) fails before anything is
/// allocated. A tuned result that could not be written to the context's results file (a full
/// disk, a removed folder, a rejected file) has `saved` false and the reason in its note.
ProblemOutcome tune_problem(GemmTunableOp& op, const ProblemRef& problem, int rank,
                            ResultLine* result);

/// Tunes `problems` in order and returns the report of worker `rank`: host, thread count,
/// validators of `op`'s context, one outcome per problem and the results found. `progress` is
/// called before each problem, `finished` after it.
WorkerReport tune_share(GemmTunableOp& op, const std::vector<ProblemRef>& problems, int rank,
                        const ProgressFn& progress = {}, const FinishedFn& finished = {});

/// This host's name ("" when unknown).
std::string host_name();

}  // namespace tunekit::ops
