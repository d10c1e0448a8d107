// Regular files only, bounded reads and all-or-nothing appends.
// See include/tunekit/core/file_io.hpp.
#include "tunekit/core/file_io.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tunekit::files {
namespace {

Status not_regular(const std::string& path, std::string_view what, mode_t mode) {
  if (S_ISDIR(mode)) {
    return Status(StatusCode::kIoError,
                  fmt::format("cannot open {} '{}': {}", what, path, std::strerror(EISDIR)));
  }
  return Status(StatusCode::kIoError,
                fmt::format("{} '{}' is not a regular file ({})", what, path, kind_of(mode)));
}

Status open_error(const std::string& path, std::string_view what, int err) {
  return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
                fmt::format("cannot open {} '{}': {}", what, path, std::strerror(err)));
}

}  // namespace

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string_view kind_of(mode_t mode) noexcept {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a file";
}

namespace {

int open_retrying(const std::string& path, int flags) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0644);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

Expected<Fd> open_regular(const std::string& path, int flags, std::string_view what,
                          bool* created) {
  // Devices and FIFOs are refused before they are opened (opening one can block or act).
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return not_regular(path, what, st.st_mode);
  }
  if (created != nullptr) *created = false;
  int fd = -1;
  if ((flags & O_CREAT) != 0 && created != nullptr) {
    // Exclusive creation first, to tell whether the file existed.
    fd = open_retrying(path, flags | O_EXCL);
    *created = fd >= 0;
    if (fd < 0 && errno == EEXIST) fd = open_retrying(path, flags);
  } else {
    fd = open_retrying(path, flags);
  }
  if (fd < 0) return open_error(path, what, errno);
  Fd owned(fd);
  // The path may have been replaced between stat() and open().
  if (::fstat(fd, &st) != 0) return open_error(path, what, errno);
  if (!S_ISREG(st.st_mode)) return not_regular(path, what, st.st_mode);
  if ((flags & O_NONBLOCK) == 0) {
    const int fl = ::fcntl(fd, F_GETFL);
    if (fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) return open_error(path, what, errno);
  }
  return owned;
}

Expected<std::string> read_all(int fd, const std::string& path, std::string_view what,
                               std::size_t max_bytes) {
  const auto too_large = [&] {
    return Status(StatusCode::kIoError,
                  fmt::format("{} '{}' is larger than {} MiB: not a file tunekit reads whole", what,
                              path, max_bytes >> 20));
  };
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) > max_bytes) {
    return too_large();
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status(StatusCode::kIoError,
                    fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
    }
    if (n == 0) return text;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes) return too_large();
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
}

Status append_all_or_nothing(int fd, off_t size_before, std::string_view data,
                             const std::string& path, std::string_view what) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : EIO;
    std::string undone = "the file is as it was";
    if (done > 0) {
      int rc = 0;
      do {
        rc = ::ftruncate(fd, size_before);
      } while (rc != 0 && errno == EINTR);
      if (rc != 0) {
        undone = fmt::format("and the partial write of {} bytes could not be removed: {}", done,
                             std::strerror(errno));
      }
    }
    return Status(StatusCode::kIoError, fmt::format("cannot write {} '{}': {} ({})", what, path,
                                                    std::strerror(err), undone));
  }
  return Status::ok();
}

}  // namespace tunekit::files
