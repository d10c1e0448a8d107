// What a kernel's own processes can do to a tuning run, in both isolations: a process that left
// the kernel's process group and session ends with its trial, a process left behind does not
// turn a later kernel's exit into a timeout, and a kernel that stops its parent stops the
// worker's keeper, not the tuning process.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "kernel_test_problem.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit {
namespace {

using testing::batch_of;

/// True when process `pid` is gone or a zombie.
bool ended(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  if (!(stat >> pid_field >> name >> state)) return true;
  return state == "Z";
}

/// True when process `pid` has ended within about `seconds`.
bool ends_within(long pid, double seconds) {
  for (int i = 0; i < static_cast<int>(seconds * 100) && !ended(pid); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ended(pid);
}

/// The kernels of tests/data/kernels that start a sleeping process write its id to a file.
class SleeperFile {
 public:
  SleeperFile()
      : path_(::testing::TempDir() + "tunekit_sleeper_" + std::to_string(::getpid()) + ".txt") {
    ::setenv("TUNEKIT_TEST_SLEEPER_FILE", path_.c_str(), 1);
  }
  /// Unsets the variable, removes the file and kills the sleeper if it is still there.
  ~SleeperFile() {
    ::unsetenv("TUNEKIT_TEST_SLEEPER_FILE");
    if (const long id = pid(); id > 0 && !ended(id)) ::kill(static_cast<pid_t>(id), SIGKILL);
    ::unlink(path_.c_str());
  }
  /// The sleeper's id (0 when the kernel wrote none).
  long pid() const {
    long id = 0;
    std::ifstream(path_) >> id;
    return id;
  }

 private:
  std::string path_;
};

class ContainedProcesses : public ::testing::TestWithParam<Isolation> {};

TEST_P(ContainedProcesses, AProcessThatLeftTheSessionEndsWithItsTrial) {
  SleeperFile sleeper;
  auto runner = testing::vadd_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"escapes_session"});
  const MeasureResult r = runner->run(batch.inputs, batch.builds)[0];
  EXPECT_TRUE(r.ok()) << r.error_msg;
  const long id = sleeper.pid();
  ASSERT_GT(id, 0) << "the kernel did not start its process";
  // The runner (and its worker) are still there: the trial is over, so is the process.
  EXPECT_TRUE(ends_within(id, 2.0)) << "process " << id << " outlived its trial";
}

TEST_P(ContainedProcesses, AProcessThatLeftTheSessionEndsWithTheRunner) {
  SleeperFile sleeper;
  {
    auto runner = testing::vadd_runner(GetParam());
    ASSERT_TRUE(runner);
    auto batch = batch_of({"escapes_session"});
    EXPECT_TRUE(runner->run(batch.inputs, batch.builds)[0].ok());
  }
  const long id = sleeper.pid();
  ASSERT_GT(id, 0) << "the kernel did not start its process";
  EXPECT_TRUE(ended(id)) << "process " << id << " outlived the runner";
}

TEST_P(ContainedProcesses, AnExitAfterAProcessWasLeftBehindIsAnExit) {
  SleeperFile sleeper;
  auto runner = testing::vadd_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "leaves_sleeper", "exit3", "vadd_reversed"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[1].ok()) << results[1].error_msg;
  EXPECT_EQ(results[2].error_no, MeasureErrorNo::kRuntimeDevice) << results[2].error_msg;
  EXPECT_EQ(results[2].error_msg, GetParam() == Isolation::kWorker
                                      ? "the kernel exited its worker (status 3)"
                                      : "the kernel exited the process (status 3)");
  EXPECT_TRUE(results[3].ok()) << results[3].error_msg;
}

INSTANTIATE_TEST_SUITE_P(Isolations, ContainedProcesses,
                         ::testing::Values(Isolation::kProcess, Isolation::kWorker),
                         [](const ::testing::TestParamInfo<Isolation>& param) {
                           return param.param == Isolation::kWorker ? "Worker" : "Process";
                         });

/// Runs `body` in a forked child; "stopped" when the child was stopped (it is killed then),
/// "passed" or "failed" from body's result, "hung" after 60 s.
std::string outcome_in_child(const std::function<bool()>& body) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(body() ? 0 : 1);
  int status = 0;
  for (int i = 0; i < 6000; ++i) {
    if (::waitpid(child, &status, WNOHANG | WUNTRACED) == child) {
      if (WIFSTOPPED(status)) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        return "stopped";
      }
      return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "passed" : "failed";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
  return "hung";
}

TEST(WarmWorkerKeeper, AKernelThatStopsItsParentDoesNotStopTheTuningProcess) {
  const std::string outcome = outcome_in_child([] {
    auto runner = testing::vadd_runner(Isolation::kWorker);
    if (!runner) return false;
    auto batch = batch_of({"vadd", "stops_parent", "vadd_reversed"});
    auto results = runner->run(batch.inputs, batch.builds);
    for (const MeasureResult& r : results) {
      if (!r.ok()) return false;
    }
    return true;
  });
  EXPECT_EQ(outcome, "passed");
}

TEST(WarmWorkerKeeper, TheWarmWorkersParentIsNotTheRunner) {
  ::setenv("TUNEKIT_TEST_RUNNER_PID", std::to_string(::getpid()).c_str(), 1);
  auto runner = testing::vadd_runner(Isolation::kWorker);
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "parent_is_runner"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kWrongAnswer) << results[1].error_msg;
}

}  // namespace
}  // namespace tunekit
