// Killing and reaping every child of a subreaper. See src/measure/child_reaper.hpp.
#include "measure/child_reaper.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tunekit/core/clock.hpp"

namespace tunekit::measure {
namespace {

/// The parent of the process whose /proc entry is `name`; -1 when it cannot be read (the
/// process ended meanwhile, or the entry is no process).
pid_t parent_of(const char* name) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", name);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[512];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  // "pid (command) state ppid ...": the command may hold spaces and parentheses.
  const char* after_command = std::strrchr(text, ')');
  char state = 0;
  long ppid = -1;
  if (after_command == nullptr || std::sscanf(after_command + 1, " %c %ld", &state, &ppid) != 2) {
    return -1;
  }
  return static_cast<pid_t>(ppid);
}

/// Sends SIGKILL to every child of this process that /proc lists.
void kill_listed_children() {
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    if (parent_of(entry->d_name) == self) {
      ::kill(static_cast<pid_t>(std::atol(entry->d_name)), SIGKILL);
    }
  }
  ::closedir(proc);
}

/// Reaps the children that have ended; returns how many.
std::size_t reap_ended() {
  std::size_t reaped = 0;
  int status = 0;
  while (::waitpid(-1, &status, WNOHANG) > 0) ++reaped;
  return reaped;
}

}  // namespace

Status become_subreaper() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0) {
    return Status(StatusCode::kRuntimeError,
                  std::string("cannot become a child subreaper: ") + std::strerror(errno));
  }
  return Status::ok();
}

bool has_children() noexcept {
  siginfo_t info{};
  for (;;) {
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0) return true;
    if (errno != EINTR) return false;  // ECHILD: none
  }
}

std::size_t end_children() noexcept {
  constexpr std::int64_t kGiveUpNs = 10'000'000'000;
  const std::int64_t deadline_ns = now_ns() + kGiveUpNs;
  std::size_t reaped = 0;
  while (has_children() && now_ns() < deadline_ns) {
    kill_listed_children();
    const std::size_t now_reaped = reap_ended();
    reaped += now_reaped;
    if (now_reaped == 0) ::usleep(1000);  // killed, not ended yet
  }
  return reaped;
}

}  // namespace tunekit::measure
