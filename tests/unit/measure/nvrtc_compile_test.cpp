// NVRTC compiles of CUDA kernels (no GPU needed): PTX for compute_XY, the compile log of an
// invalid kernel, defines, and the driver-absent path of the run-time loaded CUDA driver.
#include "tunekit/measure/nvrtc_compile.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "measure/cuda_driver.hpp"

namespace tunekit {
namespace {

constexpr const char* kAxpy = R"(
extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] * UNROLL;
})";

class NvrtcCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!nvrtc_compiled_in()) GTEST_SKIP() << "NVRTC is not built into tunekit";
  }
  std::vector<std::pair<std::string, std::string>> defines_{{"UNROLL", "4"}};
};

TEST_F(NvrtcCompile, ValidKernelGivesPtxForTheArchitecture) {
  auto out = compile_nvrtc(kAxpy, "axpy.cu", {}, defines_, "compute_80");
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_TRUE(out->ok) << out->log;
  EXPECT_NE(out->binary.find(".target sm_80"), std::string::npos);
  EXPECT_NE(out->binary.find(".entry axpy"), std::string::npos);
  EXPECT_EQ(out->target, "compute_80");
}

TEST_F(NvrtcCompile, SmArchitectureGivesCubin) {
  auto out = compile_nvrtc(kAxpy, "axpy.cu", {}, defines_, "sm_80");
  ASSERT_TRUE(out) << out.status().message();
  ASSERT_TRUE(out->ok) << out->log;
  EXPECT_EQ(out->binary.substr(0, 4), std::string("\x7f"
                                                  "ELF"));
}

TEST_F(NvrtcCompile, InvalidKernelGivesTheLog) {
  auto out = compile_nvrtc(kAxpy, "axpy.cu", {}, {}, "compute_80");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_FALSE(out->ok);
  EXPECT_TRUE(out->binary.empty());
  EXPECT_NE(out->log.find("axpy.cu"), std::string::npos) << out->log;
  EXPECT_NE(out->log.find("UNROLL"), std::string::npos) << out->log;
}

TEST_F(NvrtcCompile, UnknownArchitectureIsACompileFailure) {
  auto out = compile_nvrtc(kAxpy, "axpy.cu", {}, defines_, "compute_1");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_FALSE(out->ok);
  EXPECT_FALSE(out->log.empty());
}

TEST_F(NvrtcCompile, FlagsReachTheCompiler) {
  const std::vector<std::string> flags{"-DUNROLL=2", "--use_fast_math"};
  auto out = compile_nvrtc(kAxpy, "axpy.cu", flags, {}, "compute_80");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_TRUE(out->ok) << out->log;
}

#if TUNEKIT_HAVE_CUDA
TEST(CudaDriver, AbsentLibraryIsUnsupportedNamingIt) {
  auto api = cuda::load_driver("libcuda-absent-for-test.so.1");
  ASSERT_FALSE(api);
  EXPECT_EQ(api.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(api.status().message(), "no CUDA driver (libcuda-absent-for-test.so.1 not found)");
}
#endif

}  // namespace
}  // namespace tunekit
