// Shared by the kernel runner tests: the vector-add problem the test kernels share
// (kernel(int n, float* a, float* b, float* c)), paths of the test kernels and inputs for them.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "measure/isolated_runner.hpp"
#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/kernel_runner.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit::testing {

/// n = 1000; a, b random; c zeros, the output.
inline KernelProblem vadd_problem(int n = 1000) {
  KernelProblem p;
  p.seed = 7;
  KernelArgument size{"n", ArgDtype::kInt32, true, static_cast<double>(n), 0, {}, false};
  KernelArgument a{"a", ArgDtype::kFloat32, false, 0.0, static_cast<std::size_t>(n), {}, false};
  KernelArgument b = a;
  b.name = "b";
  KernelArgument c = a;
  c.name = "C";
  c.fill.kind = FillKind::kZeros;
  c.is_output = true;
  p.arguments = {size, a, b, c};
  return p;
}

/// The test kernel `name` (tests/data/kernels/<name>.c) as built.
inline std::string kernel_path(const std::string& name) {
  return std::string(TUNEKIT_TEST_KERNEL_DIR) + "/" + name + ".so";
}

inline KernelSource vadd_source() {
  KernelSource s;
  s.name = "vadd";
  s.language = KernelLanguage::kCpp;
  s.entry = "kernel";
  return s;
}

/// Runner options for tests: tiny timing, 1 s timeout, the built worker.
inline RunnerOptions test_options(Isolation isolation) {
  RunnerOptions o;
  o.isolation = isolation;
  o.timing.number = 2;
  o.timing.repeat = 3;
  o.timing.warmup = 1;
  o.timing.timeout_s = 1.0;
  o.worker_path = TUNEKIT_TEST_KERNEL_WORKER;
  return o;
}

/// A runner of vadd_source() on vadd_problem() with test_options(isolation); nullptr (and a
/// failed expectation naming the status) when it cannot be made.
inline std::shared_ptr<Runner> vadd_runner(Isolation isolation) {
  auto runner = make_kernel_runner(vadd_source(), vadd_problem(), test_options(isolation));
  EXPECT_TRUE(runner.has_value()) << runner.status().to_string();
  return runner.has_value() ? *runner : nullptr;
}

/// The pid of the warm worker of an isolated runner; -1 for an in-process runner.
inline pid_t worker_pid_of(const std::shared_ptr<Runner>& runner) {
  auto* isolated = dynamic_cast<measure::IsolatedRunner*>(runner.get());
  return isolated != nullptr ? isolated->worker_pid() : -1;
}

/// test_options verified by check_sum.c's `check` (c = a + b exactly) instead of a reference.
inline RunnerOptions check_function_options(Isolation isolation) {
  RunnerOptions o = test_options(isolation);
  o.verify.reference = VerifyRule::Reference::kNone;
  o.verify.function.entry = "check";
  o.verify_artifact = kernel_path("check_sum");
  return o;
}

/// Successful builds of the named kernels, and one MeasureInput (empty config) for each.
struct KernelBatch {
  std::vector<MeasureInput> inputs;
  std::vector<BuildResult> builds;
};

inline KernelBatch batch_of(const std::vector<std::string>& names) {
  KernelBatch batch;
  for (const std::string& name : names) {
    batch.inputs.push_back(MeasureInput{});
    BuildResult build;
    build.artifact = kernel_path(name);
    batch.builds.push_back(build);
  }
  return batch;
}

}  // namespace tunekit::testing
