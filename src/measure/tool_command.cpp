// run_command: posix_spawn with a captured, poll-read output pipe and a process-group timeout.
// See include/tunekit/measure/tool_command.hpp.
#include "tunekit/measure/tool_command.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/file_io.hpp"

extern char** environ;

namespace tunekit {
namespace {

/// posix_spawn attributes and file actions, released on destruction.
class SpawnSetup {
 public:
  SpawnSetup() {
    ::posix_spawnattr_init(&attr_);
    ::posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnSetup() {
    ::posix_spawnattr_destroy(&attr_);
    ::posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;

  /// New process group, default signal dispositions and an empty mask; stdin from /dev/null,
  /// stdout and stderr into `write_fd`, no other descriptor (glibc >= 2.34).
  int configure(int write_fd) {
    sigset_t none;
    sigset_t all;
    ::sigemptyset(&none);
    ::sigfillset(&all);
    int rc = ::posix_spawnattr_setflags(
        &attr_, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = ::posix_spawnattr_setpgroup(&attr_, 0);
    if (rc == 0) rc = ::posix_spawnattr_setsigmask(&attr_, &none);
    if (rc == 0) rc = ::posix_spawnattr_setsigdefault(&attr_, &all);
    if (rc == 0) rc = ::posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(&actions_, write_fd, 1);
    if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(&actions_, write_fd, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors the embedding program opened without close-on-exec stay out of the tool.
    if (rc == 0) rc = ::posix_spawn_file_actions_addclosefrom_np(&actions_, 3);
#endif
    return rc;
  }
  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

Status start_error(const std::string& program, int error) {
  return Status(StatusCode::kIoError,
                fmt::format("cannot run '{}': {}", program, std::strerror(error)));
}

/// Milliseconds left until `deadline_ns` for poll (-1 = no deadline, 0 when passed).
int poll_ms_left(std::int64_t deadline_ns) {
  if (deadline_ns < 0) return -1;
  const std::int64_t left_ns = deadline_ns - now_ns();
  if (left_ns <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>(left_ns / 1'000'000 + 1, 60'000));
}

/// Reads `fd` until end of file or the deadline; returns false when the deadline passed first.
bool read_until_eof(int fd, std::int64_t deadline_ns, std::size_t max_bytes, std::string& out) {
  char buffer[16384];
  for (;;) {
    const int wait_ms = poll_ms_left(deadline_ns);
    if (wait_ms == 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // a timeout is checked at the top; poll errors retry
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return true;
    const std::size_t room = max_bytes > out.size() ? max_bytes - out.size() : 0;
    out.append(buffer, std::min(room, static_cast<std::size_t>(n)));
  }
}

/// Waits for `pid` until the deadline; returns false when it is still running then.
bool wait_until(pid_t pid, std::int64_t deadline_ns, int& status) {
  for (;;) {
    const pid_t got = ::waitpid(pid, &status, deadline_ns < 0 ? 0 : WNOHANG);
    if (got == pid) return true;
    if (got < 0 && errno != EINTR) return true;  // nothing to wait for (not expected)
    if (deadline_ns >= 0 && now_ns() >= deadline_ns) return false;
    if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

/// Kills the process group of `pid` and reaps `pid`.
void kill_group(pid_t pid, int& status) {
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

void record_status(int status, CommandOutcome& outcome) {
  if (WIFEXITED(status)) outcome.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
}

}  // namespace

std::string CommandOutcome::ending() const {
  if (timed_out) return "timed out";
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit status {}", exit_status);
}

Expected<CommandOutcome> run_command(const std::vector<std::string>& argv, double timeout_s,
                                     std::size_t max_output_bytes) {
  if (argv.empty()) return Status(StatusCode::kInvalidArgument, "run_command: empty command");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return start_error(argv[0], errno);
  files::Fd read_end(fds[0]);
  files::Fd write_end(fds[1]);
  SpawnSetup setup;
  if (const int rc = setup.configure(write_end.get()); rc != 0) return start_error(argv[0], rc);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const std::int64_t start_ns = now_ns();
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, args[0], setup.actions(), setup.attr(), args.data(), environ);
  if (rc != 0) return start_error(argv[0], rc);
  write_end = files::Fd();  // the child holds the only write end now

  const std::int64_t deadline_ns =
      timeout_s > 0 ? start_ns + static_cast<std::int64_t>(timeout_s * 1e9) : -1;
  CommandOutcome outcome;
  int status = 0;
  const bool finished =
      read_until_eof(read_end.get(), deadline_ns, max_output_bytes, outcome.output) &&
      wait_until(pid, deadline_ns, status);
  if (finished) {
    record_status(status, outcome);
  } else {
    kill_group(pid, status);
    outcome.timed_out = true;
    outcome.signal = SIGKILL;
  }
  outcome.seconds = static_cast<double>(now_ns() - start_ns) * 1e-9;
  return outcome;
}

}  // namespace tunekit
