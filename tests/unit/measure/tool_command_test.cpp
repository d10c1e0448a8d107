// run_command: captured output, exit statuses, a chatty tool, a missing program, the timeout.
#include "tunekit/measure/tool_command.hpp"

#include <gtest/gtest.h>

#include <csignal>

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

TEST(RunCommand, AMissingProgramIsOneClearError) {
  auto ran = run_command({"tunekit-no-such-program"}, 5.0);
  ASSERT_FALSE(ran.has_value());
  EXPECT_EQ(ran.status().code(), StatusCode::kIoError);
  EXPECT_EQ(ran.status().message(),
            "cannot run 'tunekit-no-such-program': No such file or directory");
}

TEST(RunCommand, TimeoutKillsTheProcessGroup) {
  const auto start = now_ns();
  // The shell's child (sleep) holds the pipe too: only killing the group ends the read.
  auto ran = run_command({"sh", "-c", "sleep 30; echo late"}, 0.3);
  ASSERT_TRUE(ran.has_value()) << ran.status().to_string();
  EXPECT_TRUE(ran->timed_out);
  EXPECT_EQ(ran->signal, SIGKILL);
  EXPECT_EQ(ran->output.find("late"), std::string::npos);
  EXPECT_LT(elapsed_ms(start, now_ns()), 3000.0);  // not 10x the timeout
}

}  // namespace
}  // namespace tunekit
