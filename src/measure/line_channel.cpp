// Line messages with deadlines over file descriptors. See src/measure/line_channel.hpp.
#include "measure/line_channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "tunekit/core/clock.hpp"

namespace tunekit::measure {
namespace {

/// Writes `n` bytes; send(MSG_NOSIGNAL) on sockets, write() on anything else.
bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

Status LineChannel::write_line(const std::string& line) {
  std::string message = line;
  message.push_back('\n');
  if (!write_all(out_fd_, message.data(), message.size())) {
    return Status(StatusCode::kIoError,
                  std::string("cannot write to the peer: ") + std::strerror(errno));
  }
  return Status::ok();
}

LineChannel::Read LineChannel::read_line(std::string& line, double timeout_s, int watch_fd) {
  const std::int64_t deadline = now_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
  while (true) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Read::kLine;
    }
    int wait_ms = -1;
    if (timeout_s >= 0) {
      const std::int64_t left = deadline - now_ns();
      if (left <= 0) return Read::kTimeout;
      wait_ms = static_cast<int>((left + 999'999) / 1'000'000);
    }
    pollfd pfd[2] = {{in_fd_, POLLIN, 0}, {watch_fd, POLLIN, 0}};
    const int ready = ::poll(pfd, watch_fd >= 0 ? 2 : 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Read::kError;
    if (ready == 0) continue;  // the deadline check above decides
    if (pfd[0].revents == 0) return Read::kWatch;
    char chunk[4096];
    const ssize_t got = ::read(in_fd_, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno == ECONNRESET ? Read::kEof : Read::kError;
    if (got == 0) return Read::kEof;
    buffer_.append(chunk, static_cast<std::size_t>(got));
  }
}

std::string describe_signal(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  const char* text = ::sigdescr_np(signal);
  std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
  std::string description = text ? text : "unknown signal";
  if (!description.empty()) {
    description[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(description[0])));
  }
  return name + " (" + description + ")";
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) return "killed by " + describe_signal(WTERMSIG(status));
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "stopped (wait status " + std::to_string(status) + ")";
}

}  // namespace tunekit::measure
