// Tests of the public tunekit::gemm entry points: results against a naive reference, tuning on
// the first call with the winner persisted, and later calls dispatching the stored solution.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../counting_new.hpp"  // counts allocations: included once per test program
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
  // bf16 C (GemmTunableOp_BFloat16_NN): 1.5 * 16 + 0.5 * 3 = 25.5, exact in bf16.
  std::vector<ops::BFloat16> c16(m * n, ops::to_bfloat16(3.0f));
  gemm('n', 'n', m, n, k, 1.5f, ah.data(), m, bh.data(), k, 0.5f, c16.data(), m);
  for (ops::BFloat16 x : c16) ASSERT_EQ(ops::to_float(x), 25.5f);
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

/// A float problem's operands and its GemmParams (column-major, dense leading dimensions).
struct FloatProblem {
  FloatProblem(std::int64_t m_, std::int64_t n_, std::int64_t k_)
      : m(m_),
        n(n_),
        k(k_),
        a(static_cast<std::size_t>(m * k), 0.5f),
        b(static_cast<std::size_t>(k * n), 2.0f),
        c(static_cast<std::size_t>(m * n), 0.0f),
        bias(static_cast<std::size_t>(m), 1.0f) {}
  ops::GemmParams params() {
    ops::GemmParams p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.lda = m;
    p.ldb = k;
    p.ldc = m;
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
    return p;
  }
  std::int64_t m, n, k;
  std::vector<float> a, b, c, bias;
};

/// Calls tunekit::gemm (float) with the fields of `p`.
void call_gemm(const ops::GemmParams& p) {
  gemm(p.transa, p.transb, p.m, p.n, p.k, static_cast<float>(p.alpha),
       static_cast<const float*>(p.a), p.lda, static_cast<const float*>(p.b), p.ldb,
       static_cast<float>(p.beta), static_cast<float*>(p.c), p.ldc);
}

/// The message of the tunekit::Error that `call` throws ("" when it throws none); the code
/// must be kInvalidArgument.
template <class Call>
std::string thrown(Call call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

TEST_F(GemmApiTest, InvalidCallsOfATunedProblemThrowValidatesMessage) {
  FloatProblem problem(12, 5, 9);
  const ops::GemmParams good = problem.params();
  call_gemm(good);  // tunes: calls with the same key are hits from now on
  GemmTunableOp& op = gemm_op();
  ASSERT_TRUE(op.cached_solution(good).has_value());
  const std::size_t tunings = op.tunings();
  const double nan = std::numeric_limits<double>::quiet_NaN();

  // Same key, a bad field outside it: a hit, refused with validate()'s message.
  std::vector<ops::GemmParams> hits;
  auto hit = [&](auto change) {
    ops::GemmParams p = good;
    change(p);
    ASSERT_EQ(p.key(), good.key());
    ASSERT_TRUE(op.cached_solution(p).has_value());
    hits.push_back(p);
  };
  hit([](ops::GemmParams& p) { p.a = nullptr; });
  hit([](ops::GemmParams& p) { p.b = nullptr; });
  hit([](ops::GemmParams& p) { p.c = nullptr; });
  hit([&](ops::GemmParams& p) { p.alpha = nan; });
  hit([](ops::GemmParams& p) { p.beta = std::numeric_limits<double>::infinity(); });
  for (const ops::GemmParams& p : hits) {
    const std::string expected = p.validate().message();
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(thrown([&] { call_gemm(p); }), expected);
    EXPECT_EQ(try_gemm(p).message(), expected);
  }
  ops::GemmParams batch = good;  // only try_gemm can pass a batch count with a plain GEMM
  batch.batch = 3;
  EXPECT_EQ(try_gemm(batch).message(), batch.validate().message());

  // Key fields out of range alias no cached key, even with the same low 32 bits: a miss,
  // validated before anything runs.
  ops::GemmParams wide = good;
  wide.m += std::int64_t{1} << 32;
  wide.lda = wide.m;
  wide.ldc = wide.m;
  EXPECT_EQ(op.cached_solution(wide), std::nullopt);
  EXPECT_EQ(thrown([&] { call_gemm(wide); }), wide.validate().message());
  ops::GemmParams short_ld = good;  // a different key
  short_ld.lda = good.m - 1;
  EXPECT_EQ(thrown([&] { call_gemm(short_ld); }), short_ld.validate().message());
  EXPECT_NE(short_ld.validate().message().find("lda"), std::string::npos);
  // The op called directly validates its misses the same way, and caches nothing for them.
  ops::GemmParams short_ldc = good;
  short_ldc.ldc = 1;
  EXPECT_EQ(op(short_ldc).message(), short_ldc.validate().message());
  EXPECT_EQ(op.cached_solution(short_ldc), std::nullopt);
  EXPECT_EQ(op.tunings(), tunings);

  // Upper-case transposes are the same problem: a hit, no tuning.
  ops::GemmParams upper = good;
  upper.transa = 'N';
  upper.transb = 'N';
  call_gemm(upper);
  for (float x : problem.c) ASSERT_FLOAT_EQ(x, 9.0f);
  EXPECT_EQ(op.tunings(), tunings);
}

TEST_F(GemmApiTest, InvalidBiasAndStridesOfTunedProblemsThrowValidatesMessage) {
  FloatProblem problem(8, 3, 16);
  gemm_and_bias('n', 'n', 8, 3, 16, 1.0f, problem.a.data(), 8, problem.b.data(), 16,
                problem.bias.data(), problem.c.data(), 8);
  ops::GemmParams bias = problem.params();
  bias.kind = ops::GemmKind::kGemmAndBias;
  bias.bias = nullptr;
  ASSERT_TRUE(gemm_op().cached_solution(bias).has_value());
  EXPECT_EQ(thrown([&] {
              gemm_and_bias('n', 'n', 8, 3, 16, 1.0f, problem.a.data(), 8, problem.b.data(), 16,
                            nullptr, problem.c.data(), 8);
            }),
            bias.validate().message());

  const int m = 4, n = 4, k = 4, batch = 2;
  std::vector<float> a(m * k * batch, 1.0f), b(k * n * batch, 1.0f), c(m * n * batch, 0.0f);
  gemm_strided_batched('n', 'n', m, n, k, 1.0f, a.data(), m, m * k, b.data(), k, k * n, 0.0f,
                       c.data(), m, m * n, batch);
  ops::GemmParams strided = problem.params();
  strided.kind = ops::GemmKind::kStridedBatched;
  strided.m = strided.n = strided.k = strided.lda = strided.ldb = strided.ldc = 4;
  strided.batch = batch;
  strided.stride_a = strided.stride_b = 16;
  strided.stride_c = 15;  // the outputs would overlap
  ASSERT_TRUE(gemm_op().cached_solution(strided).has_value());
  EXPECT_EQ(thrown([&] {
              gemm_strided_batched('n', 'n', m, n, k, 1.0f, a.data(), m, m * k, b.data(), k, k * n,
                                   0.0f, c.data(), m, 15, batch);
            }),
            strided.validate().message());
  EXPECT_NE(strided.validate().message().find("stride_c"), std::string::npos);
}

TEST_F(GemmApiTest, PublicHitsAllocateNothing) {
  FloatProblem problem(17, 19, 23);  // a shape no other test tunes
  const ops::GemmParams p = problem.params();
  // Default as the stored result, so that the library called on the hit is known.
  ASSERT_TRUE(tuning_context().add_result({p.op_signature(), p.signature(), "Default", 0.01, ""}));
  call_gemm(p);
  ASSERT_EQ(gemm_op().cached_solution(p), "Default");
  testing::g_allocations = 0;
  testing::g_count_allocations = true;
  for (int i = 0; i < 1000; ++i) call_gemm(p);
  testing::g_count_allocations = false;
  EXPECT_EQ(testing::g_allocations, 0);
  for (float x : problem.c) ASSERT_FLOAT_EQ(x, 23.0f);
}

TEST_F(GemmApiTest, ConcurrentPublicHitsFromTwoThreads) {
  std::vector<FloatProblem> problems;
  for (int t = 0; t < 2; ++t) problems.emplace_back(16, 4, 8);
  call_gemm(problems[0].params());  // tunes once
  const std::size_t tunings = gemm_op().tunings();
  std::vector<std::thread> threads;
  for (FloatProblem& problem : problems) {
    threads.emplace_back([&problem] {
      const ops::GemmParams p = problem.params();
      for (int i = 0; i < 2000; ++i) call_gemm(p);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(gemm_op().tunings(), tunings);
  for (FloatProblem& problem : problems) {
    for (float x : problem.c) ASSERT_FLOAT_EQ(x, 8.0f);
  }
}

}  // namespace
}  // namespace tunekit
