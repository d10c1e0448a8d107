// Offline tuning in forked local processes that end with their parent, and recovering a dead
// worker's results from its file. See include/tunekit/offline/local_jobs.hpp.
#include "tunekit/offline/local_jobs.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iterator>
#include <set>
#include <string>

#include "tunekit/tunable/results_file.hpp"

namespace tunekit::offline {
namespace {

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    done += static_cast<std::size_t>(n);
  }
}

std::string describe_exit(int job, pid_t pid, int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("job {} (pid {}) was killed by signal {} ({})", job, pid, WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status)) {
    return fmt::format("job {} (pid {}) exited with status {} without a report", job, pid,
                       WEXITSTATUS(status));
  }
  return fmt::format("job {} (pid {}) ended without a report", job, pid);
}

// --- stop signals: jobs end with their parent -------------------------------------------------

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};
volatile std::sig_atomic_t g_stop_signal = 0;
int g_wake_fd = -1;  // write end of the self-pipe that wakes the parent's poll()

void on_stop_signal(int sig) {
  const int saved = errno;
  g_stop_signal = sig;
  if (g_wake_fd >= 0) (void)!::write(g_wake_fd, "!", 1);
  errno = saved;
}

/// While the jobs run, SIGTERM, SIGINT and SIGHUP (unless ignored) are caught: the parent
/// forwards the signal to every job, reaps them, and then ends by the same signal (raise()).
class StopSignals {
 public:
  StopSignals() {
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
    g_stop_signal = 0;
    g_wake_fd = wake_[1];
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
      struct sigaction sa {};
      sa.sa_handler = &on_stop_signal;
      sigemptyset(&sa.sa_mask);
      ::sigaction(kStopSignals[i], &sa, &old_[i]);
      if (old_[i].sa_handler == SIG_IGN) ::sigaction(kStopSignals[i], &old_[i], nullptr);
    }
  }
  ~StopSignals() {
    restore();
    g_wake_fd = -1;
    for (int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  /// The dispositions from before (a forked job takes them back, and so does the parent).
  void restore() const {
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
      ::sigaction(kStopSignals[i], &old_[i], nullptr);
    }
  }
  /// The signal caught so far (0: none).
  static int caught() { return g_stop_signal; }
  /// Readable when a signal was caught; polled with the jobs' pipes.
  int wake_fd() const { return wake_[0]; }
  /// Closes the self-pipe in a forked job.
  void close_in_child() const {
    for (int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
  }

 private:
  int wake_[2] = {-1, -1};
  struct sigaction old_[std::size(kStopSignals)]{};
};

// --- the jobs ----------------------------------------------------------------------------------

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string data;
};

// What a job writes to its pipe: one byte, 'D' (the worker's bytes follow) or 'E' (the message
// of the exception it threw follows).
constexpr char kDataFrame = 'D';
constexpr char kErrorFrame = 'E';

/// In a forked job: ends with the parent (PR_SET_PDEATHSIG, then a re-check that the parent has
/// not already gone), runs the worker and writes its bytes to the pipe.
[[noreturn]] void run_job(int job, pid_t parent, int out_fd, const std::vector<Child>& siblings,
                          const StopSignals& signals,
                          const std::function<std::string(int job)>& worker) {
  signals.restore();
  signals.close_in_child();
#ifdef __linux__
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
  if (::getppid() != parent) ::_exit(1);  // the parent died before the line above
  for (const Child& c : siblings) {
    if (c.fd >= 0) ::close(c.fd);
  }
  std::string frame(1, kDataFrame);
  try {
    frame += worker(job);
  } catch (const std::exception& e) {
    frame = std::string(1, kErrorFrame) + e.what();
  } catch (...) {
    frame = std::string(1, kErrorFrame) + "unknown exception";
  }
  write_all(out_fd, frame);
  ::close(out_fd);
  std::fflush(nullptr);
  ::_exit(0);
}

/// Forks the jobs (stopping early when a stop signal arrived meanwhile).
std::vector<Child> start_jobs(int jobs, const StopSignals& signals,
                              const std::function<std::string(int job)>& worker) {
  std::vector<Child> children(static_cast<std::size_t>(std::max(jobs, 0)));
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  for (int job = 0; job < jobs && StopSignals::caught() == 0; ++job) {
    int fds[2];
    if (::pipe(fds) != 0) continue;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      run_job(job, parent, fds[1], children, signals, worker);
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      continue;
    }
    children[static_cast<std::size_t>(job)].pid = pid;
    children[static_cast<std::size_t>(job)].fd = fds[0];
  }
  return children;
}

void forward(int sig, const std::vector<Child>& children) {
  for (const Child& c : children) {
    if (c.pid > 0) ::kill(c.pid, sig);
  }
}

/// Reads every pipe until EOF (poll, so no child blocks on a full pipe), forwarding a stop
/// signal to the jobs as soon as it is caught.
void collect_reports(std::vector<Child>& children, const StopSignals& signals) {
  std::size_t open = 0;
  for (const Child& c : children) open += c.fd >= 0 ? 1 : 0;
  bool forwarded = false;
  while (open > 0) {
    if (!forwarded && StopSignals::caught() != 0) {
      forward(StopSignals::caught(), children);
      forwarded = true;
    }
    std::vector<pollfd> polled;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (children[i].fd < 0) continue;
      polled.push_back({children[i].fd, POLLIN, 0});
      index.push_back(i);
    }
    if (!forwarded && signals.wake_fd() >= 0) polled.push_back({signals.wake_fd(), POLLIN, 0});
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (std::size_t p = 0; p < index.size(); ++p) {
      if (polled[p].revents == 0) continue;
      Child& c = children[index[p]];
      char buf[1 << 16];
      const ssize_t n = ::read(c.fd, buf, sizeof(buf));
      if (n > 0) {
        c.data.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(c.fd);
        c.fd = -1;
        --open;
      }
    }
  }
}

/// What a job's pipe held: its bytes, the exception it threw, or why it sent nothing (a job that
/// did not exit normally may have sent part of its bytes: they do not count).
JobOutput unframe(std::size_t job, const Child& c, int status) {
  JobOutput out;
  const bool finished = c.pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (finished && !c.data.empty() && c.data.front() == kDataFrame) {
    out.data = c.data.substr(1);
  } else if (finished && !c.data.empty() && c.data.front() == kErrorFrame) {
    out.status = Status(StatusCode::kRuntimeError, c.data.substr(1));
  } else {
    out.status = Status(StatusCode::kRuntimeError,
                        c.pid > 0 ? describe_exit(static_cast<int>(job), c.pid, status)
                                  : fmt::format("job {} could not be started", job));
  }
  return out;
}

std::vector<JobOutput> reap(std::vector<Child>& children) {
  std::vector<JobOutput> outputs;
  for (std::size_t job = 0; job < children.size(); ++job) {
    Child& c = children[job];
    int status = 0;
    if (c.pid > 0) {
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    outputs.push_back(unframe(job, c, status));
  }
  return outputs;
}

}  // namespace

std::vector<JobOutput> run_local_jobs(int jobs, const std::function<std::string(int job)>& worker) {
  int stop = 0;
  std::vector<JobOutput> reports;
  {
    const StopSignals signals;
    std::vector<Child> children = start_jobs(jobs, signals, worker);
    collect_reports(children, signals);
    if (StopSignals::caught() != 0) forward(StopSignals::caught(), children);
    reports = reap(children);
    stop = StopSignals::caught();
  }
  // Stopped by a signal: every job was told and reaped; now the parent ends by it too.
  if (stop != 0) ::raise(stop);
  return reports;
}

std::size_t recover_results(WorkerReport& report, const std::string& path,
                            const std::vector<ProblemRef>& share) {
  auto content = read_results_file(path);
  if (!content || content->validators.empty()) return 0;
  std::set<std::pair<std::string, std::string>> wanted;
  for (const ProblemRef& p : share) wanted.emplace(p.op_signature, p.params_signature);
  std::size_t recovered = 0;
  for (const ResultLine& r : content->results) {
    if (wanted.count({r.op_signature, r.params_signature}) == 0) continue;
    report.results.push_back(r);
    ProblemOutcome o;
    o.op_signature = r.op_signature;
    o.params_signature = r.params_signature;
    o.kind = ProblemOutcome::Kind::kTuned;
    o.winner = r.solution;
    o.time_ms = r.time_ms;
    o.rank = report.rank;
    o.note = "tuned (recovered from " + path + ")";
    report.outcomes.push_back(std::move(o));
    ++recovered;
  }
  if (recovered > 0 && report.validators.empty()) report.validators = content->validators;
  return recovered;
}

}  // namespace tunekit::offline
