// The kernel worker's message loop and its fork-per-trial children.
// See src/measure/kernel_worker.hpp.
#include "measure/kernel_worker.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "measure/child_reaper.hpp"
#include "measure/kernel_protocol.hpp"
#include "measure/kernel_session.hpp"
#include "measure/line_channel.hpp"
#include "tunekit/core/clock.hpp"

namespace tunekit::measure {
namespace {

TrialOutcome outcome_of(MeasureErrorNo code, std::string message) {
  TrialOutcome out;
  out.result.error_no = code;
  out.result.error_msg = std::move(message);
  return out;
}

/// Why a trial child ended without a result.
TrialOutcome child_failure(int status) {
  if (WIFEXITED(status)) {
    return outcome_of(
        MeasureErrorNo::kRuntimeDevice,
        fmt::format("the kernel exited the process (status {})", WEXITSTATUS(status)));
  }
  return outcome_of(MeasureErrorNo::kRuntimeDevice, describe_wait_status(status));
}

/// Signals a crashing kernel raises. A trial child restores their default action, so that the
/// crash ends it by the signal even where the worker has handlers for them (a worker built with
/// AddressSanitizer would otherwise report the crash and exit with status 1).
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};

/// Puts the crash signals back to their default action and unblocks them: a crashing kernel
/// then ends the process by its signal.
void crash_by_default() {
  sigset_t crashes;
  ::sigemptyset(&crashes);
  for (const int signal : kCrashSignals) {
    ::signal(signal, SIG_DFL);
    ::sigaddset(&crashes, signal);
  }
  ::sigprocmask(SIG_UNBLOCK, &crashes, nullptr);
}

/// The start of a trial child: dies with the worker, leads a process group of its own (its
/// descendants are killed with it) and crashes by default.
void become_trial_child(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(120);
  ::setpgid(0, 0);
  crash_by_default();
}

/// A descriptor that becomes readable when the child `pid` ends (-1 where the system has none).
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

/// Waits until the child behind `pidfd` ends or `deadline_ns` passes; false at the deadline.
bool wait_for_end(pid_t pid, int pidfd, std::int64_t deadline_ns) {
  for (;;) {
    const std::int64_t left_ns = deadline_ns - now_ns();
    if (left_ns <= 0) return false;
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(left_ns / 1'000'000 + 1));
      if (ready > 0) return true;
      if (ready < 0 && errno != EINTR) return true;  // cannot watch: let waitpid block
    } else {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

/// Reads the trial child's result line until `timeout_s` has passed. A child that ended (or
/// closed the pipe) without a whole line gives kEof once it is gone: its descendants, which
/// may hold the pipe, do not keep the worker waiting.
LineChannel::Read await_result(pid_t pid, int read_fd, double timeout_s, std::string& line) {
  const std::int64_t deadline_ns = now_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
  const int pidfd = open_pidfd(pid);
  LineChannel in(read_fd, -1);
  LineChannel::Read read = in.read_line(line, timeout_s, pidfd);
  if (read == LineChannel::Read::kWatch) {
    // The child ended: what it wrote before is in the pipe.
    ::kill(-pid, SIGKILL);
    read = in.read_line(line, 1.0);
    if (read != LineChannel::Read::kLine) read = LineChannel::Read::kEof;
  } else if (read == LineChannel::Read::kEof || read == LineChannel::Read::kError) {
    // The pipe closed early (a kernel may close descriptors): the child may still be running.
    read = wait_for_end(pid, pidfd, deadline_ns) ? LineChannel::Read::kEof
                                                 : LineChannel::Read::kTimeout;
  }
  if (pidfd >= 0) ::close(pidfd);
  return read;
}

/// Runs `trial` in a forked child that reports its outcome through a pipe; the child is
/// killed when it runs past `timeout_s`, and so is anything it started.
TrialOutcome run_forked(const std::function<TrialOutcome()>& trial, double timeout_s) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return outcome_of(MeasureErrorNo::kUnknownError, "the kernel worker cannot create a pipe");
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return outcome_of(MeasureErrorNo::kUnknownError, "the kernel worker cannot fork");
  }
  if (pid == 0) {
    become_trial_child(parent);
    ::close(fds[0]);
    LineChannel out(-1, fds[1]);
    (void)out.write_line(outcome_to_json(trial()).dump());
    ::_exit(0);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first
  ::close(fds[1]);
  std::string line;
  const LineChannel::Read read = await_result(pid, fds[0], timeout_s, line);
  ::close(fds[0]);
  ::kill(-pid, SIGKILL);  // past the timeout, or descendants left behind
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (read == LineChannel::Read::kTimeout) {
    return outcome_of(MeasureErrorNo::kRunTimeout,
                      fmt::format("ran past the {} s timeout", timeout_s));
  }
  if (read == LineChannel::Read::kLine) {
    auto parsed = outcome_from_json(nlohmann::json::parse(line, nullptr, false));
    if (parsed) return std::move(*parsed);
  }
  return child_failure(status);
}

class Worker {
 public:
  explicit Worker(LineChannel channel) : channel_(std::move(channel)) {}

  int serve() {
    std::string line;
    while (channel_.read_line(line, -1.0) == LineChannel::Read::kLine) {
      const nlohmann::json message = nlohmann::json::parse(line, nullptr, false);
      if (!message.is_object()) return 2;
      const std::string op = message.value("op", "");
      nlohmann::json reply;
      if (op == "init") {
        reply = init(message);
      } else if (op == "trial") {
        reply = outcome_to_json(trial(message));
      } else {
        return 2;
      }
      if (!channel_.write_line(reply.dump()).is_ok()) return 2;
    }
    return 0;
  }

 private:
  /// The "launch" of an init message: {"global": [...], "local": [...]} (OpenCL, CUDA).
  static LaunchGeometry launch_from_json(const nlohmann::json& message) {
    LaunchGeometry launch;
    const nlohmann::json geometry = message.value("launch", nlohmann::json::object());
    if (!geometry.is_object()) return launch;
    for (const auto& e : geometry.value("global", nlohmann::json::array())) {
      if (e.is_string()) launch.global.push_back(e.get<std::string>());
    }
    for (const auto& e : geometry.value("local", nlohmann::json::array())) {
      if (e.is_string()) launch.local.push_back(e.get<std::string>());
    }
    return launch;
  }

  nlohmann::json init(const nlohmann::json& message) {
    auto language = kernel_language_from_string(message.value("language", "c++"));
    if (!language) return {{"ok", false}, {"error", language.status().message()}};
    auto problem = problem_from_json(message.value("problem", nlohmann::json()));
    if (!problem) return {{"ok", false}, {"error", problem.status().message()}};
    timing_ = timing_from_json(message.value("timing", nlohmann::json::object()));
    entry_ = message.value("entry", "");
    auto session =
        KernelSession::create(*language, *problem, timing_,
                              verify_from_json(message.value("verify", nlohmann::json::object())),
                              /*shared_reference=*/true, launch_from_json(message));
    if (!session) return {{"ok", false}, {"error", session.status().message()}};
    session_ = std::move(*session);
    fork_ = message.value("fork", true) && session_->fork_per_trial();
    if (!fork_) crash_by_default();  // the worker runs the kernels itself
    if (message.contains("reference")) {
      const nlohmann::json& ref = message["reference"];
      TrialOutcome out = run([&](bool restore) {
        return session_->reference_trial(ref.value("artifact", ""), ref.value("entry", entry_),
                                         ref.value("params", nlohmann::json::object()), restore);
      });
      if (!out.captured) {
        return {{"ok", false}, {"error", "the reference kernel failed: " + out.result.error_msg}};
      }
      session_->mark_reference();
    }
    return {{"ok", true}, {"fork", fork_}};
  }

  TrialOutcome trial(const nlohmann::json& message) {
    if (!session_) return outcome_of(MeasureErrorNo::kUnknownError, "trial before init");
    const std::string artifact = message.value("artifact", "");
    const nlohmann::json params = message.value("params", nlohmann::json::object());
    TrialOutcome out =
        run([&](bool restore) { return session_->trial(artifact, entry_, params, restore); });
    if (out.captured) session_->mark_reference();
    return out;
  }

  /// Runs `body` in a forked child (copy-on-write pristine memory) or here (restoring inputs),
  /// then ends every process the kernel left below the worker, whatever group or session it
  /// moved to (the worker is a child subreaper: src/measure/worker_keeper.hpp).
  TrialOutcome run(const std::function<TrialOutcome(bool)>& body) {
    TrialOutcome out = fork_
                           ? run_forked([&] { return body(/*restore=*/false); }, timing_.timeout_s)
                           : body(/*restore=*/true);
    end_children();
    return out;
  }

  LineChannel channel_;
  std::unique_ptr<KernelSession> session_;
  KernelTiming timing_;
  std::string entry_;
  bool fork_ = true;  ///< trials run in forked children (requested and fork-safe)
};

}  // namespace

int run_kernel_worker(int in_fd, int out_fd) {
  Worker worker{LineChannel(in_fd, out_fd)};
  const int status = worker.serve();
  end_children();
  return status;
}

}  // namespace tunekit::measure
