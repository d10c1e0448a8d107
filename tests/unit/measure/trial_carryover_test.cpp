// What one configuration can leave behind for the next in a worker: writes into the runner's
// pristine arguments, reference and verification buffers fault; a configuration that fails
// costs its warm worker, with whatever state it left there; the floating-point environment is
// restored before every trial; the libraries a configuration loads (an OpenMP runtime) stay.
#include <gtest/gtest.h>

#include <string>

#include "kernel_test_problem.hpp"
#include "measure/isolated_runner.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit {
namespace {

using testing::batch_of;

std::shared_ptr<Runner> carryover_runner(Isolation isolation) {
  auto runner = make_kernel_runner(testing::vadd_source(), testing::vadd_problem(),
                                   testing::test_options(isolation));
  EXPECT_TRUE(runner.has_value()) << runner.status().to_string();
  return runner.has_value() ? *runner : nullptr;
}

pid_t carryover_worker(const std::shared_ptr<Runner>& runner) {
  auto* isolated = dynamic_cast<measure::IsolatedRunner*>(runner.get());
  return isolated != nullptr ? isolated->worker_pid() : -1;
}

class TrialCarryover : public ::testing::TestWithParam<Isolation> {};

TEST_P(TrialCarryover, WritesIntoTheRunnersCopiesFaultAndLaterTrialsVerify) {
  // scribbles_copies verifies, then writes into the reference, the pristine inputs and the
  // verification buffers from its second call on: that must fault, not make the good
  // configurations after it fail (or verify against a corrupted reference).
  auto runner = carryover_runner(GetParam());
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
  auto runner = carryover_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "wrong_and_scribbles", "reads_scribble", "wrong"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kWrongAnswer) << results[1].error_msg;
  EXPECT_TRUE(results[2].ok()) << results[2].error_msg;
  EXPECT_EQ(results[3].error_no, MeasureErrorNo::kWrongAnswer) << results[3].error_msg;
}

TEST_P(TrialCarryover, ARoundingModeAConfigurationSetDoesNotReachTheNext) {
  auto runner = carryover_runner(GetParam());
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "rounds_upward", "rounding_probe"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

TEST_P(TrialCarryover, OpenMpThreadsOfOneConfigurationServeTheNext) {
  // Unloading libgomp with a configuration would leave its pool behind in unmapped code (or
  // crash a later trial when a pool thread was still spinning): openmp_threads fails once its
  // process has more threads than one pool.
  auto runner = carryover_runner(GetParam());
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
  auto runner = carryover_runner(Isolation::kInProcess);
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "rounds_upward", "rounding_probe"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

TEST(TrialCarryoverWorker, AFailedTrialCostsTheWarmWorker) {
  auto runner = carryover_runner(Isolation::kWorker);
  ASSERT_TRUE(runner);
  const pid_t first = carryover_worker(runner);
  auto good = batch_of({"vadd", "vadd_reversed"});
  for (const MeasureResult& r : runner->run(good.inputs, good.builds)) EXPECT_TRUE(r.ok());
  EXPECT_EQ(carryover_worker(runner), first);  // successes keep it warm
  auto bad = batch_of({"wrong"});
  EXPECT_EQ(runner->run(bad.inputs, bad.builds)[0].error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_EQ(carryover_worker(runner), -1);  // ended at once, the next trial starts a new one
  auto after = batch_of({"vadd"});
  EXPECT_TRUE(runner->run(after.inputs, after.builds)[0].ok());
  EXPECT_GT(carryover_worker(runner), 0);
  EXPECT_NE(carryover_worker(runner), first);
}

}  // namespace
}  // namespace tunekit
