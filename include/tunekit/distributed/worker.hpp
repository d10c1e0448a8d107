// The offline-tuning worker: tunes its share of GEMM problems with a GemmTunableOp and reports
// every outcome and result (the same code serves a single process, local jobs and MPI ranks).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tunekit/distributed/offline.hpp"
#include "tunekit/ops/gemm.hpp"

namespace tunekit::distributed {

/// Progress callback: (problems done, problems in the share, the problem starting now).
using ProgressFn = std::function<void(std::size_t, std::size_t, const std::string&)>;

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
/// validators of `op`'s context, one outcome per problem and the results found.
WorkerReport tune_share(GemmTunableOp& op, const std::vector<ProblemRef>& problems, int rank,
                        const ProgressFn& progress = {});

/// This host's name ("" when unknown).
std::string host_name();

}  // namespace tunekit::distributed
