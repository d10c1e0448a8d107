// Runs a test body in a forked child under limits (an alarm, an address-space cap, a file-size
// cap), so a test of a hang, a runaway read or a full disk cannot take the test run down with it.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <functional>

namespace tunekit::testing {

/// True in an AddressSanitizer build, whose shadow memory needs far more address space than
/// any cap a test would set (and whose quarantine and redzones change the resident set).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

/// Limits of a child started by run_in_child().
struct ChildLimits {
  unsigned alarm_s = 20;     ///< SIGALRM after this many seconds (0: none)
  rlim_t address_bytes = 0;  ///< RLIMIT_AS (0: unchanged; ignored under AddressSanitizer)
  rlim_t file_bytes = 0;     ///< RLIMIT_FSIZE, with SIGXFSZ ignored so writes fail (0: unchanged)
};

/// Forks, applies `limits` in the child, runs `body` there and returns its exit status; a child
/// killed by a signal returns 128 + the signal number (SIGALRM: 142).
inline int run_in_child(const std::function<int()>& body, const ChildLimits& limits = {}) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (limits.address_bytes > 0 && !kAddressSanitizer) {
      const rlimit as{limits.address_bytes, limits.address_bytes};
      ::setrlimit(RLIMIT_AS, &as);
    }
    if (limits.file_bytes > 0) {
      std::signal(SIGXFSZ, SIG_IGN);
      const rlimit fs{limits.file_bytes, limits.file_bytes};
      ::setrlimit(RLIMIT_FSIZE, &fs);
    }
    if (limits.alarm_s > 0) ::alarm(limits.alarm_s);
    ::_exit(body());
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tunekit::testing
