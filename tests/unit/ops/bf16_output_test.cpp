// Tests of the bf16-output adapter (src/ops/bf16_output.hpp): what the float-C run sees, the
// rounding to bf16, beta and bias widening, untouched padding, and the per-thread scratch.
#include "ops/bf16_output.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <latch>
#include <thread>
#include <vector>

namespace tunekit::ops::detail {
namespace {

// A bf16-C problem of m x n with ldc = m + pad (A and B are never read by the fake runs).
GemmParams bf16_problem(std::int64_t m, std::int64_t n, std::int64_t pad, std::vector<BFloat16>& c,
                        double beta = 0.0) {
  static const BFloat16 operand{};
  GemmParams p;
  p.dtype = DType::kBFloat16;
  p.m = m;
  p.n = n;
  p.k = 1;
  p.lda = m;
  p.ldb = 1;
  p.ldc = m + pad;
  p.beta = beta;
  c.assign(static_cast<std::size_t>(p.ldc * n), to_bfloat16(-7.0f));  // -7: untouched
  p.a = &operand;
  p.b = &operand;
  p.c = c.data();
  return p;
}

TEST(Bf16Output, RunsTheFloatTwinAndRoundsToNearestEven) {
  std::vector<BFloat16> c;
  const GemmParams p = bf16_problem(3, 2, 1, c);
  const float values[] = {1.0f + 0x1p-8f,      // a tie: to the even 1.0
                          1.0f + 3 * 0x1p-8f,  // a tie: to the even 1 + 2^-6
                          1.0f + 0x1p-9f,      // below half an ulp: 1.0
                          -2.5f,
                          std::nanf(""),
                          65504.0f};
  auto run = [&](const GemmParams& twin) {
    EXPECT_EQ(twin.dtype, DType::kBFloat16Float);
    EXPECT_EQ(twin.ldc, p.ldc);
    EXPECT_EQ(twin.a, p.a);
    EXPECT_NE(twin.c, p.c);
    auto* out = static_cast<float*>(twin.c);
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 3; ++i) out[i + j * twin.ldc] = values[i + 3 * j];
    }
    return Status::ok();
  };
  ASSERT_TRUE(run_with_float_output(p, run));
  EXPECT_EQ(c[0].bits, 0x3f80);
  EXPECT_EQ(c[1].bits, 0x3f82);
  EXPECT_EQ(c[2].bits, 0x3f80);
  EXPECT_EQ(to_float(c[3]), -7.0f);  // padding row
  EXPECT_EQ(to_float(c[4]), -2.5f);
  EXPECT_TRUE(std::isnan(to_float(c[5])));
  EXPECT_EQ(c[6].bits, to_bfloat16(65504.0f).bits);
  EXPECT_EQ(to_float(c[7]), -7.0f);
}

TEST(Bf16Output, BetaWidensCFirstAndBiasIsWidened) {
  std::vector<BFloat16> c;
  GemmParams p = bf16_problem(2, 2, 0, c, /*beta=*/0.5);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = to_bfloat16(1.5f + static_cast<float>(i));
  auto add_one = [&](const GemmParams& twin) {
    auto* out = static_cast<float*>(twin.c);
    for (int i = 0; i < 4; ++i) {
      EXPECT_EQ(out[i], 1.5f + static_cast<float>(i));  // C as the float run reads it
      out[i] = static_cast<float>(twin.beta) * out[i] + 1.0f;
    }
    return Status::ok();
  };
  ASSERT_TRUE(run_with_float_output(p, add_one));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(to_float(c[i]), 0.5f * (1.5f + i) + 1.0f);

  p.kind = GemmKind::kGemmAndBias;
  p.beta = 0.0;
  const std::vector<BFloat16> bias = {to_bfloat16(0.25f), to_bfloat16(-4.0f)};
  p.bias = bias.data();
  auto bias_only = [&](const GemmParams& twin) {
    const auto* b = static_cast<const float*>(twin.bias);
    EXPECT_NE(twin.bias, p.bias);
    auto* out = static_cast<float*>(twin.c);
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) out[i + j * 2] = b[i];
    }
    return Status::ok();
  };
  ASSERT_TRUE(run_with_float_output(p, bias_only));
  EXPECT_EQ(to_float(c[0]), 0.25f);
  EXPECT_EQ(to_float(c[1]), -4.0f);
  EXPECT_EQ(to_float(c[3]), -4.0f);
}

TEST(Bf16Output, BatchGapsStayAndAFailedRunLeavesC) {
  std::vector<BFloat16> c;
  GemmParams p = bf16_problem(2, 1, 0, c);
  p.kind = GemmKind::kStridedBatched;
  p.batch = 2;
  p.stride_c = 3;  // one element between the outputs
  c.assign(6, to_bfloat16(-7.0f));
  p.c = c.data();
  auto fill = [](const GemmParams& twin) {
    auto* out = static_cast<float*>(twin.c);
    for (int b = 0; b < 2; ++b) {
      out[b * 3] = 1.0f + static_cast<float>(b);
      out[b * 3 + 1] = 3.0f;
    }
    return Status::ok();
  };
  ASSERT_TRUE(run_with_float_output(p, fill));
  const std::vector<float> want = {1, 3, -7, 2, 3, -7};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(to_float(c[i]), want[i]) << i;

  c.assign(6, to_bfloat16(-7.0f));
  auto fail = [](const GemmParams& twin) {
    static_cast<float*>(twin.c)[0] = 5.0f;
    return Status(StatusCode::kRuntimeError, "library failed");
  };
  EXPECT_EQ(run_with_float_output(p, fail).code(), StatusCode::kRuntimeError);
  for (BFloat16 x : c) EXPECT_EQ(to_float(x), -7.0f);
}

// Runs an m x n problem whose float run writes `value` everywhere; true when C holds it.
bool run_filled(std::int64_t m, std::int64_t n, float value) {
  std::vector<BFloat16> c;
  const GemmParams p = bf16_problem(m, n, 0, c);
  auto fill = [value](const GemmParams& twin) {
    auto* out = static_cast<float*>(twin.c);
    for (std::int64_t i = 0; i < twin.m * twin.n; ++i) out[i] = value;
    return Status::ok();
  };
  if (!run_with_float_output(p, fill)) return false;
  for (BFloat16 x : c) {
    if (to_float(x) != value) return false;
  }
  return true;
}

TEST(Bf16Output, ScratchIsPerThreadGrowOnlyAndReused) {
  ASSERT_TRUE(run_filled(64, 32, 1.0f));
  const void* scratch = float_output_scratch();
  const std::size_t bytes = float_output_scratch_bytes();
  ASSERT_NE(scratch, nullptr);
  EXPECT_GE(bytes, 64u * 32 * sizeof(float));
  ASSERT_TRUE(run_filled(64, 32, 2.0f));  // the same problem again: the same buffer
  EXPECT_EQ(float_output_scratch(), scratch);
  ASSERT_TRUE(run_filled(5, 3, 3.0f));  // a smaller one: kept, not shrunk
  EXPECT_EQ(float_output_scratch(), scratch);
  EXPECT_EQ(float_output_scratch_bytes(), bytes);
  ASSERT_TRUE(run_filled(128, 64, 4.0f));  // a larger one: grown
  EXPECT_GE(float_output_scratch_bytes(), 128u * 64 * sizeof(float));
  const void* grown = float_output_scratch();

  // Other threads have their own scratch, reused across their runs, while this one keeps its.
  constexpr int kThreads = 4;
  std::vector<const void*> seen(kThreads, nullptr);
  std::vector<int> failures(kThreads, 0);
  std::latch all_ran(kThreads);  // every thread keeps its scratch until all have run
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (float_output_scratch() != nullptr) ++failures[t];  // a fresh thread has none
      for (int r = 0; r < 50; ++r) {
        if (!run_filled(48 + t, 16, static_cast<float>(t + 1))) ++failures[t];
        if (r == 0) seen[t] = float_output_scratch();
        if (float_output_scratch() != seen[t]) ++failures[t];
      }
      all_ran.arrive_and_wait();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_NE(seen[t], grown) << "thread " << t;
    for (int u = 0; u < t; ++u) EXPECT_NE(seen[t], seen[u]) << t << " and " << u;
  }
  EXPECT_EQ(float_output_scratch(), grown);
}

}  // namespace
}  // namespace tunekit::ops::detail
