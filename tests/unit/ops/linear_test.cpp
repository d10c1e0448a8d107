// Tests of ops::Linear (constant weights): results against a plain loop for several token counts
// and leading dimensions, the choice per token count with its pack time, tuning off, bad
// arguments, and the constant-weights candidates refusing a second problem.
#include "tunekit/ops/linear.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/gemm_internal.hpp"
#include "tunekit/ops/native_gemm.hpp"
#include "tunekit/ops/threading.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit::ops {
namespace {

// x rounded to bf16.
std::vector<BFloat16> x16_of(const std::vector<float>& x) {
  std::vector<BFloat16> out(x.size());
  to_bfloat16(x.data(), out.data(), x.size());
  return out;
}

struct Layer {
  std::int64_t out = 96, in = 80, ld_w = 83;
  std::vector<float> w;
  explicit Layer(unsigned seed) : w(static_cast<std::size_t>(out * ld_w)) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (float& v : w) v = dist(gen);
  }
  // y = alpha x W^T + beta y, row-major.
  std::vector<float> expected(std::int64_t tokens, const std::vector<float>& x, std::int64_t ld_x,
                              std::vector<float> y, std::int64_t ld_y, float alpha,
                              float beta) const {
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (std::int64_t o = 0; o < out; ++o) {
        double sum = 0;
        for (std::int64_t i = 0; i < in; ++i) {
          sum += static_cast<double>(x[t * ld_x + i]) * w[o * ld_w + i];
        }
        float& r = y[t * ld_y + o];
        r = static_cast<float>(alpha * sum + (beta == 0.0f ? 0.0 : beta * r));
      }
    }
    return y;
  }
};

class LinearTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tuning_context().set_max_tuning_duration_ms(2);
    tuning_context().set_max_tuning_iterations(5);
    tuning_context().set_rotating_buffer_size(0);
  }
};

TEST_F(LinearTest, EveryTokenCountMatchesAPlainLoopAndReportsItsChoice) {
  Layer layer(3);
  auto linear = Linear::create(layer.out, layer.in, layer.w.data(), layer.ld_w);
  ASSERT_TRUE(linear) << linear.status().to_string();
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t tokens : {1, 7, 16, 40}) {
    for (int call = 0; call < 2; ++call) {  // the tuning call, then the chosen candidate's
      SCOPED_TRACE(testing::Message() << tokens << " tokens, call " << call);
      const std::int64_t ld_x = layer.in + 1, ld_y = layer.out + 2;
      std::vector<float> x(static_cast<std::size_t>(tokens * ld_x)), y(tokens * ld_y);
      for (float& v : x) v = dist(gen);
      for (float& v : y) v = dist(gen);
      const float beta = call == 0 ? 0.0f : 0.5f;
      const auto want = layer.expected(tokens, x, ld_x, y, ld_y, 1.25f, beta);
      ASSERT_TRUE((*linear)->forward(tokens, x.data(), ld_x, y.data(), ld_y, 1.25f, beta));
      for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-4) << i;
    }
    auto choice = (*linear)->choice(tokens);
    ASSERT_TRUE(choice) << choice.status().to_string();
    EXPECT_FALSE(choice->solution.empty());
    EXPECT_GE(choice->pack_ms, 0.0);
  }
  EXPECT_EQ((*linear)->choice(2).status().code(), StatusCode::kNotFound);
}

TEST_F(LinearTest, BadArgumentsAreNamed) {
  Layer layer(1);
  EXPECT_EQ(Linear::create(0, 8, layer.w.data(), 8).status().code(), StatusCode::kInvalidArgument);
  auto ld = Linear::create(8, 8, layer.w.data(), 7);
  ASSERT_FALSE(ld);
  EXPECT_NE(ld.status().message().find("ld_w"), std::string::npos);
  EXPECT_EQ(Linear::create(8, 8, static_cast<const float*>(nullptr), 8).status().code(),
            StatusCode::kInvalidArgument);
  auto linear = Linear::create(8, 8, layer.w.data(), 8);
  ASSERT_TRUE(linear);
  std::vector<float> x(64), y(64);
  EXPECT_TRUE((*linear)->forward(0, x.data(), 8, y.data(), 8));  // nothing to do
  const Status s = (*linear)->forward(-1, x.data(), 8, y.data(), 8);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("tokens"), std::string::npos) << s.message();
  EXPECT_NE((*linear)
                ->forward(2, static_cast<const float*>(nullptr), 8, y.data(), 8)
                .message()
                .find("x is null"),
            std::string::npos);
  EXPECT_NE((*linear)->forward(2, x.data(), 7, y.data(), 8).message().find("ld_x"),
            std::string::npos);
  EXPECT_NE((*linear)->forward(2, x.data(), 8, y.data(), 7).message().find("ld_y"),
            std::string::npos);
  const Status nan_alpha = (*linear)->forward(2, x.data(), 8, y.data(), 8, std::nanf(""));
  EXPECT_EQ(nan_alpha.message().rfind("Linear: ", 0), 0U) << nan_alpha.message();
  EXPECT_NE(nan_alpha.message().find("alpha"), std::string::npos) << nan_alpha.message();
}

TEST_F(LinearTest, ConstantWeightCandidatesServeTheOneProblemTheyPackedFor) {
  auto shape = GemmParams::from_signature("GemmTunableOp_float_TN", "tn_40_8_24_ld_24_24_40");
  ASSERT_TRUE(shape);
  auto ws = GemmWorkspace::create(*shape, 1, /*random_fill=*/true, 2);
  ASSERT_TRUE(ws);
  GemmParams p = (*ws)->bind(0);
  GemmParams other = p;
  other.n = 4;  // another problem
  auto onednn = detail::make_onednn_matmul(detail::OnednnWeights::kConstant);
  ASSERT_TRUE(onednn->run(p));
  EXPECT_EQ(onednn->run(other).code(), StatusCode::kUnsupported);
  if (native_tiles().empty()) return;
  auto family = make_native_gemm_template(/*constant_a=*/true);
  auto* t = dynamic_cast<TemplateCandidate<GemmParams>*>(family.get());
  ASSERT_NE(t, nullptr);
  NativeGemmConfig config;
  config.mr = native_tiles()[0].first;
  config.nr = native_tiles()[0].second;
  config.mc = config.mr;
  config.nc = config.nr;
  auto native = t->from_name(solution_name(config));
  ASSERT_TRUE(native);
  ASSERT_TRUE((*native)->run(p));
  EXPECT_EQ((*native)->run(other).code(), StatusCode::kUnsupported);
}

// bf16 weights and x, float y: results against a plain loop on the rounded values, for decode
// and blocked token counts; x of the other dtype is refused by name.
TEST_F(LinearTest, Bf16WeightsMatchAPlainLoopOnTheRoundedValues) {
  Layer layer(4);
  std::vector<BFloat16> w16(layer.w.size());
  to_bfloat16(layer.w.data(), w16.data(), w16.size());
  to_float(w16.data(), layer.w.data(), w16.size());  // the reference sees the rounded weights
  auto linear = Linear::create(layer.out, layer.in, w16.data(), layer.ld_w);
  ASSERT_TRUE(linear) << linear.status().to_string();
  EXPECT_EQ((*linear)->dtype(), DType::kBFloat16Float);  // bf16 weights and x, float y
  std::mt19937 gen(6);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const std::int64_t ld_x = layer.in + 3, ld_y = layer.out + 1;
  for (std::int64_t tokens : {1, 16, 40}) {
    for (int call = 0; call < 2; ++call) {
      SCOPED_TRACE(testing::Message() << tokens << " tokens, call " << call);
      std::vector<float> x(static_cast<std::size_t>(tokens * ld_x)), y(tokens * ld_y);
      for (float& v : x) v = dist(gen);
      for (float& v : y) v = dist(gen);
      std::vector<BFloat16> x16(x.size());
      to_bfloat16(x.data(), x16.data(), x.size());
      to_float(x16.data(), x.data(), x.size());
      const float beta = call == 0 ? 0.0f : 0.5f;
      const auto want = layer.expected(tokens, x, ld_x, y, ld_y, 0.75f, beta);
      ASSERT_TRUE((*linear)->forward(tokens, x16.data(), ld_x, y.data(), ld_y, 0.75f, beta));
      for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-4) << i;
    }
    auto choice = (*linear)->choice(tokens);
    ASSERT_TRUE(choice) << choice.status().to_string();
    EXPECT_FALSE(choice->solution.empty());
  }
  std::vector<float> xf(static_cast<std::size_t>(2 * ld_x)), y(static_cast<std::size_t>(2 * ld_y));
  const Status s = (*linear)->forward(2, xf.data(), ld_x, y.data(), ld_y);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("x is float but the weights are bf16"), std::string::npos)
      << s.message();
  auto fp32 = Linear::create(layer.out, layer.in, layer.w.data(), layer.ld_w);
  ASSERT_TRUE(fp32);
  EXPECT_NE((*fp32)
                ->forward(2, x16_of(xf).data(), ld_x, y.data(), ld_y)
                .message()
                .find("x is bf16 but the weights are float"),
            std::string::npos);
}

// Every configuration of tunekit's blocked kernels with constant bf16 weights widens them once
// as it packs them, and B at every call: the result is the float product of the rounded values.
TEST_F(LinearTest, NativeConstantWeightsTakeBf16Problems) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  auto shape =
      GemmParams::from_signature("GemmTunableOp_BFloat16_float_TN", "tn_40_8_24_ld_27_24_40");
  ASSERT_TRUE(shape) << shape.status().to_string();
  auto ws = GemmWorkspace::create(*shape, 1, /*random_fill=*/true, 2);
  ASSERT_TRUE(ws);
  GemmParams p = (*ws)->bind(0);
  p.alpha = 1.5;
  const auto* a = static_cast<const BFloat16*>(p.a);
  const auto* b = static_cast<const BFloat16*>(p.b);
  std::vector<float> want(static_cast<std::size_t>(p.ldc * p.n));
  for (std::int64_t j = 0; j < p.n; ++j) {
    for (std::int64_t i = 0; i < p.m; ++i) {
      double sum = 0;
      for (std::int64_t q = 0; q < p.k; ++q) {
        sum += static_cast<double>(to_float(a[q + i * p.lda])) * to_float(b[q + j * p.ldb]);
      }
      want[static_cast<std::size_t>(i + j * p.ldc)] = static_cast<float>(p.alpha * sum);
    }
  }
  auto family = make_native_gemm_template(/*constant_a=*/true);
  auto* t = as_template(*family);
  ASSERT_NE(t, nullptr);
  for (const auto& [mr, nr] : native_tiles()) {
    SCOPED_TRACE(testing::Message() << mr << "x" << nr);
    NativeGemmConfig config;
    config.mr = mr;
    config.nr = nr;
    config.kc = 16;  // two depth rounds
    config.mc = mr;
    config.nc = nr;
    auto native = t->from_name(solution_name(config));
    ASSERT_TRUE(native) << native.status().to_string();
    for (int call = 0; call < 2; ++call) {  // the pack, then the packed weights
      ASSERT_TRUE((*native)->run(p));
      const auto* c = static_cast<const float*>(p.c);
      for (std::int64_t j = 0; j < p.n; ++j) {
        for (std::int64_t i = 0; i < p.m; ++i) {
          const auto at = static_cast<std::size_t>(i + j * p.ldc);
          ASSERT_NEAR(c[at], want[at], 1e-4) << i << "," << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tunekit::ops
