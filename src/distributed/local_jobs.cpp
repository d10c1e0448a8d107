// Offline tuning in forked local processes, and recovering a dead worker's results from its file.
// See include/tunekit/distributed/transport.hpp.
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <set>

#include "tunekit/distributed/transport.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::distributed {
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

}  // namespace

std::vector<WorkerReport> run_local_jobs(int jobs,
                                         const std::function<WorkerReport(int job)>& worker) {
  struct Child {
    pid_t pid = -1;
    int fd = -1;
    std::string data;
  };
  std::vector<Child> children(static_cast<std::size_t>(std::max(jobs, 0)));
  std::fflush(nullptr);
  for (int job = 0; job < jobs; ++job) {
    int fds[2];
    if (::pipe(fds) != 0) {
      children[static_cast<std::size_t>(job)].data.clear();
      continue;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      for (int j = 0; j < job; ++j) {
        if (children[static_cast<std::size_t>(j)].fd >= 0)
          ::close(children[static_cast<std::size_t>(j)].fd);
      }
      WorkerReport report;
      try {
        report = worker(job);
      } catch (const std::exception& e) {
        report.rank = job;
        report.status = Status(StatusCode::kRuntimeError, e.what());
      } catch (...) {
        report.rank = job;
        report.status = Status(StatusCode::kRuntimeError, "unknown exception");
      }
      report.rank = job;
      write_all(fds[1], encode(report));
      ::close(fds[1]);
      std::fflush(nullptr);
      ::_exit(0);
    }
    ::close(fds[1]);
    if (pid < 0) {
      ::close(fds[0]);
      continue;
    }
    children[static_cast<std::size_t>(job)].pid = pid;
    children[static_cast<std::size_t>(job)].fd = fds[0];
  }

  // Read every pipe until EOF (poll, so no child blocks on a full pipe).
  std::size_t open = 0;
  for (const Child& c : children) open += c.fd >= 0 ? 1 : 0;
  while (open > 0) {
    std::vector<pollfd> polled;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (children[i].fd < 0) continue;
      polled.push_back({children[i].fd, POLLIN, 0});
      index.push_back(i);
    }
    if (::poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (std::size_t p = 0; p < polled.size(); ++p) {
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

  std::vector<WorkerReport> reports;
  for (int job = 0; job < jobs; ++job) {
    Child& c = children[static_cast<std::size_t>(job)];
    int status = 0;
    if (c.pid > 0) {
      while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    auto decoded = decode_report(c.data);
    if (decoded) {
      decoded->rank = job;
      reports.push_back(std::move(*decoded));
      continue;
    }
    WorkerReport dead;
    dead.rank = job;
    dead.status = Status(StatusCode::kRuntimeError,
                         c.pid > 0 ? describe_exit(job, c.pid, status)
                                   : fmt::format("job {} could not be started", job));
    reports.push_back(std::move(dead));
  }
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

}  // namespace tunekit::distributed
