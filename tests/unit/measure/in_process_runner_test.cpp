// The in-process kernel runner on tiny C kernels: measures, verifies against the first valid
// configuration, restores inputs a kernel overwrote, passes failed builds through.
#include <gtest/gtest.h>

#include "kernel_test_problem.hpp"
#include "tunekit/measure/kernel_backend.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit {
namespace {

using testing::batch_of;

std::shared_ptr<Runner> in_process_runner(
    RunnerOptions options = testing::test_options(Isolation::kInProcess)) {
  auto runner = make_kernel_runner(testing::vadd_source(), testing::vadd_problem(), options);
  EXPECT_TRUE(runner.has_value()) << runner.status().to_string();
  return runner.has_value() ? *runner : nullptr;
}

TEST(InProcessRunner, MeasuresGoodKernelsWithPositiveCosts) {
  auto runner = in_process_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "vadd_reversed"});
  auto results = runner->run(batch.inputs, batch.builds);
  ASSERT_EQ(results.size(), 2u);
  for (const MeasureResult& r : results) {
    EXPECT_EQ(r.error_no, MeasureErrorNo::kNoError) << r.error_msg;
    ASSERT_EQ(r.costs_s.size(), 1u);  // 3 repeats, fastest and slowest dropped
    EXPECT_GT(r.costs_s[0], 0.0);
  }
}

TEST(InProcessRunner, WrongAnswerNamesTheFirstBadElement) {
  auto runner = in_process_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd", "wrong"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_NE(results[1].error_msg.find("output 'C' element 17: "), std::string::npos)
      << results[1].error_msg;
  EXPECT_TRUE(results[1].costs_s.empty());
}

TEST(InProcessRunner, AVerificationFunctionDecidesInsteadOfTheTolerances) {
  auto runner = in_process_runner(testing::check_function_options(Isolation::kInProcess));
  ASSERT_TRUE(runner);
  auto batch = batch_of({"wrong", "vadd"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_NE(results[0].error_msg.find(
                "verification function 'check' rejected the outputs: c[17] is not a[17] + b[17]"),
            std::string::npos)
      << results[0].error_msg;
  EXPECT_TRUE(results[1].ok()) << results[1].error_msg;
}

TEST(InProcessRunner, AVerificationFunctionThatDoesNotLoadIsRefused) {
  RunnerOptions options = testing::test_options(Isolation::kInProcess);
  options.verify.function.entry = "no_such_check";
  options.verify_artifact = testing::kernel_path("check_sum");
  auto runner = make_kernel_runner(testing::vadd_source(), testing::vadd_problem(), options);
  ASSERT_FALSE(runner.has_value());
  EXPECT_NE(runner.status().message().find("no verification function 'no_such_check'"),
            std::string::npos)
      << runner.status().message();
}

TEST(InProcessRunner, NextConfigurationSeesPristineInputs) {
  auto runner = in_process_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"writes_input", "vadd", "vadd"});
  auto results = runner->run(batch.inputs, batch.builds);
  for (const MeasureResult& r : results) EXPECT_TRUE(r.ok()) << r.error_msg;
}

TEST(InProcessRunner, FailedBuildPassesThrough) {
  auto runner = in_process_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"vadd"});
  batch.builds[0].error_no = MeasureErrorNo::kCompileHost;
  batch.builds[0].error_msg = "vadd.c:1: error: expected ';'";
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kCompileHost);
  EXPECT_EQ(results[0].error_msg, "vadd.c:1: error: expected ';'");
}

TEST(InProcessRunner, MissingArtefactIsARuntimeFailure) {
  auto runner = in_process_runner();
  ASSERT_TRUE(runner);
  auto batch = batch_of({"no_such_kernel"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kRuntimeDevice);
  EXPECT_NE(results[0].error_msg.find("no_such_kernel.so"), std::string::npos);
}

TEST(InProcessRunner, ReferenceKernelIsRunBeforeTheFirstTrial) {
  RunnerOptions options = testing::test_options(Isolation::kInProcess);
  options.verify.reference = VerifyRule::Reference::kKernel;
  options.reference_artifact = testing::kernel_path("wrong");
  auto runner = in_process_runner(options);
  ASSERT_TRUE(runner);
  // vadd differs from the (wrong) reference in element 17.
  auto batch = batch_of({"vadd", "wrong"});
  auto results = runner->run(batch.inputs, batch.builds);
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_TRUE(results[1].ok()) << results[1].error_msg;
}

TEST(InProcessRunner, ReferenceRuleWithoutArtefactIsRejected) {
  RunnerOptions options = testing::test_options(Isolation::kInProcess);
  options.verify.reference = VerifyRule::Reference::kConfig;
  auto runner = make_kernel_runner(testing::vadd_source(), testing::vadd_problem(), options);
  ASSERT_FALSE(runner.has_value());
  EXPECT_EQ(runner.status().code(), StatusCode::kInvalidArgument);
}

TEST(KernelRunnerFactory, LanguagesNotBuiltInAreUnsupportedNamingTheLanguage) {
  for (KernelLanguage language : {KernelLanguage::kOpenCL, KernelLanguage::kCuda}) {
    if (kernel_backend_available(language)) continue;  // gpu_runner_test.cpp covers them
    KernelSource source = testing::vadd_source();
    source.language = language;
    auto runner = make_kernel_runner(source, testing::vadd_problem(),
                                     testing::test_options(Isolation::kInProcess));
    ASSERT_FALSE(runner.has_value());
    EXPECT_EQ(runner.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(runner.status().message().find(std::string(to_string(language))), std::string::npos);
  }
}

}  // namespace
}  // namespace tunekit
