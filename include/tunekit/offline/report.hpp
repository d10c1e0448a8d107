// What offline tuning reports: a problem as it travels between workers (its signatures), what
// happened to each problem, and a worker's whole report (host, environment, results, outcomes).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::offline {

/// One problem of an offline tuning job as it travels between workers (its text form; workers
/// parse it once, parse_problems()).
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
  double flops = 0;  ///< operations per call
  std::string note;  ///< "tuned", "tuned, NOT SAVED: <reason>", "already tuned", or the failure
  int rank = 0;      ///< worker that handled it
  /// false: tuned, but the result did not reach the results file or the tuning database
  /// (TuneReport::not_saved of its tuning).
  bool saved = true;
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

}  // namespace tunekit::offline
