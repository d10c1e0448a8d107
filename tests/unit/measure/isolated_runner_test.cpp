// The isolated kernel runner on tiny C kernels: crashes, exits, hangs and wrong answers are
// failed trials with their reasons, later configurations still run, a killed worker is replaced.
#include "measure/isolated_runner.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "kernel_test_problem.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit {
namespace {

using testing::batch_of;

std::shared_ptr<Runner> isolated_runner(
    RunnerOptions options = testing::test_options(Isolation::kProcess)) {
  auto runner = make_kernel_runner(testing::vadd_source(), testing::vadd_problem(), options);
  EXPECT_TRUE(runner.has_value()) << runner.status().to_string();
  return runner.has_value() ? *runner : nullptr;
}

/// Runs `bad` between two good configurations and returns its result; the good ones must
/// succeed (the runner survives the bad one).
MeasureResult between_good_ones(const std::string& bad) {
  auto runner = isolated_runner();
  if (!runner) return {};
  auto batch = batch_of({"vadd", bad, "vadd_reversed"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_TRUE(results[2].ok()) << results[2].error_msg;
  EXPECT_TRUE(results[1].costs_s.empty());
  return results[1];
}

TEST(IsolatedRunner, MeasuresGoodKernelsWithPositiveCosts) {
  auto runner = isolated_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "vadd_reversed"});
  auto results = runner->run(batch.inputs, batch.builds);
  ASSERT_EQ(results.size(), 2u);
  for (const MeasureResult& r : results) {
    EXPECT_EQ(r.error_no, MeasureErrorNo::kNoError) << r.error_msg;
    ASSERT_EQ(r.costs_s.size(), 1u);
    EXPECT_GT(r.costs_s[0], 0.0);
  }
}

TEST(IsolatedRunner, SegfaultIsAFailedTrial) {
  const MeasureResult r = between_good_ones("segfault");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "killed by SIGSEGV (segmentation fault)");
}

TEST(IsolatedRunner, AbortIsAFailedTrial) {
  const MeasureResult r = between_good_ones("abort");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "killed by SIGABRT (aborted)");
}

TEST(IsolatedRunner, DivisionByZeroIsAFailedTrial) {
  const MeasureResult r = between_good_ones("sigfpe");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "killed by SIGFPE (floating point exception)");
}

TEST(IsolatedRunner, StackOverflowIsAFailedTrial) {
  const MeasureResult r = between_good_ones("stack_overflow");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "killed by SIGSEGV (segmentation fault)");
}

TEST(IsolatedRunner, OverrunFaultsWithoutCorruptingTheReference) {
  // The reference comes from the first configuration (first-valid) and lives in memory the
  // worker shares with its trial children: a kernel writing far past its output must fault
  // before it reaches it, so that the good configurations after it still verify.
  auto runner = isolated_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "overrun", "vadd_reversed", "vadd"});
  auto results = runner->run(batch.inputs, batch.builds);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(results[1].error_msg, "killed by SIGSEGV (segmentation fault)");
  EXPECT_TRUE(results[2].ok()) << results[2].error_msg;
  EXPECT_TRUE(results[3].ok()) << results[3].error_msg;
}

TEST(IsolatedRunner, InfiniteLoopRunsPastTheTimeout) {
  const MeasureResult r = between_good_ones("infinite_loop");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRunTimeout);
  EXPECT_EQ(r.error_msg, "ran past the 1 s timeout");
}

TEST(IsolatedRunner, KernelClosingItsResultPipeAndHangingRunsPastTheTimeout) {
  // The worker sees the pipe close early; it must still time the child out (not wait for it
  // forever and be replaced as a silent worker).
  const MeasureResult r = between_good_ones("closes_fds");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRunTimeout);
  EXPECT_EQ(r.error_msg, "ran past the 1 s timeout");
}

TEST(IsolatedRunner, CrashIsSeenWhileAProcessTheKernelStartedHoldsThePipe) {
  const MeasureResult r = between_good_ones("fork_and_crash");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "killed by SIGSEGV (segmentation fault)");
}

TEST(IsolatedRunner, ExitIsAFailedTrial) {
  const MeasureResult r = between_good_ones("exit3");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(r.error_msg, "the kernel exited the process (status 3)");
}

TEST(IsolatedRunner, WrongAnswerNamesTheFirstBadElement) {
  const MeasureResult r = between_good_ones("wrong");
  EXPECT_EQ(r.error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_EQ(r.error_msg.rfind("output 'C' element 17: ", 0), 0u) << r.error_msg;
  EXPECT_NE(r.error_msg.find("(atol 1e-06, rtol 1e-05)"), std::string::npos) << r.error_msg;
}

TEST(IsolatedRunner, AVerificationFunctionRunsInTheWorker) {
  auto runner = isolated_runner(testing::check_function_options(Isolation::kProcess));
  ASSERT_TRUE(runner);
  auto batch = batch_of({"wrong", "vadd"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_NE(results[0].error_msg.find("rejected the outputs: c[17] is not a[17] + b[17]"),
            std::string::npos)
      << results[0].error_msg;
  EXPECT_TRUE(results[1].ok()) << results[1].error_msg;
}

TEST(IsolatedRunner, NextConfigurationSeesPristineInputs) {
  auto runner = isolated_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"writes_input", "vadd", "vadd"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

TEST(IsolatedRunner, FailedBuildPassesThrough) {
  auto runner = isolated_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "vadd"});
  batch.builds[0].error_no = MeasureErrorNo::kBuildTimeout;
  batch.builds[0].error_msg = "the build ran past its 60 s timeout";
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kBuildTimeout);
  EXPECT_EQ(results[0].error_msg, "the build ran past its 60 s timeout");
  EXPECT_TRUE(results[1].ok()) << results[1].error_msg;
}

TEST(IsolatedRunner, ReferenceComesFromTheFirstValidConfiguration) {
  auto runner = isolated_runner();
  ASSERT_TRUE(runner);
  // The wrong kernel is the first to run without error: vadd then differs from it.
  auto batch = batch_of({"segfault", "wrong", "vadd"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_TRUE(results[1].ok()) << results[1].error_msg;
  EXPECT_EQ(results[2].error_no, MeasureErrorNo::kWrongAnswer) << results[2].error_msg;
}

TEST(IsolatedRunner, WorkerKilledFromOutsideIsReplaced) {
  RunnerOptions options = testing::test_options(Isolation::kProcess);
  options.timing.timeout_s = 30.0;
  auto runner = isolated_runner(options);
  ASSERT_TRUE(runner);
  auto* isolated = dynamic_cast<measure::IsolatedRunner*>(runner.get());
  ASSERT_NE(isolated, nullptr);
  const pid_t first = isolated->worker_pid();
  ASSERT_GT(first, 0);
  auto warmup = batch_of({"vadd"});  // establishes the reference in the first worker
  ASSERT_TRUE(runner->run(warmup.inputs, warmup.builds)[0].ok());
  std::thread killer([first] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    ::kill(first, SIGKILL);
  });
  auto batch = batch_of({"slow", "vadd", "wrong"});
  auto results = runner->run(batch.inputs, batch.builds);
  killer.join();
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_EQ(results[0].error_msg, "the kernel worker died (killed by SIGKILL (killed))");
  EXPECT_TRUE(results[1].ok()) << results[1].error_msg;
  // The new worker re-established the reference from vadd, so wrong is still caught.
  EXPECT_EQ(results[2].error_no, MeasureErrorNo::kWrongAnswer) << results[2].error_msg;
  EXPECT_GT(isolated->worker_pid(), 0);
  EXPECT_NE(isolated->worker_pid(), first);
}

TEST(IsolatedRunner, CrashIsSeenWhenTheTuningProcessIgnoresSigchld) {
  // An ignored SIGCHLD survives exec: a worker started with it could not reap its trial
  // children and would take a crash for "exited (status 0)".
  struct sigaction ignore {};
  struct sigaction previous {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGCHLD, &ignore, &previous), 0);
  auto runner = isolated_runner();
  ::sigaction(SIGCHLD, &previous, nullptr);
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "segfault"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_EQ(results[1].error_msg, "killed by SIGSEGV (segmentation fault)");
}

TEST(IsolatedRunner, WorkerInheritsNoDescriptorOfTheTuningProcess) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // without close-on-exec, as an embedding program might open it
  const int leaked = ::fcntl(fds[1], F_DUPFD, 200);
  ASSERT_GE(leaked, 200);
  auto runner = isolated_runner();
  ASSERT_TRUE(runner);
  auto* isolated = dynamic_cast<measure::IsolatedRunner*>(runner.get());
  ASSERT_NE(isolated, nullptr);
  const std::string path =
      "/proc/" + std::to_string(isolated->worker_pid()) + "/fd/" + std::to_string(leaked);
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << path << " exists";
  for (const int fd : {fds[0], fds[1], leaked}) ::close(fd);
}

TEST(IsolatedRunner, MissingWorkerProgramIsReported) {
  RunnerOptions options = testing::test_options(Isolation::kProcess);
  options.worker_path = "/nonexistent/tunekit-kernel-worker";
  auto runner = make_kernel_runner(testing::vadd_source(), testing::vadd_problem(), options);
  ASSERT_FALSE(runner.has_value());
  EXPECT_NE(runner.status().message().find("/nonexistent/tunekit-kernel-worker"),
            std::string::npos);
}

}  // namespace
}  // namespace tunekit
