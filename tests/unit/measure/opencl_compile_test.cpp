// OpenCL program builds on the selected device (PoCL here): binaries, build logs, defines and
// the device selection variables.
#include "tunekit/measure/opencl_compile.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <utility>
#include <vector>

namespace tunekit {
namespace {

constexpr const char* kVecAdd = R"(
__kernel void vec_add(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = SCALE * (a[i] + b[i]);
})";

class OpenClCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!opencl_compiled_in()) GTEST_SKIP() << "OpenCL is not built into tunekit";
    auto device = opencl_device_description();
    if (!device) GTEST_SKIP() << "no OpenCL device: " << device.status().message();
  }
  std::vector<std::pair<std::string, std::string>> scale_{{"SCALE", "2"}};
};

TEST_F(OpenClCompile, BuildsABinaryWithTheDefines) {
  auto out = compile_opencl_program(kVecAdd, {}, scale_, "vec_add");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_TRUE(out->ok) << out->log;
  EXPECT_FALSE(out->binary.empty());
  EXPECT_FALSE(out->target.empty());
}

TEST_F(OpenClCompile, ADefineHoldingSpacesStaysOneDefinition) {
  const std::vector<std::pair<std::string, std::string>> spaced{{"SCALE", "2 * 1 + 0"}};
  auto out = compile_opencl_program(kVecAdd, {}, spaced, "vec_add");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_TRUE(out->ok) << out->log;
}

TEST_F(OpenClCompile, ErrorsKeepTheSourcesLineNumbers) {
  // Line 4 of kVecAdd uses SCALE; with a definition that does not compile the log says line 4.
  const std::vector<std::pair<std::string, std::string>> broken{{"SCALE", "+ * 2"}};
  auto out = compile_opencl_program(kVecAdd, {}, broken, "vec_add");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_FALSE(out->ok);
  EXPECT_NE(out->log.find(":4:"), std::string::npos) << out->log;
}

TEST_F(OpenClCompile, MissingDefineIsACompileErrorWithTheLog) {
  auto out = compile_opencl_program(kVecAdd, {}, {}, "vec_add");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_FALSE(out->ok);
  EXPECT_TRUE(out->binary.empty());
  EXPECT_NE(out->log.find("SCALE"), std::string::npos) << out->log;
}

TEST_F(OpenClCompile, MissingEntryIsACompileError) {
  auto out = compile_opencl_program(kVecAdd, {}, scale_, "no_such_kernel");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_FALSE(out->ok);
  EXPECT_NE(out->log.find("no kernel named 'no_such_kernel'"), std::string::npos) << out->log;
}

TEST_F(OpenClCompile, FlagsReachTheCompiler) {
  const std::vector<std::string> flags{"-DSCALE=3", "-cl-fast-relaxed-math"};
  auto out = compile_opencl_program(kVecAdd, flags, {}, "vec_add");
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_TRUE(out->ok) << out->log;
}

TEST_F(OpenClCompile, PlatformIndexOutOfRangeNamesTheVariable) {
  setenv("TUNEKIT_OPENCL_PLATFORM", "99", 1);
  auto out = compile_opencl_program(kVecAdd, {}, scale_, "vec_add");
  unsetenv("TUNEKIT_OPENCL_PLATFORM");
  ASSERT_FALSE(out);
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("TUNEKIT_OPENCL_PLATFORM=99"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace tunekit
