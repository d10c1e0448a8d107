// Crash safety of the tuning database, measured: writers killed with SIGKILL in the middle of
// their writes, a full disk (RLIMIT_FSIZE), and 8 processes writing one database at once. Every
// result TuningContext::add_result reported saved must be in the database afterwards, and the
// database must pass SQLite's integrity check. Prints the figure quoted in docs/database.md.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../test_files.hpp"
#include "tunekit/records/tuning_db.hpp"
#include "tunekit/tunable/context.hpp"

namespace tunekit {
namespace {

using testing::TempDir;

constexpr const char* kOp = "CrashTestOp";

// A writer process: stores `count` results "w<writer>_p<i>" through TuningContext::add_result
// into the database at `path` (no results file) and writes "w<writer>_p<i>\n" to `report_fd`
// after each one add_result reported saved. Exit status: 0 when every result was saved, 3 when
// some were not (a full disk), 4 when the context reported a new result as not new.
int write_results(const std::string& path, int writer, int count, int report_fd) {
  ::setenv("TUNEKIT_DB", path.c_str(), 1);  // wins over the test run's TUNEKIT_DB=off
  TuningContext ctx;
  ctx.set_filename("");
  int failed = 0;
  for (int i = 0; i < count; ++i) {
    const std::string params = fmt::format("w{}_p{}", writer, i);
    Status not_saved;
    auto added =
        ctx.add_result(ResultLine{kOp, params, "Default", 0.001 * (i + 1), ""}, {}, &not_saved);
    if (added && !*added) return 4;
    if (!added || !not_saved.is_ok()) {
      ++failed;
      continue;
    }
    const std::string line = params + "\n";  // one write, shorter than PIPE_BUF: atomic
    if (::write(report_fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
      return 5;
    }
  }
  return failed == 0 ? 0 : 3;
}

// Reads `fd` until end of file (all writers gone) and returns the reported names.
std::vector<std::string> read_reports(int fd) {
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) break;
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

// How the database at `path` came through: unreadable (it does not open or fails the integrity
// check) and how many reported results it lacks.
struct Verdict {
  bool unreadable = false;
  std::size_t lost = 0;
  std::size_t stored = 0;
};

Verdict check_database(const std::string& path, const std::vector<std::string>& reported) {
  Verdict v;
  auto db = TuningDb::open(path, TuningDb::Access::kReadWrite);
  if (!db || !(*db)->check_integrity().is_ok()) {
    v.unreadable = true;
    v.lost = reported.size();
    return v;
  }
  DbResultQuery query;
  query.op_signature = kOp;
  auto rows = (*db)->results(query);
  if (!rows) {
    v.unreadable = true;
    v.lost = reported.size();
    return v;
  }
  std::set<std::string> present;
  for (const DbStoredResult& r : *rows) present.insert(r.result.params_signature);
  v.stored = present.size();
  for (const std::string& name : reported) v.lost += present.count(name) == 0 ? 1 : 0;
  return v;
}

// Starts a writer in a child process; returns its pid. The parent keeps `fds[0]`.
pid_t start_writer(const std::string& path, int writer, int count, int fds[2],
                   rlim_t file_bytes = 0) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (file_bytes > 0) {
      std::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{file_bytes, file_bytes};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ::alarm(60);
    ::_exit(write_results(path, writer, count, fds[1]));
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(DbCrashSafety, TheCheckerCountsALostResult) {
  // The verdict below is not vacuous: a reported result missing from the database is counted.
  TempDir dir;
  const std::string path = dir.file("control.db");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = start_writer(path, 0, 3, fds);
  ::close(fds[1]);
  std::vector<std::string> reported = read_reports(fds[0]);
  ::close(fds[0]);
  ASSERT_EQ(wait_for(pid), 0);
  ASSERT_EQ(reported.size(), 3u);
  EXPECT_EQ(check_database(path, reported).lost, 0u);
  reported.push_back("w0_p_never_written");
  EXPECT_EQ(check_database(path, reported).lost, 1u);
}

TEST(DbCrashSafety, FiftyKillsDuringWritesLoseNoSavedResult) {
  TempDir dir;
  const std::string path = dir.file("killed.db");
  std::mt19937 rng(20261205);  // fixed seed: the same kill points every run
  std::size_t reported_total = 0, lost_total = 0, unreadable = 0;
  std::vector<std::string> all_reported;
  for (int kill = 0; kill < 50; ++kill) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = start_writer(path, kill, 100000, fds);
    ::close(fds[1]);
    // Kill after a random number of saved results (0..7), then a random delay (0..3 ms), so
    // that the kill lands anywhere in a transaction: before, inside or after its commit.
    const int wait_reports = static_cast<int>(rng() % 8);
    std::string seen;
    char c = 0;
    for (int lines = 0; lines < wait_reports && ::read(fds[0], &c, 1) == 1;) {
      seen.push_back(c);
      if (c == '\n') ++lines;
    }
    ::usleep(static_cast<useconds_t>(rng() % 3000));
    ::kill(pid, SIGKILL);
    const int status = wait_for(pid);
    EXPECT_EQ(status, 128 + SIGKILL) << "writer " << kill << " ended before the kill";
    std::vector<std::string> reported = read_reports(fds[0]);
    ::close(fds[0]);
    // Complete lines read before the kill count too.
    std::size_t pos = 0;
    while (pos < seen.size()) {
      const std::size_t end = seen.find('\n', pos);
      reported.push_back(seen.substr(pos, end - pos));
      pos = end + 1;
    }
    all_reported.insert(all_reported.end(), reported.begin(), reported.end());
    const Verdict v = check_database(path, all_reported);
    reported_total += reported.size();
    lost_total += v.lost;
    unreadable += v.unreadable ? 1 : 0;
  }
  std::printf(
      "db crash safety: 50 kill -9 during writes: %zu results reported saved, %zu lost, %zu "
      "unreadable databases\n",
      reported_total, lost_total, unreadable);
  EXPECT_GE(reported_total, 50u);  // the kills landed among real writes
  EXPECT_EQ(lost_total, 0u);
  EXPECT_EQ(unreadable, 0u);
}

TEST(DbCrashSafety, AFullDiskLosesNoSavedResultAndLeavesAReadableDatabase) {
  TempDir dir;
  const std::string path = dir.file("full.db");
  {
    auto db = TuningDb::open(path, TuningDb::Access::kReadWrite);  // the schema fits
    ASSERT_TRUE(db.has_value()) << db.status().to_string();
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  // 256 KiB: the write-ahead log outgrows it after a few dozen results.
  const pid_t pid = start_writer(path, 0, 2000, fds, 256 << 10);
  ::close(fds[1]);
  const std::vector<std::string> reported = read_reports(fds[0]);
  ::close(fds[0]);
  const int status = wait_for(pid);
  EXPECT_EQ(status, 3) << "the writer should have met the full disk";
  const Verdict v = check_database(path, reported);
  std::printf(
      "db crash safety: full disk (RLIMIT_FSIZE 256 KiB): %zu of 2000 results reported saved, "
      "%zu stored, %zu lost, %s\n",
      reported.size(), v.stored, v.lost,
      v.unreadable ? "database UNREADABLE" : "database readable");
  EXPECT_GT(reported.size(), 0u);
  EXPECT_LT(reported.size(), 2000u);
  EXPECT_EQ(v.lost, 0u);
  EXPECT_FALSE(v.unreadable);
}

TEST(DbCrashSafety, EightConcurrentWritersLoseNothing) {
  TempDir dir;
  const std::string path = dir.file("shared.db");
  constexpr int kWriters = 8, kEach = 40;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) pids.push_back(start_writer(path, w, kEach, fds));
  ::close(fds[1]);
  const std::vector<std::string> reported = read_reports(fds[0]);
  ::close(fds[0]);
  int failed = 0;
  for (pid_t pid : pids) failed += wait_for(pid) == 0 ? 0 : 1;
  const Verdict v = check_database(path, reported);
  std::printf(
      "db crash safety: %d concurrent writers x %d results: %zu reported saved, %zu stored, %zu "
      "lost, %d writer(s) failed, %s\n",
      kWriters, kEach, reported.size(), v.stored, v.lost, failed,
      v.unreadable ? "database UNREADABLE" : "database readable");
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(reported.size(), static_cast<std::size_t>(kWriters * kEach));
  EXPECT_EQ(v.stored, static_cast<std::size_t>(kWriters * kEach));
  EXPECT_EQ(v.lost, 0u);
  EXPECT_FALSE(v.unreadable);
}

}  // namespace
}  // namespace tunekit
