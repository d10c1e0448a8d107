// Tests of the public tunekit::gemm entry points: results against a naive reference, tuning on
// the first call with the winner persisted, and later calls dispatching the stored solution.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tunekit/ops/gemm.hpp"

namespace tunekit {
namespace {

class GemmApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = ::testing::TempDir() + "tunekit_gemm_api_" + std::to_string(::getpid()) + ".csv";
    std::remove(file_.c_str());
    TuningContext& ctx = tuning_context();
    ctx.set_filename(file_);
    ctx.enable(true);
    ctx.enable_tuning(true);
    ctx.set_max_tuning_duration_ms(1);
    ctx.set_max_tuning_iterations(2);
  }
  void TearDown() override { std::remove(file_.c_str()); }
  std::string file_;
};

/// Column-major reference: C = alpha op(A) op(B) + beta C.
template <class T>
void reference(char ta, char tb, int m, int n, int k, double alpha, const std::vector<T>& a,
               int lda, const std::vector<T>& b, int ldb, double beta, std::vector<T>& c, int ldc) {
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        const double av = ta == 'n' ? a[i + p * lda] : a[p + i * lda];
        const double bv = tb == 'n' ? b[p + j * ldb] : b[j + p * ldb];
        acc += av * bv;
      }
      c[i + j * ldc] = static_cast<T>(alpha * acc + beta * c[i + j * ldc]);
    }
  }
}

TEST_F(GemmApiTest, FloatMatchesReferenceForEveryTransposeWithPaddedLeadingDims) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (char ta : {'n', 't'}) {
    for (char tb : {'n', 't'}) {
      const int m = 13, n = 7, k = 11;
      const int lda = (ta == 'n' ? m : k) + 3, ldb = (tb == 'n' ? k : n) + 2, ldc = m + 1;
      std::vector<float> a(static_cast<size_t>(lda) * (ta == 'n' ? k : m));
      std::vector<float> b(static_cast<size_t>(ldb) * (tb == 'n' ? n : k));
      std::vector<float> c(static_cast<size_t>(ldc) * n);
      for (auto* v : {&a, &b, &c}) {
        for (auto& x : *v) x = dist(rng);
      }
      std::vector<float> want = c;
      reference(ta, tb, m, n, k, 0.5, a, lda, b, ldb, 2.0, want, ldc);
      gemm(ta, tb, m, n, k, 0.5f, a.data(), lda, b.data(), ldb, 2.0f, c.data(), ldc);
      for (int j = 0; j < n; ++j) {
        for (int i = 0; i < m; ++i) {
          ASSERT_NEAR(c[i + j * ldc], want[i + j * ldc], 1e-4) << ta << tb << " " << i << "," << j;
        }
        // Padding rows below m are never written.
        ASSERT_EQ(c[m + j * ldc], c[m + j * ldc]);
      }
    }
  }
}

TEST_F(GemmApiTest, FirstCallTunesAndPersistsLaterCallsHit) {
  const int m = 24, n = 5, k = 40;
  std::vector<double> a(m * k, 0.25), b(k * n, 2.0), c(m * n, 0.0);
  gemm('n', 'n', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  for (double x : c) ASSERT_DOUBLE_EQ(x, 20.0);
  const auto results = tuning_context().get_results();
  const std::string op = "GemmTunableOp_double_NN";
  const std::string sig = "nn_24_5_40_ld_24_40_24";
  bool found = false;
  for (const auto& r : results) found |= (r.op_signature == op && r.params_signature == sig);
  ASSERT_TRUE(found);
  std::ifstream in(file_);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("Validator,OPENBLAS_VERSION,"), std::string::npos);
  EXPECT_NE(text.find(op + "," + sig + ","), std::string::npos);
  const std::size_t tunings = gemm_op().tunings();
  gemm('n', 'n', m, n, k, 1.0, a.data(), m, b.data(), k, 0.0, c.data(), m);
  EXPECT_EQ(gemm_op().tunings(), tunings);
}

TEST_F(GemmApiTest, BiasAndBatchedAndBf16) {
  const int m = 8, n = 3, k = 16;
  std::vector<float> a(m * k, 1.0f), b(k * n, 0.5f), bias(m), c(m * n, -1.0f);
  for (int i = 0; i < m; ++i) bias[i] = static_cast<float>(i);
  gemm_and_bias('n', 'n', m, n, k, 1.0f, a.data(), m, b.data(), k, bias.data(), c.data(), m);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) ASSERT_NEAR(c[i + j * m], 8.0f + static_cast<float>(i), 1e-4);
  }
  const int batch = 3;
  std::vector<float> ab(m * k * batch), bb(k * n * batch, 1.0f), cb(m * n * batch, 0.0f);
  for (int q = 0; q < batch; ++q) {
    for (int i = 0; i < m * k; ++i) ab[q * m * k + i] = static_cast<float>(q + 1);
  }
  gemm_strided_batched('n', 'n', m, n, k, 1.0f, ab.data(), m, m * k, bb.data(), k, k * n, 0.0f,
                       cb.data(), m, m * n, batch);
  for (int q = 0; q < batch; ++q) ASSERT_NEAR(cb[q * m * n], 16.0f * (q + 1), 1e-3);
  std::vector<ops::BFloat16> ah(m * k, ops::to_bfloat16(0.5f)), bh(k * n, ops::to_bfloat16(2.0f));
  std::vector<float> ch(m * n, 0.0f);
  gemm('n', 'n', m, n, k, 1.0f, ah.data(), m, bh.data(), k, 0.0f, ch.data(), m);
  for (float x : ch) ASSERT_NEAR(x, 16.0f, 1e-2);
}

TEST_F(GemmApiTest, InvalidArgumentsThrowWithTheField) {
  std::vector<float> a(16), b(16), c(16);
  try {
    gemm('n', 'n', 4, 4, 4, 1.0f, a.data(), 2, b.data(), 4, 0.0f, c.data(), 4);
    FAIL() << "lda < m accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("lda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunekit
