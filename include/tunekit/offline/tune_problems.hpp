// Offline tuning of parsed GEMM problems in one process: each problem tuned with a GemmTunableOp
// (or found already tuned), and the report of the whole list (the CLI, local jobs, MPI ranks and
// the Python module all tune through tune_problems()).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/offline/report.hpp"
#include "tunekit/ops/gemm.hpp"

namespace tunekit::offline {

/// Progress callback: (problems done, problems in the list, the problem starting now).
using ProgressFn = std::function<void(std::size_t, std::size_t, const std::string&)>;
/// Called after each problem: (its index in the list, problems in the list, its outcome).
using FinishedFn = std::function<void(std::size_t, std::size_t, const ProblemOutcome&)>;

/// The text form of a parsed problem (its canonical signatures), as it travels between workers.
ProblemRef problem_ref(const ops::GemmParams& params);

/// Parses problems received in text form, once.
/// Errors: kParseError (or GemmParams::from_signature's code) naming the first bad problem.
Expected<std::vector<ops::GemmParams>> parse_problems(const std::vector<ProblemRef>& refs);

/// Tunes one parsed problem (its shapes; operand pointers are ignored) with `op` unless its
/// context already holds a result (then kCached), on operands filled from a fixed seed; the
/// leading dimensions are kept (padded operands are sub-matrix views of larger buffers). Fills
/// `result` (when not null) with the stored line of a tuned or cached problem. A problem whose
/// tuning would not fit in memory (its operands and every copy the tuning makes:
/// ops::gemm_tuning_bytes) fails before anything is allocated. Whether a tuned result was saved
/// comes from its TuneReport::not_saved: `saved` false and the reason in the note.
ProblemOutcome tune_problem(GemmTunableOp& op, const ops::GemmParams& problem, int rank,
                            ResultLine* result);

/// Tunes `problems` in order and returns the report of worker `rank`: host, thread count,
/// validators of `op`'s context, one outcome per problem and the results found. `progress` is
/// called before each problem, `finished` after it.
WorkerReport tune_problems(GemmTunableOp& op, std::span<const ops::GemmParams> problems, int rank,
                           const ProgressFn& progress = {}, const FinishedFn& finished = {});

}  // namespace tunekit::offline
