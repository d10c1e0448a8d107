// OpenCL kernels end to end on the local OpenCL device (PoCL here): builder plus runner, in the
// calling process and in the persistent worker; a compile error, a wrong answer. CUDA: the
// driver-absent path here, and a whole run where a CUDA driver is present.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "kernel_test_problem.hpp"
#include "tunekit/measure/device_backends.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/measure/kernel_runner.hpp"
#include "tunekit/measure/nvrtc_compile.hpp"
#include "tunekit/measure/opencl_compile.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

// MODE 0: correct; MODE 1: element 17 off by one; any other value does not compile.
constexpr const char* kOpenClVadd = R"(
__kernel void vadd(int n, __global const float* a, __global const float* b, __global float* c) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i] + ((MODE == 1 && i == 17) ? 1.0f : 0.0f);
})";

constexpr const char* kCudaVadd = R"(
extern "C" __global__ void vadd(int n, const float* a, const float* b, float* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i] + ((MODE == 1 && i == 17) ? 1.0f : 0.0f);
})";

class GpuRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunekit_gpu_runner_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    build_.cache_dir = dir_.string();
    build_.n_parallel = 1;
    ASSERT_TRUE(space_.define_knob("MODE", {0, 1, "undefined_name"}).is_ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  KernelSource source(KernelLanguage language, const char* text) const {
    KernelSource s;
    s.name = "vadd";
    s.language = language;
    s.text = text;
    s.entry = "vadd";
    s.launch.global = {"n"};
    s.launch.local = {"8"};
    return s;
  }

  /// Builds and runs the three configurations (good, wrong, compile error).
  std::vector<MeasureResult> measure(const KernelSource& s, Isolation isolation) {
    auto builder = make_kernel_builder(s, build_);
    EXPECT_TRUE(builder) << builder.status().message();
    if (!builder) return {};
    auto runner = make_kernel_runner(s, testing::vadd_problem(), testing::test_options(isolation));
    EXPECT_TRUE(runner) << runner.status().message();
    if (!runner) return {};
    std::vector<MeasureInput> inputs;
    for (std::uint64_t i = 0; i < 3; ++i) inputs.push_back({nullptr, space_.config_at(i)});
    auto builds = (*builder)->build(inputs);
    return (*runner)->run(inputs, builds);
  }

  static void expect_good_wrong_and_compile_error(const std::vector<MeasureResult>& results) {
    ASSERT_EQ(results.size(), 3u);
    EXPECT_TRUE(results[0].ok()) << results[0].error_msg;
    for (double cost : results[0].costs_s) EXPECT_GT(cost, 0.0);
    EXPECT_EQ(results[1].error_no, MeasureErrorNo::kWrongAnswer) << results[1].error_msg;
    EXPECT_NE(results[1].error_msg.find("output 'C' element 17: "), std::string::npos)
        << results[1].error_msg;
    EXPECT_EQ(results[2].error_no, MeasureErrorNo::kCompileDevice) << results[2].error_msg;
    EXPECT_NE(results[2].error_msg.find("undefined_name"), std::string::npos)
        << results[2].error_msg;
  }

  static bool have_opencl(std::string& why) {
    if (!opencl_compiled_in()) {
      why = "OpenCL is not built into tunekit";
      return false;
    }
    auto device = opencl_device_description();
    if (!device) why = device.status().message();
    return device.has_value();
  }

  fs::path dir_;
  BuildOptions build_;
  ConfigSpace space_;
};

TEST_F(GpuRunnerTest, OpenClInProcess) {
  std::string why;
  if (!have_opencl(why)) GTEST_SKIP() << why;
  expect_good_wrong_and_compile_error(
      measure(source(KernelLanguage::kOpenCL, kOpenClVadd), Isolation::kInProcess));
}

TEST_F(GpuRunnerTest, OpenClInThePersistentWorker) {
  std::string why;
  if (!have_opencl(why)) GTEST_SKIP() << why;
  expect_good_wrong_and_compile_error(
      measure(source(KernelLanguage::kOpenCL, kOpenClVadd), Isolation::kProcess));
}

TEST_F(GpuRunnerTest, OpenClBadLaunchGeometryIsARuntimeFailure) {
  std::string why;
  if (!have_opencl(why)) GTEST_SKIP() << why;
  KernelSource s = source(KernelLanguage::kOpenCL, kOpenClVadd);
  s.launch.global = {"n / MISSING"};
  auto builder = make_kernel_builder(s, build_);
  ASSERT_TRUE(builder);
  auto runner =
      make_kernel_runner(s, testing::vadd_problem(), testing::test_options(Isolation::kInProcess));
  ASSERT_TRUE(runner) << runner.status().message();
  std::vector<MeasureInput> inputs{{nullptr, space_.config_at(0)}};
  auto results = (*runner)->run(inputs, (*builder)->build(inputs));
  EXPECT_EQ(results[0].error_no, MeasureErrorNo::kRuntimeDevice) << results[0].error_msg;
  EXPECT_NE(results[0].error_msg.find("'MISSING' is neither a parameter"), std::string::npos)
      << results[0].error_msg;
}

TEST_F(GpuRunnerTest, CudaWithoutDriverIsUnsupported) {
  if (!nvrtc_compiled_in()) GTEST_SKIP() << "CUDA is not built into tunekit";
  if (cuda_runtime_status().is_ok()) GTEST_SKIP() << "a CUDA driver is present";
  auto runner =
      make_kernel_runner(source(KernelLanguage::kCuda, kCudaVadd), testing::vadd_problem(),
                         testing::test_options(Isolation::kInProcess));
  ASSERT_FALSE(runner);
  EXPECT_EQ(runner.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(runner.status().message().find("no CUDA driver"), std::string::npos)
      << runner.status().message();
  // The builder needs no driver.
  EXPECT_TRUE(make_kernel_builder(source(KernelLanguage::kCuda, kCudaVadd), build_));
}

TEST_F(GpuRunnerTest, CudaOnTheDevice) {
  if (!nvrtc_compiled_in()) GTEST_SKIP() << "CUDA is not built into tunekit";
  if (auto st = cuda_runtime_status(); !st) GTEST_SKIP() << st.message();
  const KernelSource s = source(KernelLanguage::kCuda, kCudaVadd);
  expect_good_wrong_and_compile_error(measure(s, Isolation::kInProcess));
  expect_good_wrong_and_compile_error(measure(s, Isolation::kProcess));
}

}  // namespace
}  // namespace tunekit
