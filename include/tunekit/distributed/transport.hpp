// Moving offline-tuning work between workers: an MPI communicator (one rank per node or device,
// across machines as mpirun places them); forked local processes are offline/local_jobs.hpp.
#pragma once

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

}  // namespace tunekit::distributed
