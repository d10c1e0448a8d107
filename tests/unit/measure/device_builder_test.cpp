// OpenClBuilder and NvrtcBuilder: cached binaries per configuration, compile errors as
// kCompileDevice with the log's first line, cache hits, the factory by language.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/measure/nvrtc_builder.hpp"
#include "tunekit/measure/nvrtc_compile.hpp"
#include "tunekit/measure/opencl_builder.hpp"
#include "tunekit/measure/opencl_compile.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOpenClScale = R"(
__kernel void scale(__global float* x, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] *= FACTOR;
})";

constexpr const char* kCudaScale = R"(
extern "C" __global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= FACTOR;
})";

class DeviceBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunekit_device_builder_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    options_.cache_dir = dir_.string();
    options_.n_parallel = 2;
    ASSERT_TRUE(space_.define_knob("FACTOR", {2, 3, "oops"}).is_ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  KernelSource source(KernelLanguage language, const char* text) const {
    KernelSource s;
    s.name = "scale";
    s.language = language;
    s.text = text;
    s.entry = "scale";
    return s;
  }
  std::vector<MeasureInput> inputs() const {
    return {{nullptr, space_.config_at(0)},
            {nullptr, space_.config_at(1)},
            {nullptr, space_.config_at(2)}};
  }

  fs::path dir_;
  BuildOptions options_;
  ConfigSpace space_;
};

std::size_t files_in(const fs::path& dir, const std::string& suffix) {
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().string().ends_with(suffix)) ++n;
  }
  return n;
}

TEST_F(DeviceBuilderTest, OpenClBinariesPerConfigAndCompileErrors) {
  if (!opencl_compiled_in()) GTEST_SKIP() << "OpenCL is not built into tunekit";
  if (auto d = opencl_device_description(); !d) GTEST_SKIP() << d.status().message();
  auto builder = make_kernel_builder(source(KernelLanguage::kOpenCL, kOpenClScale), options_);
  ASSERT_TRUE(builder) << builder.status().message();
  auto results = (*builder)->build(inputs());
  ASSERT_EQ(results.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(results[i].error_no, MeasureErrorNo::kNoError) << results[i].error_msg;
    EXPECT_TRUE(results[i].artifact.ends_with(".clbin")) << results[i].artifact;
    EXPECT_TRUE(fs::exists(results[i].artifact));
  }
  EXPECT_NE(results[0].artifact, results[1].artifact);
  EXPECT_EQ(results[2].error_no, MeasureErrorNo::kCompileDevice);
  EXPECT_NE(results[2].error_msg.find("kernel 'scale': "), std::string::npos);
  EXPECT_NE(results[2].error_msg.find("oops"), std::string::npos) << results[2].error_msg;
  EXPECT_EQ(files_in(dir_, ".clbin"), 2u);
  EXPECT_EQ(files_in(dir_, ".failed.txt"), 1u);

  // A second build finds everything in the cache, the failure included.
  auto again = (*builder)->build(inputs());
  EXPECT_EQ(again[0].artifact, results[0].artifact);
  EXPECT_EQ(again[2].error_no, MeasureErrorNo::kCompileDevice);
  EXPECT_EQ(again[2].error_msg, results[2].error_msg);
}

TEST_F(DeviceBuilderTest, NvrtcModulesPerConfigAndCompileErrors) {
  if (!nvrtc_compiled_in()) GTEST_SKIP() << "NVRTC is not built into tunekit";
  options_.cuda_arch = "compute_80";
  auto builder = make_kernel_builder(source(KernelLanguage::kCuda, kCudaScale), options_);
  ASSERT_TRUE(builder) << builder.status().message();
  auto results = (*builder)->build(inputs());
  ASSERT_EQ(results.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(results[i].error_no, MeasureErrorNo::kNoError) << results[i].error_msg;
    EXPECT_TRUE(results[i].artifact.ends_with(".ptx")) << results[i].artifact;
  }
  std::ifstream ptx(results[1].artifact);
  const std::string text((std::istreambuf_iterator<char>(ptx)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(".entry scale"), std::string::npos);
  EXPECT_EQ(results[2].error_no, MeasureErrorNo::kCompileDevice);
  EXPECT_NE(results[2].error_msg.find("oops"), std::string::npos) << results[2].error_msg;
}

TEST_F(DeviceBuilderTest, NvrtcSmArchitectureGivesCubin) {
  if (!nvrtc_compiled_in()) GTEST_SKIP() << "NVRTC is not built into tunekit";
  options_.cuda_arch = "sm_80";
  NvrtcBuilder builder(source(KernelLanguage::kCuda, kCudaScale), options_);
  const BuildResult result = builder.build_config(space_.config_at(0));
  EXPECT_EQ(result.error_no, MeasureErrorNo::kNoError) << result.error_msg;
  EXPECT_TRUE(result.artifact.ends_with(".cubin")) << result.artifact;
}

}  // namespace
}  // namespace tunekit
