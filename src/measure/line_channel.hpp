// Newline-terminated messages over a file descriptor pair (pipes or a socket), with read
// deadlines; what the kernel worker and its runner talk through.
#pragma once

#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit::measure {

/// Reads and writes lines on file descriptors it does not own.
class LineChannel {
 public:
  LineChannel() = default;
  LineChannel(int in_fd, int out_fd) : in_fd_(in_fd), out_fd_(out_fd) {}

  /// Outcome of read_line().
  /// kWatch: the `watch_fd` given to read_line() became readable before a whole line arrived.
  enum class Read : std::uint8_t { kLine, kEof, kTimeout, kError, kWatch };

  /// Writes `line` and a newline. A closed peer is an error, never SIGPIPE (sockets).
  /// Errors: kIoError with the system's message.
  Status write_line(const std::string& line);

  /// Reads the next line (without its newline) into `line`, waiting at most `timeout_s`
  /// seconds (< 0: no limit). With `watch_fd` >= 0 (a pidfd, say) it also returns kWatch
  /// as soon as that descriptor is readable and no whole line is buffered.
  Read read_line(std::string& line, double timeout_s, int watch_fd = -1);

 private:
  int in_fd_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
};

/// How a process ended, from a waitpid() status: "killed by SIGSEGV (segmentation fault)" or
/// "exited with status 3".
std::string describe_wait_status(int status);

/// "SIGSEGV (segmentation fault)" for a signal number.
std::string describe_signal(int signal);

}  // namespace tunekit::measure
