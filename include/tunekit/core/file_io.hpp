// Files that survive the disk: results and logs are opened only as regular files (a device, FIFO
// or directory is one clear error, never an endless read or a hang), read with a bound, and
// appended all or nothing (a write cut short by a full disk is undone).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "tunekit/core/status.hpp"

namespace tunekit::files {

/// The largest results file or tuning log read whole (1 GiB).
inline constexpr std::size_t kMaxTextFileBytes = std::size_t{1} << 30;

/// An owned file descriptor, closed on destruction (which releases any flock it holds).
class Fd {
 public:
  Fd() = default;
  /// Takes ownership of `fd` (-1: none).
  explicit Fd(int fd) noexcept : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  /// The descriptor (-1: none).
  int get() const noexcept { return fd_; }
  /// Gives the descriptor up without closing it.
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

/// What a file of mode `mode` is, for messages: "a directory", "a character device",
/// "a block device", "a FIFO", "a socket", "a symbolic link", "a regular file".
std::string_view kind_of(mode_t mode) noexcept;

/// Opens `path` with open(2) `flags` (O_CLOEXEC and O_NOCTTY added; mode 0644 when created) and
/// refuses anything but a regular file, before any read or write: the open itself is
/// non-blocking, so a FIFO never hangs it, and a device is never read or written. `what` names
/// the file in messages ("results file", "tuning log"). With O_CREAT and `created` given,
/// `*created` tells whether this call created the file.
/// Errors: kNotFound "cannot open <what> '<path>': No such file or directory" (missing, or its
/// folder is, e.g. a dangling symbolic link); kIoError "<what> '<path>' is not a regular file
/// (a character device)", or "cannot open <what> '<path>': Is a directory"; kIoError "cannot
/// open <what> '<path>': <reason>".
Expected<Fd> open_regular(const std::string& path, int flags, std::string_view what,
                          bool* created = nullptr);

/// The whole content of the regular file `fd`, from offset 0 to its end.
/// Errors: kIoError "cannot read <what> '<path>': <reason>", or "<what> '<path>' is larger than
/// 1 GiB (`max_bytes`) ..." for a file beyond `max_bytes`.
Expected<std::string> read_all(int fd, const std::string& path, std::string_view what,
                               std::size_t max_bytes = kMaxTextFileBytes);

/// Appends `data` to `fd` (opened with O_APPEND, held under an exclusive lock by the caller)
/// all or nothing: when the write stops short (a full disk, a file size limit, an I/O error),
/// the file is truncated back to `size_before`, its size when the lock was taken, so no partial
/// line stays behind.
/// Errors: kIoError "cannot write <what> '<path>': <reason> (the file is as it was)", or "...
/// (and the partial write could not be removed: <reason>)".
Status append_all_or_nothing(int fd, off_t size_before, std::string_view data,
                             const std::string& path, std::string_view what);

}  // namespace tunekit::files
