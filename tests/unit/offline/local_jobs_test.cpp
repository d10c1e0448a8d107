// Local jobs end with their parent: a SIGTERM, SIGINT or SIGKILL to the process running
// run_local_jobs leaves no worker running (this test process adopts orphans as a subreaper, so
// a surviving worker is seen and cleaned up).
#include "tunekit/offline/local_jobs.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <string>
#include <vector>

namespace tunekit::offline {
namespace {

/// Reads `count` pids from `fd`, waiting at most 20 s in all.
std::vector<pid_t> read_pids(int fd, std::size_t count) {
  std::vector<pid_t> pids;
  while (pids.size() < count) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 20000) <= 0) break;
    pid_t pid = 0;
    if (::read(fd, &pid, sizeof pid) != static_cast<ssize_t>(sizeof pid)) break;
    pids.push_back(pid);
  }
  return pids;
}

/// Whether `pid` (a child of this process, or already reaped by its own parent) ends within
/// 20 s; a survivor is killed and reaped.
bool ends_soon(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid || (got < 0 && errno == ECHILD)) return true;
    ::usleep(100'000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return false;
}

void expect_workers_end_with_parent(int signal) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    ::close(fds[0]);
    (void)run_local_jobs(2, [&](int job) {
      const pid_t me = ::getpid();
      (void)!::write(fds[1], &me, sizeof me);
      ::sleep(60);  // a slow tuning
      return std::to_string(job);
    });
    ::_exit(0);
  }
  ::close(fds[1]);
  const std::vector<pid_t> workers = read_pids(fds[0], 2);
  ::close(fds[0]);
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(::kill(parent, signal), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(parent, &status, 0), parent);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal)
      << "the parent should end by the signal it got (status " << status << ")";
  for (pid_t w : workers) EXPECT_TRUE(ends_soon(w)) << "worker " << w << " outlived its parent";
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 0), 0);
}

TEST(LocalJobs, WorkersEndWhenTheParentIsTerminated) { expect_workers_end_with_parent(SIGTERM); }

TEST(LocalJobs, WorkersEndWhenTheParentIsInterrupted) { expect_workers_end_with_parent(SIGINT); }

TEST(LocalJobs, WorkersEndWhenTheParentIsKilled) { expect_workers_end_with_parent(SIGKILL); }

TEST(LocalJobs, ReturnEachJobsBytesOrWhyItSentNone) {
  const std::vector<JobOutput> out = run_local_jobs(3, [](int job) -> std::string {
    if (job == 1) throw std::runtime_error("no operands");
    if (job == 2) std::raise(SIGKILL);
    return "job " + std::to_string(job);
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].status.is_ok());
  EXPECT_EQ(out[0].data, "job 0");
  EXPECT_EQ(out[1].status.message(), "no operands");
  EXPECT_TRUE(out[1].data.empty());
  EXPECT_NE(out[2].status.message().find("killed by signal 9"), std::string::npos)
      << out[2].status.message();
}

}  // namespace
}  // namespace tunekit::offline
