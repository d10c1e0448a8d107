// Argument buffers: alignment, guard pages, read-only arrays, seeded fills, output resets and
// the messages of a failed mapping and of the comparison.
#include "tunekit/measure/argument_buffers.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernel_test_problem.hpp"

namespace tunekit {
namespace {

TEST(ArgumentBuffers, ArraysAre64ByteAlignedAndScalarsHaveNone) {
  auto buffers = ArgumentBuffers::allocate(testing::vadd_problem(13));
  ASSERT_TRUE(buffers.has_value());
  EXPECT_EQ(buffers->data(0), nullptr);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffers->data(i)) % 64, 0u);
    EXPECT_EQ(buffers->bytes(i), 13 * sizeof(float));
  }
}

TEST(ArgumentBuffers, EqualSeedsGiveEqualDataAndArgumentsDiffer) {
  auto one = ArgumentBuffers::allocate(testing::vadd_problem());
  auto two = ArgumentBuffers::allocate(testing::vadd_problem());
  ASSERT_TRUE(one.has_value() && two.has_value());
  one->fill();
  two->fill();
  EXPECT_EQ(std::memcmp(one->data(1), two->data(1), one->bytes(1)), 0);
  EXPECT_NE(std::memcmp(one->data(1), one->data(2), one->bytes(1)), 0);
  const float* a = static_cast<const float*>(one->data(1));
  for (int i = 0; i < 1000; ++i) {
    EXPECT_GE(a[i], -1.0f);
    EXPECT_LT(a[i], 1.0f);
  }
}

TEST(ArgumentBuffers, OutputsOnlyFillResetsOutputsAlone) {
  auto buffers = ArgumentBuffers::allocate(testing::vadd_problem(8));
  ASSERT_TRUE(buffers.has_value());
  buffers->fill();
  static_cast<float*>(buffers->data(3))[5] = 9.0f;
  static_cast<float*>(buffers->data(1))[5] = 9.0f;
  buffers->fill(/*outputs_only=*/true);
  EXPECT_EQ(static_cast<float*>(buffers->data(3))[5], 0.0f);
  EXPECT_EQ(static_cast<float*>(buffers->data(1))[5], 9.0f);
}

TEST(ArgumentBuffers, CompareNamesTheFirstElementOutsideTheTolerance) {
  auto got = ArgumentBuffers::allocate(testing::vadd_problem(32));
  auto ref = ArgumentBuffers::allocate(testing::vadd_problem(32));
  ASSERT_TRUE(got.has_value() && ref.has_value());
  got->fill();
  ref->fill();
  EXPECT_TRUE(got->compare_outputs(*ref, 1e-6, 1e-5).is_ok());
  static_cast<float*>(got->data(3))[17] = 1.5f;
  static_cast<float*>(ref->data(3))[17] = 2.5f;
  static_cast<float*>(got->data(3))[20] = 1e-7f;  // within atol: not reported
  const Status status = got->compare_outputs(*ref, 1e-6, 1e-5);
  EXPECT_EQ(status.code(), StatusCode::kWrongResult);
  EXPECT_EQ(status.message(),
            "output 'C' element 17: 1.5 vs reference 2.5 (atol 1e-06, rtol 1e-05)");
}

TEST(ArgumentBuffers, NanWhereTheReferenceHasNoneIsAMismatch) {
  auto got = ArgumentBuffers::allocate(testing::vadd_problem(4));
  auto ref = ArgumentBuffers::allocate(testing::vadd_problem(4));
  ASSERT_TRUE(got.has_value() && ref.has_value());
  static_cast<float*>(got->data(3))[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(got->compare_outputs(*ref, 1.0, 1.0).is_ok());
  static_cast<float*>(ref->data(3))[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(got->compare_outputs(*ref, 1.0, 1.0).is_ok());
}

TEST(ArgumentBuffers, MappingFailureNamesTheBytesAndTheArgument) {
  KernelProblem problem = testing::vadd_problem(4);
  problem.arguments[3].size = std::size_t{1} << 50;  // 4 PiB: more than any address space
  auto buffers = ArgumentBuffers::allocate(problem);
  ASSERT_FALSE(buffers.has_value());
  EXPECT_EQ(
      buffers.status().message().rfind("cannot map 4503599627370496 bytes for argument 'C': ", 0),
      0u)
      << buffers.status().message();
}

/// Writes one float `offset` elements from the start of the output C of `buffers`, with the
/// default action for SIGSEGV (a sanitizer's handler would turn the fault into an exit status,
/// as the kernel worker's trial children also undo).
void poke(ArgumentBuffers& buffers, std::ptrdiff_t offset) {
  std::signal(SIGSEGV, SIG_DFL);
  static_cast<volatile float*>(buffers.data(3))[offset] = 1.0f;
}

TEST(ArgumentBuffersDeathTest, GuardPagesFaultJustPastEitherEnd) {
  const long page = ::sysconf(_SC_PAGESIZE);
  const int n = static_cast<int>(page / sizeof(float));  // C fills its one page exactly
  auto buffers = ArgumentBuffers::allocate(testing::vadd_problem(n));
  ASSERT_TRUE(buffers.has_value());
  poke(*buffers, 0);
  poke(*buffers, n - 1);
  EXPECT_EXIT(poke(*buffers, n), ::testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(poke(*buffers, -1), ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(ArgumentBuffersDeathTest, ReadOnlyArraysFaultOnWrite) {
  auto buffers = ArgumentBuffers::allocate(testing::vadd_problem(16));
  ASSERT_TRUE(buffers.has_value());
  buffers->fill();
  ASSERT_TRUE(buffers->make_read_only().is_ok());
  EXPECT_EQ(static_cast<const float*>(buffers->data(3))[0], 0.0f);  // still readable
  EXPECT_EXIT(poke(*buffers, 0), ::testing::KilledBySignal(SIGSEGV), "");
}

TEST(KernelProblemNames, RoundTripAndRejectUnknown) {
  for (auto l : {KernelLanguage::kCpp, KernelLanguage::kOpenCL, KernelLanguage::kCuda}) {
    EXPECT_EQ(*kernel_language_from_string(to_string(l)), l);
  }
  for (auto d : {ArgDtype::kFloat32, ArgDtype::kFloat64, ArgDtype::kInt32, ArgDtype::kInt64}) {
    EXPECT_EQ(*arg_dtype_from_string(to_string(d)), d);
  }
  EXPECT_FALSE(kernel_language_from_string("fortran").has_value());
  EXPECT_FALSE(arg_dtype_from_string("float16").has_value());
  EXPECT_EQ(testing::vadd_problem(10).array_bytes(), 3 * 10 * sizeof(float));
}

}  // namespace
}  // namespace tunekit
