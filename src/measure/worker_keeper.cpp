// The keeper above a kernel worker. See src/measure/worker_keeper.hpp.
#include "measure/worker_keeper.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/child_reaper.hpp"

namespace tunekit::measure {
namespace {

/// Points the keeper's standard input and output (the runner's socket) at /dev/null: only the
/// worker holds the socket, so the runner sees its end as soon as the worker ends.
void release_socket() {
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) {
    ::close(STDIN_FILENO);
    ::close(STDOUT_FILENO);
    return;
  }
  ::dup2(null_fd, STDIN_FILENO);
  ::dup2(null_fd, STDOUT_FILENO);
  ::close(null_fd);
}

/// Ends the keeper as the worker ended (wait status `status`): its exit status, or its signal
/// without a core file.
[[noreturn]] void exit_as(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const rlimit no_core{0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(signal, SIG_DFL);
    sigset_t only;
    ::sigemptyset(&only);
    ::sigaddset(&only, signal);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(signal);
    ::_exit(128 + signal);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/// Reaps the ended children; returns true when `worker` was among them (its status in `status`).
bool reap(pid_t worker, int& status) {
  bool ended = false;
  int each = 0;
  for (pid_t pid; (pid = ::waitpid(-1, &each, WNOHANG)) > 0;) {
    if (pid == worker) {
      status = each;
      ended = true;
    }
  }
  return ended;
}

/// The keeper's life, every signal blocked: waits for SIGCHLD and SIGTERM until the worker has
/// ended, then ends what is left below and exits as the worker did.
[[noreturn]] void keep(pid_t worker) {
  release_socket();
  sigset_t waited;
  ::sigemptyset(&waited);
  ::sigaddset(&waited, SIGCHLD);
  ::sigaddset(&waited, SIGTERM);
  int status = 0;
  while (!reap(worker, status)) {
    siginfo_t info{};
    if (::sigwaitinfo(&waited, &info) == SIGTERM && info.si_pid == ::getppid()) {
      ::kill(worker, SIGKILL);
    }
  }
  end_children();
  exit_as(status);
}

}  // namespace

void split_off_keeper() {
  sigset_t all;
  sigset_t before;
  ::sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &before);  // a SIGCHLD waits for the keeper's loop
  const pid_t keeper = ::getpid();
  const pid_t worker = become_subreaper().is_ok() ? ::fork() : -1;
  if (worker < 0) {
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    return;
  }
  if (worker > 0) keep(worker);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != keeper) ::_exit(120);
  (void)become_subreaper();  // not inherited across fork
  ::sigprocmask(SIG_SETMASK, &before, nullptr);
}

}  // namespace tunekit::measure
