// The isolated runner with Isolation::kWorker: C kernels run in the warm worker itself, and
// a crash, exit or hang costs that worker, not the tuning: the next configuration runs in a
// new one with the reference re-established.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "kernel_test_problem.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit {
namespace {

using testing::batch_of;

std::shared_ptr<Runner> runner_with(Isolation isolation) {
  // grandparent_is_runner.c is right only when its process is a child of a child of this one:
  // a warm worker, below the keeper the runner spawned.
  ::setenv("TUNEKIT_TEST_RUNNER_PID", std::to_string(::getpid()).c_str(), 1);
  return testing::vadd_runner(isolation);
}

TEST(WarmWorker, TrialsRunInTheWorkerItself) {
  auto runner = runner_with(Isolation::kWorker);
  ASSERT_TRUE(runner);
  const pid_t worker = testing::worker_pid_of(runner);
  auto batch = batch_of({"vadd", "grandparent_is_runner", "vadd_reversed"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
  EXPECT_EQ(testing::worker_pid_of(runner), worker);
}

TEST(WarmWorker, ProcessIsolationRunsTrialsInForkedChildren) {
  auto runner = runner_with(Isolation::kProcess);
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "parent_is_runner"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kWrongAnswer) << results[1].error_msg;
}

/// Runs `bad` between two good configurations in a warm worker and returns its result.
MeasureResult warm_between_good_ones(const std::string& bad) {
  auto runner = runner_with(Isolation::kWorker);
  if (!runner) return {};
  const pid_t first = testing::worker_pid_of(runner);
  auto batch = batch_of({"vadd", bad, "vadd_reversed"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_TRUE(results[2].ok()) << results[2].error_msg;
  EXPECT_NE(testing::worker_pid_of(runner), first);
  EXPECT_GT(testing::worker_pid_of(runner), 0);
  // The replacement worker re-ran vadd for the reference: wrong is still caught.
  auto wrong = batch_of({"wrong"});
  const MeasureResult caught = runner->run(wrong.inputs, wrong.builds)[0];
  EXPECT_EQ(caught.error_no, MeasureErrorNo::kWrongAnswer) << caught.error_msg;
  return results[1];
}

TEST(WarmWorker, SegfaultCostsTheWorkerAndTuningGoesOn) {
  const MeasureResult r = warm_between_good_ones("segfault");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "the kernel crashed its worker (killed by SIGSEGV (segmentation fault))");
}

TEST(WarmWorker, ExitCostsTheWorkerAndTuningGoesOn) {
  const MeasureResult r = warm_between_good_ones("exit3");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "the kernel exited its worker (status 3)");
}

TEST(WarmWorker, HangRunsPastTheTimeoutAndTuningGoesOn) {
  const MeasureResult r = warm_between_good_ones("infinite_loop");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRunTimeout);
  EXPECT_EQ(r.error_msg, "ran past the 1 s timeout");
}

TEST(WarmWorker, EveryConfigurationSeesPristineInputs) {
  auto runner = runner_with(Isolation::kWorker);
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "writes_input", "vadd"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

/// True when process `pid` is gone or a zombie.
bool ended(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  if (!(stat >> pid_field >> name >> state)) return true;
  return state == "Z";
}

TEST(WarmWorker, ProcessesAKernelLeftRunningEndWithTheWorker) {
  const std::string file =
      ::testing::TempDir() + "tunekit_sleeper_" + std::to_string(::getpid()) + ".txt";
  ::setenv("TUNEKIT_TEST_SLEEPER_FILE", file.c_str(), 1);
  {
    auto runner = runner_with(Isolation::kWorker);
    ASSERT_TRUE(runner);
    auto batch = batch_of({"leaves_sleeper"});
    EXPECT_TRUE(runner->run(batch.inputs, batch.builds)[0].ok());
  }
  ::unsetenv("TUNEKIT_TEST_SLEEPER_FILE");
  long sleeper = 0;
  ASSERT_TRUE(std::ifstream(file) >> sleeper) << "the kernel did not start its process";
  ::unlink(file.c_str());
  bool gone = ended(sleeper);
  for (int i = 0; i < 200 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    gone = ended(sleeper);
  }
  EXPECT_TRUE(gone) << "process " << sleeper << " outlived the warm worker";
}

}  // namespace
}  // namespace tunekit
