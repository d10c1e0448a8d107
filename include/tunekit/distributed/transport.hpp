// Moving offline-tuning work between workers: an MPI communicator (one rank per node or device,
// across machines as mpirun places them) or forked local processes for users without MPI.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/distributed/offline.hpp"

namespace tunekit::distributed {

/// One point-to-point message.
struct Message {
  int source = 0;  ///< sending rank
  int tag = 0;     ///< the sender's tag (>= 0)
  std::string data;
};

/// The operations distributed tuning needs: collectives (every rank calls them in the same
/// order) for offline tuning, point-to-point messages for remote measurement.
class Transport {
 public:
  virtual ~Transport() = default;
  /// This process's rank, 0 <= rank() < size(); rank 0 coordinates.
  virtual int rank() const = 0;
  /// Number of ranks.
  virtual int size() const = 0;
  /// Ranks running on the calling host (for the default per-rank thread count).
  virtual int local_size() const = 0;
  /// Sends rank 0's `data` to every rank (replacing theirs).
  /// Errors: kRuntimeError from the transport.
  virtual Status broadcast(std::string& data) = 0;
  /// Collects every rank's `mine` on rank 0 (index = rank); other ranks get an empty vector.
  /// Errors: kRuntimeError from the transport.
  virtual Expected<std::vector<std::string>> gather(const std::string& mine) = 0;
  /// Sends `data` to rank `dest` with `tag` (>= 0); returns once `data` may be reused.
  /// Errors: kInvalidArgument for a rank outside 0..size()-1; kRuntimeError from the transport.
  virtual Status send(int dest, int tag, const std::string& data) = 0;
  /// The next message from any rank when one has arrived, else nullopt; never blocks.
  /// Errors: kRuntimeError from the transport.
  virtual Expected<std::optional<Message>> try_receive() = 0;
  /// Waits for the next message from any rank.
  /// Errors: kRuntimeError from the transport.
  virtual Expected<Message> receive() = 0;
  /// Ends every rank's process with `code` (MPI_Abort), for when a rank stopped answering and
  /// a collective finalisation would wait for it forever.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// Whether this build has MPI support (TUNEKIT_WITH_MPI and OpenMPI found).
bool mpi_available() noexcept;

/// Initialises MPI (MPI_Init_thread, funneled) unless the program already did, and returns
/// MPI_COMM_WORLD as a Transport; destroying it finalises MPI if it was initialised here.
/// Run under `mpirun -n N` (root needs --allow-run-as-root; more ranks than cores need
/// --oversubscribe); started without mpirun it is a single rank.
/// Errors: kUnsupported in a build without MPI; kRuntimeError when MPI cannot start.
Expected<std::unique_ptr<Transport>> make_mpi_transport();

/// Runs `worker(job)` for job = 0..jobs-1, each in its own forked process, all at once, and
/// returns their reports in job order. Fork before any library starts threads (the parent only
/// coordinates). A child that exits without a report (crash, kill, exit) yields a report with
/// rank = job, status kRuntimeError ("job 1 (pid 4242) was killed by signal 9") and nothing
/// else; its results file may still hold what it tuned (recover_results()).
/// Jobs end with their parent: each asks for SIGTERM when the thread that forked it ends
/// (PR_SET_PDEATHSIG, so even SIGKILL of the parent stops them) and checks that its parent is
/// still there; while the jobs run, a SIGTERM, SIGINT or SIGHUP to the parent (unless ignored)
/// is forwarded to every job, the jobs are reaped, and the parent then ends by the same signal.
std::vector<WorkerReport> run_local_jobs(int jobs,
                                         const std::function<WorkerReport(int job)>& worker);

/// Adds to a failed worker's report what its results file `path` holds for the problems of
/// `share`: validators, results, and "tuned (recovered from <path>)" outcomes. Returns how
/// many results were recovered (0 when the file is missing or unreadable).
std::size_t recover_results(WorkerReport& report, const std::string& path,
                            const std::vector<ProblemRef>& share);

}  // namespace tunekit::distributed
