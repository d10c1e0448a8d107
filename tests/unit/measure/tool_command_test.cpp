// run_command: captured output, exit statuses, a chatty tool, a missing program, the timeout.
#include "tunekit/measure/tool_command.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include "../test_files.hpp"
#include "tunekit/core/clock.hpp"

namespace tunekit {
namespace {

TEST(RunCommand, CapturesStdoutAndStderrAndTheExitStatus) {
  auto ran = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, 30.0);
  ASSERT_TRUE(ran.has_value()) << ran.status().to_string();
  EXPECT_EQ(ran->exit_status, 3);
  EXPECT_FALSE(ran->succeeded());
  EXPECT_EQ(ran->ending(), "exit status 3");
  EXPECT_NE(ran->output.find("out\n"), std::string::npos);
  EXPECT_NE(ran->output.find("err\n"), std::string::npos);
}

TEST(RunCommand, AChattyToolDoesNotStall) {
  // 4 MiB on stderr, far beyond a pipe's buffer, then a word on stdout.
  auto ran =
      run_command({"sh", "-c", "head -c 4194304 /dev/zero | tr '\\0' x >&2; echo done"}, 60.0, 64);
  ASSERT_TRUE(ran.has_value()) << ran.status().to_string();
  EXPECT_TRUE(ran->succeeded()) << ran->ending();
  EXPECT_EQ(ran->output.size(), 64u);  // kept up to the limit, the rest read and dropped
}

TEST(RunCommand, TheToolInheritsNoOtherDescriptor) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // without close-on-exec, as an embedding program might open it
  const int leaked = ::fcntl(fds[1], F_DUPFD, 200);
  ASSERT_GE(leaked, 200);
  // `[` is built into sh: /proc/self is the spawned shell.
  const std::string probe = "[ -e /proc/self/fd/" + std::to_string(leaked) + " ] && echo leaked";
  auto ran = run_command({"sh", "-c", probe + "; echo checked"}, 30.0);
  for (const int fd : {fds[0], fds[1], leaked}) ::close(fd);
  ASSERT_TRUE(ran.has_value()) << ran.status().to_string();
  EXPECT_EQ(ran->output, "checked\n");
}

TEST(RunCommand, AMissingProgramIsOneClearError) {
  auto ran = run_command({"tunekit-no-such-program"}, 5.0);
  ASSERT_FALSE(ran.has_value());
  EXPECT_EQ(ran.status().code(), StatusCode::kIoError);
  EXPECT_EQ(ran.status().message(),
            "cannot run 'tunekit-no-such-program': No such file or directory");
}

/// True while process `pid` exists and is not a zombie.
bool alive(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

TEST(RunCommand, TimeoutKillsTheProcessGroup) {
  testing::TempDir tmp;
  const std::string pid_file = tmp.file("pid");
  const auto start = now_ns();
  // The shell's child (sleep) holds the pipe too and must die with it.
  auto ran =
      run_command({"sh", "-c", "sleep 30 & echo $! > '" + pid_file + "'; wait; echo late"}, 0.5);
  ASSERT_TRUE(ran.has_value()) << ran.status().to_string();
  EXPECT_TRUE(ran->timed_out);
  EXPECT_EQ(ran->signal, SIGKILL);
  EXPECT_EQ(ran->ending(), "timed out");
  EXPECT_EQ(ran->output.find("late"), std::string::npos);
  EXPECT_LT(elapsed_ms(start, now_ns()), 5000.0);  // not 10x the timeout
  const long sleeper = std::stol("0" + testing::slurp(pid_file));
  ASSERT_GT(sleeper, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = !alive(sleeper);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the tool's child " << sleeper << " outlived the timeout";
}

}  // namespace
}  // namespace tunekit
