// What one configuration can leave behind for the next in a worker: writes into the runner's
// pristine arguments, reference and verification buffers fault; a configuration that fails
// costs its warm worker, with whatever state it left there; the floating-point environment is
// restored before every trial; the libraries a configuration loads (an OpenMP runtime) stay.
#include <gtest/gtest.h>

#include <string>

#include "kernel_test_problem.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit {
namespace {

using testing::batch_of;

class TrialCarryover : public ::testing::TestWithParam<Isolation> {};

TEST_P(TrialCarryover, WritesIntoTheRunnersCopiesFaultAndLaterTrialsVerify) {
  // scribbles_copies verifies, then writes into the reference, the pristine inputs and the
  // verification buffers from its second call on: that must fault, not make the good
  // configurations after it fail (or verify against a corrupted reference).
  auto runner = testing::vadd_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "scribbles_copies", "vadd_reversed", "vadd", "wrong"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kRuntimeDevice) << results[1].error_msg;
  EXPECT_NE(results[1].error_msg.find("SIGSEGV"), std::string::npos) << results[1].error_msg;
  EXPECT_TRUE(results[2].ok()) << results[2].error_msg;
  EXPECT_TRUE(results[3].ok()) << results[3].error_msg;
  EXPECT_EQ(results[4].error_no, MeasureErrorNo::kWrongAnswer) << results[4].error_msg;
}

TEST_P(TrialCarryover, StateAFailedConfigurationLeftDoesNotReachTheNext) {
  // wrong_and_scribbles fails verification and sets a variable in its process's environment,
  // which reads_scribble would see in the same process.
  auto runner = testing::vadd_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "wrong_and_scribbles", "reads_scribble", "wrong"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kWrongAnswer) << results[1].error_msg;
  EXPECT_TRUE(results[2].ok()) << results[2].error_msg;
  EXPECT_EQ(results[3].error_no, MeasureErrorNo::kWrongAnswer) << results[3].error_msg;
}

TEST_P(TrialCarryover, ARoundingModeAConfigurationSetDoesNotReachTheNext) {
  auto runner = testing::vadd_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "rounds_upward", "rounding_probe"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

TEST_P(TrialCarryover, OpenMpThreadsOfOneConfigurationServeTheNext) {
  // Unloading libgomp with a configuration would leave its pool behind in unmapped code (or
  // crash a later trial when a pool thread was still spinning): openmp_threads fails once its
  // process has more threads than one pool.
  auto runner = testing::vadd_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"openmp_threads", "openmp_threads", "openmp_threads", "openmp_threads"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

INSTANTIATE_TEST_SUITE_P(Isolations, TrialCarryover,
                         ::testing::Values(Isolation::kWorker, Isolation::kProcess),
                         [](const ::testing::TestParamInfo<Isolation>& param) {
                           return param.param == Isolation::kWorker ? "Worker" : "Process";
                         });

TEST(TrialCarryoverInProcess, ARoundingModeAConfigurationSetDoesNotReachTheNext) {
  auto runner = testing::vadd_runner(Isolation::kInProcess);
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "rounds_upward", "rounding_probe"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

TEST(TrialCarryoverWorker, AFailedTrialCostsTheWarmWorker) {
  auto runner = testing::vadd_runner(Isolation::kWorker);
  ASSERT_TRUE(runner);
  const pid_t first = testing::worker_pid_of(runner);
  auto good = batch_of({"vadd", "vadd_reversed"});
  for (const MeasureResult& r : runner->run(good.inputs, good.builds)) EXPECT_TRUE(r.ok());
  EXPECT_EQ(testing::worker_pid_of(runner), first);  // successes keep it warm
  auto bad = batch_of({"wrong"});
  EXPECT_EQ(runner->run(bad.inputs, bad.builds)[0].error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_EQ(testing::worker_pid_of(runner), -1);  // ended at once, the next trial starts a new one
  auto after = batch_of({"vadd"});
  EXPECT_TRUE(runner->run(after.inputs, after.builds)[0].ok());
  EXPECT_GT(testing::worker_pid_of(runner), 0);
  EXPECT_NE(testing::worker_pid_of(runner), first);
}

}  // namespace
}  // namespace tunekit
