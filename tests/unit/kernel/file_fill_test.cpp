// Array data from files ({"fill": {"file": ...}}): the spec field, the size check and the
// buffers filled with the file's bytes (what tunekit.tune_kernel passes NumPy arrays through).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../test_files.hpp"
#include "tunekit/kernel/kernel_spec.hpp"
#include "tunekit/measure/argument_buffers.hpp"

namespace tunekit {
namespace {

using testing::TempDir;

std::string bytes_of(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

/// A spec of one float32 array of 4 elements filled from `file`.
std::string spec_text(const std::string& file) {
  return R"({"name": "k", "source": "k.cpp",
    "arguments": [{"name": "x", "dtype": "float32", "size": 4, "fill": {"file": ")" +
         file + R"("}}], "space": {"params": {"t": [1]}}})";
}

TEST(FileFill, SpecReadsThePathAgainstItsDirectory) {
  TempDir dir;
  dir.write("k.cpp", "extern \"C\" void k(float* x) {}\n");
  dir.write("x.bin", bytes_of({1.f, 2.f, 3.f, 4.f}));
  auto spec = load_kernel_spec(dir.write("spec.json", spec_text("x.bin")));
  ASSERT_TRUE(spec) << spec.status().message();
  const ArgFill& fill = spec->problem.arguments[0].fill;
  EXPECT_EQ(fill.kind, FillKind::kFile);
  EXPECT_EQ(fill.path, dir.file("x.bin"));
}

TEST(FileFill, AFileOfTheWrongSizeIsOneLineNamingIt) {
  TempDir dir;
  dir.write("k.cpp", "extern \"C\" void k(float* x) {}\n");
  dir.write("x.bin", bytes_of({1.f, 2.f}));
  auto spec = load_kernel_spec(dir.write("spec.json", spec_text("x.bin")));
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.status().message(),
            dir.file("spec.json") + ": arguments: data file '" + dir.file("x.bin") +
                "' of argument 'x' holds 8 bytes; 4 float32 elements need 16");
  auto missing = load_kernel_spec(dir.write("spec.json", spec_text("y.bin")));
  ASSERT_FALSE(missing);
  EXPECT_TRUE(testing::contains(missing.status().message(), "cannot read data file"))
      << missing.status().message();
}

TEST(FileFill, BuffersHoldTheFileBytes) {
  TempDir dir;
  KernelProblem problem;
  KernelArgument x;
  x.name = "x";
  x.size = 4;
  x.fill.kind = FillKind::kFile;
  x.fill.path = dir.write("x.bin", bytes_of({1.5f, -2.f, 3.25f, 4.f}));
  problem.arguments.push_back(x);
  auto buffers = ArgumentBuffers::allocate(problem);
  ASSERT_TRUE(buffers);
  buffers->fill();
  const auto* data = static_cast<const float*>(buffers->data(0));
  EXPECT_EQ(data[0], 1.5f);
  EXPECT_EQ(data[2], 3.25f);
  // A file gone by the time the buffers are filled gives NaN, which no verification accepts.
  problem.arguments[0].fill.path = dir.file("gone.bin");
  auto gone = ArgumentBuffers::allocate(problem);
  ASSERT_TRUE(gone);
  gone->fill();
  EXPECT_TRUE(std::isnan(static_cast<const float*>(gone->data(0))[3]));
}

}  // namespace
}  // namespace tunekit
