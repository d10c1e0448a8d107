// Offline tuning over forked local processes (`tune-file --jobs`, without MPI): running the jobs,
// each sending back its bytes, and recovering what a dead job's results file holds.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/offline/report.hpp"

namespace tunekit::offline {

/// What one job sent back.
struct JobOutput {
  std::string data;  ///< the bytes its worker returned (empty when it sent none)
  /// ok; else why the job sent nothing: "job 1 (pid 4242) was killed by signal 9 (Killed)",
  /// an exception its worker threw, or "job 2 could not be started" (kRuntimeError).
  Status status;
};

/// Runs `worker(job)` for job = 0..jobs-1, each in its own forked process, all at once, and
/// returns what each sent back, in job order. Fork before any library starts threads (the
/// parent only coordinates). A child that exits without sending its bytes (crash, kill, exit)
/// yields an error status and no data; its results file may still hold what it tuned
/// (recover_results()). The bytes' meaning is the caller's (distributed::encode of a
/// WorkerReport for tune-file).
/// Jobs end with their parent: each asks for SIGTERM when the thread that forked it ends
/// (PR_SET_PDEATHSIG, so even SIGKILL of the parent stops them) and checks that its parent is
/// still there; while the jobs run, a SIGTERM, SIGINT or SIGHUP to the parent (unless ignored)
/// is forwarded to every job, the jobs are reaped, and the parent then ends by the same signal.
std::vector<JobOutput> run_local_jobs(int jobs, const std::function<std::string(int job)>& worker);

/// Adds to a failed worker's report what its results file `path` holds for the problems of
/// `share`: validators, results, and "tuned (recovered from <path>)" outcomes. Returns how
/// many results were recovered (0 when the file is missing or unreadable).
std::size_t recover_results(WorkerReport& report, const std::string& path,
                            const std::vector<ProblemRef>& share);

}  // namespace tunekit::offline
