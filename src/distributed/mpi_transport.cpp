// The MPI transport (compiled with MPI when TUNEKIT_WITH_MPI found it, else a stub).
// See include/tunekit/distributed/transport.hpp.
#include "tunekit/distributed/transport.hpp"

#if defined(TUNEKIT_HAVE_MPI)
#include <mpi.h>

#include <climits>
#include <cstdlib>
#endif

namespace tunekit::distributed {

#if defined(TUNEKIT_HAVE_MPI)
namespace {

Status mpi_error(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return Status(StatusCode::kRuntimeError, std::string("MPI: ") + what + " failed: " +
                                               std::string(text, static_cast<std::size_t>(length)));
}

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(bool owns) : owns_(owns) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local) ==
        MPI_SUCCESS) {
      MPI_Comm_size(local, &local_size_);
      MPI_Comm_free(&local);
    }
  }
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }

  Status broadcast(std::string& data) override {
    unsigned long long length = data.size();
    if (int rc = MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Bcast", rc);
    }
    if (length > static_cast<unsigned long long>(INT_MAX)) {
      return Status(StatusCode::kRuntimeError, "MPI: broadcast of more than 2 GiB");
    }
    data.resize(static_cast<std::size_t>(length));
    if (length == 0) return Status::ok();
    if (int rc = MPI_Bcast(data.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Bcast", rc);
    }
    return Status::ok();
  }

  Expected<std::vector<std::string>> gather(const std::string& mine) override {
    if (mine.size() > static_cast<std::size_t>(INT_MAX)) {
      return Status(StatusCode::kRuntimeError, "MPI: gather of more than 2 GiB");
    }
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
    if (int rc = MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Gather", rc);
    }
    std::vector<int> offsets(lengths.size());
    long long total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = static_cast<int>(total);
      total += lengths[i];
    }
    if (total > INT_MAX) return Status(StatusCode::kRuntimeError, "MPI: gather of more than 2 GiB");
    std::string all(static_cast<std::size_t>(total), '\0');
    if (int rc = MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Gatherv", rc);
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
    }
    return out;
  }

  Status send(int dest, int tag, const std::string& data) override {
    if (dest < 0 || dest >= size_) {
      return Status(
          StatusCode::kInvalidArgument,
          "MPI: no rank " + std::to_string(dest) + " (ranks 0.." + std::to_string(size_ - 1) + ")");
    }
    if (data.size() > static_cast<std::size_t>(INT_MAX)) {
      return Status(StatusCode::kRuntimeError, "MPI: message of more than 2 GiB");
    }
    if (int rc = MPI_Send(data.data(), static_cast<int>(data.size()), MPI_CHAR, dest, tag,
                          MPI_COMM_WORLD);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Send", rc);
    }
    return Status::ok();
  }

  Expected<std::optional<Message>> try_receive() override {
    int flag = 0;
    MPI_Status status;
    if (int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Iprobe", rc);
    }
    if (!flag) return std::optional<Message>{};
    auto message = receive_probed(status);
    if (!message) return message.status();
    return std::optional<Message>(std::move(*message));
  }

  Expected<Message> receive() override {
    MPI_Status status;
    if (int rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Probe", rc);
    }
    return receive_probed(status);
  }

  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  // Receives the message a probe found (its source and tag, so no other message is taken).
  static Expected<Message> receive_probed(const MPI_Status& probed) {
    int count = 0;
    MPI_Get_count(&probed, MPI_CHAR, &count);
    Message message{probed.MPI_SOURCE, probed.MPI_TAG,
                    std::string(static_cast<std::size_t>(count), '\0')};
    if (int rc = MPI_Recv(message.data.data(), count, MPI_CHAR, probed.MPI_SOURCE, probed.MPI_TAG,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Recv", rc);
    }
    return message;
  }

  bool owns_;
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
};

}  // namespace

bool mpi_available() noexcept { return true; }

Expected<std::unique_ptr<Transport>> make_mpi_transport() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  bool owns = false;
  if (!initialized) {
    int provided = 0;
    if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        rc != MPI_SUCCESS) {
      return mpi_error("MPI_Init_thread", rc);
    }
    owns = true;
  }
  return std::unique_ptr<Transport>(std::make_unique<MpiTransport>(owns));
}

#else

bool mpi_available() noexcept { return false; }

Expected<std::unique_ptr<Transport>> make_mpi_transport() {
  return Status(StatusCode::kUnsupported,
                "this tunekit was built without MPI (install libopenmpi-dev and configure with "
                "-DTUNEKIT_WITH_MPI=ON), use --jobs N for local processes instead");
}

#endif

}  // namespace tunekit::distributed
