// Offline tuning split over workers (MPI ranks or local processes): round-robin shares, the wire
// form of per-worker reports, and gathering results into the _full files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/offline_tuning.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::distributed {

// The single-process pieces every worker runs (ops/offline_tuning.hpp).
using ops::expand_file_patterns;
using ops::FinishedFn;
using ops::host_name;
using ops::ProblemOutcome;
using ops::ProblemRef;
using ops::ProgressFn;
using ops::tune_problem;
using ops::tune_share;
using ops::WorkerReport;

/// Serialises a report (line-based, tab-separated, escaped; any bytes round-trip).
std::string encode(const WorkerReport& report);
/// Parses encode()'s output. Errors: kParseError naming the record.
Expected<WorkerReport> decode_report(std::string_view text);

/// Serialises a problem list (one "op,params" line each).
std::string encode_problems(const std::vector<ProblemRef>& problems);
/// Parses encode_problems()'s output. Errors: kParseError naming the line.
Expected<std::vector<ProblemRef>> decode_problems(std::string_view text);

/// Indices i < count with i mod ranks == rank (round-robin assignment, as upstream).
std::vector<std::size_t> round_robin_share(std::size_t count, int ranks, int rank);

/// A worker's own results file: insert_device_ordinal(base, rank) ("tunekit_results1.csv").
std::string worker_results_name(std::string_view base, int rank);
/// The gathered file number i: "_full<i>" where the ordinal goes ("tunekit_results.csv" ->
/// "tunekit_results_full0.csv"; "res_%d.csv" -> "res__full0.csv"). Only the ordinal is replaced
/// in the copies (upstream replaced every '0' of the name).
std::string full_results_name(std::string_view base, int index);

/// The gathered state of all workers.
struct GatherSummary {
  std::vector<ValidatorEntry> validators;  ///< the reference environment (lowest healthy rank)
  int reference_rank = -1;                 ///< -1: no worker reported an environment
  std::vector<ResultLine> results;         ///< merged results of agreeing ranks (first wins)
  std::vector<int> merged_ranks;           ///< ranks whose results were merged
  std::vector<int> failed_ranks;           ///< ranks whose status is an error
  std::vector<int> mismatched_ranks;       ///< ranks whose validators differ (kept apart)
  std::vector<std::string> messages;       ///< one line per failed or mismatched rank
  std::vector<ProblemOutcome> outcomes;    ///< every outcome, ordered as the problem list
};

/// Merges reports. The reference environment is that of the lowest rank without an error;
/// ranks whose validators differ from it are listed in mismatched_ranks and their results are
/// not merged (they stay in their own files). A failed rank is listed with its reason; the
/// results it did report (e.g. recovered from its file) are merged when its environment agrees,
/// and the rest of its share (recomputed from `problems` round-robin over `ranks`) is reported
/// as not tuned.
GatherSummary gather_reports(std::vector<WorkerReport> reports,
                             const std::vector<ProblemRef>& problems, int ranks);

/// Writes the gathered file `full_results_name(base, 0)` and identical copies for 1..copies-1:
/// the reference validators, then the results of an existing _full0 file with the same
/// validators (kept: first wins), then `summary.results`, each group sorted by (op, params).
/// Errors: kValidatorMismatch when an existing _full0 file has other validators (it is left
/// untouched, nothing is written); kIoError; kInvalidArgument when no environment is known.
Status write_full_files(std::string_view base, int copies, const GatherSummary& summary,
                        std::vector<std::string>* written = nullptr);

}  // namespace tunekit::distributed
