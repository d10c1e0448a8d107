// Tests of the runtime tracking behind the GEMM candidates: which OpenMP runtime ran last, and
// that prepare() settles thread pools only when the runtime changes.
#include "tunekit/ops/threading.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "ops/gemm_internal.hpp"

namespace tunekit::ops {
namespace {

GemmParams small_problem() {
  auto p = GemmParams::from_signature("GemmTunableOp_float_NN", "nn_16_16_16_ld_16_16_16");
  return *p;
}

TEST(RuntimeTracking, RunsRecordTheirRuntime) {
  set_num_threads(1);
  auto ws = GemmWorkspace::create(small_problem(), 1, true, 3);
  ASSERT_TRUE(ws);
  const GemmParams p = (*ws)->bind(0);
  auto openblas = detail::make_openblas_default();
  ASSERT_TRUE(openblas->prepare(p));
  ASSERT_TRUE(openblas->run(p));
  EXPECT_EQ(detail::last_runtime(), 0);
  const std::vector<std::string> archs = blis_archs();
  if (archs.empty()) GTEST_SKIP() << "no BLIS copies in this build";
  auto blis = detail::make_blis(archs.front());
  ASSERT_TRUE(blis->prepare(p));
  ASSERT_TRUE(blis->run(p));
  auto b = blis->binding();
  ASSERT_TRUE(b);
  EXPECT_NE(b->namespace_id, 0);
  EXPECT_EQ(detail::last_runtime(), b->namespace_id);
  // Preparing a main-runtime candidate now settles (at least one 0.5 ms slice); preparing it
  // again right after its own run does not.
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(openblas->prepare(p));
  const auto switched = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(switched, std::chrono::microseconds(400));
  ASSERT_TRUE(openblas->run(p));
  EXPECT_EQ(detail::last_runtime(), 0);
  set_num_threads(0);
}

}  // namespace
}  // namespace tunekit::ops
