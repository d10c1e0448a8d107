// Dynamic dims and wildcard fallback on real GEMMs, the reference's test matrix: tuning on/off x
// concrete hit/miss x wildcard hit/miss x NN/NT/TN/TT, record-untuned, and bucket entries.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/gemm_candidates.hpp"
#include "tunekit/tunable/tunable.hpp"

namespace tunekit {
namespace {

using ops::GemmParams;

// Operands of one float GEMM (column-major, dense), with a double-precision reference.
struct Problem {
  GemmParams p;
  std::vector<float> a, b, c;

  Problem(char ta, char tb, std::int64_t m, std::int64_t n, std::int64_t k) {
    p.transa = ta;
    p.transb = tb;
    p.m = m;
    p.n = n;
    p.k = k;
    p.lda = ta == 'n' ? m : k;
    p.ldb = tb == 'n' ? k : n;
    p.ldc = m;
    std::mt19937 gen(static_cast<unsigned>(m * 131 + n * 7 + k));
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    a.resize(static_cast<std::size_t>(m * k));
    b.resize(static_cast<std::size_t>(k * n));
    c.assign(static_cast<std::size_t>(m * n), 0.0f);
    for (float& x : a) x = dist(gen);
    for (float& x : b) x = dist(gen);
  }
  GemmParams params() {
    GemmParams q = p;
    q.a = a.data();
    q.b = b.data();
    q.c = c.data();
    return q;
  }
  // max |C - A*B| over the output.
  double max_error() const {
    double worst = 0;
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t i = 0; i < p.m; ++i) {
        double sum = 0;
        for (std::int64_t l = 0; l < p.k; ++l) {
          const double x = p.transa == 'n' ? a[static_cast<std::size_t>(i + l * p.lda)]
                                           : a[static_cast<std::size_t>(l + i * p.lda)];
          const double y = p.transb == 'n' ? b[static_cast<std::size_t>(l + j * p.ldb)]
                                           : b[static_cast<std::size_t>(j + l * p.ldb)];
          sum += x * y;
        }
        worst = std::max(worst, std::abs(sum - c[static_cast<std::size_t>(i + j * p.ldc)]));
      }
    }
    return worst;
  }
};

// Default plus two other candidates offered on this machine that take float problems of every
// layout (the first two of the list: blis[arch=...], eigen or oneDNN, depending on the CPU), so
// each dispatch path below is visible through a distinct solution name on every machine.
CandidateList<GemmParams> default_and_two_others(std::vector<std::string>* names) {
  GemmParams tn;
  tn.transa = 't';
  tn.m = tn.n = tn.k = tn.lda = tn.ldb = tn.ldc = 8;
  CandidateList<GemmParams> chosen;
  for (auto& c : ops::make_gemm_candidates()) {
    const bool other = c->name() != "Default" && chosen.size() < 3 && c->supports(tn).is_ok();
    if (c->name() == "Default" || other) {
      if (other) names->push_back(c->name());
      chosen.push_back(std::move(c));
    }
  }
  EXPECT_EQ(names->size(), 2u);
  return chosen;
}

class GemmDynamicDims : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    for (const char* v : {"TUNEKIT_DYNAMIC_DIMS", "TUNEKIT_TUNING", "TUNEKIT_WILDCARD_FALLBACK",
                          "TUNEKIT_RECORD_UNTUNED", "TUNEKIT_FILENAME", "TUNEKIT_BLAS_LOG"}) {
      ::unsetenv(v);
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("tunekit_dyn_" + std::to_string(::getpid()) + "_" + GetParam());
    std::filesystem::create_directories(dir_);
    ctx_ = std::make_unique<TuningContext>();
    ctx_->set_filename((dir_ / "results0.csv").string());
    ctx_->set_untuned_filename((dir_ / "untuned0.csv").string());
    ctx_->set_rotating_buffer_size(0);
    ctx_->set_max_tuning_duration_ms(1);
    ctx_->set_max_tuning_iterations(2);
    std::vector<std::string> others;
    op_ = std::make_unique<GemmTunableOp>(default_and_two_others(&others), *ctx_);
    first_ = others.at(0);
    second_ = others.at(1);
    ta_ = GetParam()[0];
    tb_ = GetParam()[1];
  }
  void TearDown() override {
    op_.reset();
    ctx_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::size_t entries() const { return ctx_->get_results().size(); }
  std::size_t wildcard_entries() const {
    std::size_t n = 0;
    for (const auto& r : ctx_->get_results()) n += is_wildcard_signature(r.params_signature);
    return n;
  }
  std::vector<std::string> untuned_lines() const {
    std::ifstream in(dir_ / "untuned0.csv");
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }
  void run(Problem& problem) {
    ASSERT_TRUE((*op_)(problem.params()).is_ok());
    EXPECT_LT(problem.max_error(), 1e-3) << problem.p.signature();
  }
  std::string op_sig() const {
    GemmParams p;
    p.transa = ta_;
    p.transb = tb_;
    return p.op_signature();
  }

  std::filesystem::path dir_;
  std::unique_ptr<TuningContext> ctx_;
  std::unique_ptr<GemmTunableOp> op_;
  char ta_ = 'n', tb_ = 'n';
  std::string first_, second_;  // two non-Default candidates of this machine
};

TEST_P(GemmDynamicDims, TuningOnStoresWildcardsFollowingTheLdRules) {
  // No mask: concrete only.
  Problem plain(ta_, tb_, 37, 23, 29);
  run(plain);
  EXPECT_EQ(entries(), 1u);
  EXPECT_EQ(wildcard_entries(), 0u);

  // M dynamic: concrete + wildcard; lda follows M only for transa 'n', ldc always.
  Problem m41(ta_, tb_, 41, 23, 29);
  {
    DynamicDimsGuard guard(kDynamicM);
    run(m41);
    EXPECT_EQ(entries(), 3u);
    run(m41);  // a repeat adds nothing
    EXPECT_EQ(entries(), 3u);
  }
  const std::string lda = ta_ == 'n' ? "*" : "29";
  const std::string ldb = tb_ == 'n' ? "29" : "23";
  const std::string m_wild = fmt::format("{}{}_*_23_29_ld_{}_{}_*", ta_, tb_, lda, ldb);
  auto wild = ctx_->results_manager().lookup(op_sig(), m_wild);
  ASSERT_TRUE(wild.has_value()) << m_wild;
  EXPECT_EQ(wild->solution, ctx_->results_manager().lookup(op_sig(), m41.p.signature())->solution);

  // A concrete hit (already in the op's lock-free cache) dispatched with N dynamic adds the
  // N wildcard: ldb follows N only for transb 't'.
  run(plain);
  {
    DynamicDimsGuard guard(kDynamicN);
    run(plain);
    run(plain);
  }
  EXPECT_EQ(entries(), 4u);
  const std::string n_wild = fmt::format("{}{}_37_*_29_ld_{}_{}_37", ta_, tb_,
                                         ta_ == 'n' ? "37" : "29", tb_ == 'n' ? "29" : "*");
  EXPECT_TRUE(ctx_->results_manager().lookup(op_sig(), n_wild).has_value()) << n_wild;

  // The process setting applies on threads without a guard; a guard of 0 switches it off.
  ctx_->set_dynamic_dims(kDynamicK);
  {
    DynamicDimsGuard none(0);
    run(plain);
  }
  EXPECT_EQ(entries(), 4u);
  run(plain);
  EXPECT_EQ(entries(), 5u);
  ctx_->set_dynamic_dims(0);

  // The file holds the same entries (persisted wildcards).
  auto file = read_results_file(ctx_->filename());
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->results.size(), 5u);
}

TEST_P(GemmDynamicDims, TuningOffFallbackServesHitsWildcardsAndMissesWithoutNewEntries) {
  // Stored entries with distinct solutions, so each dispatch path is visible.
  Problem tuned(ta_, tb_, 37, 23, 29);
  ASSERT_TRUE(ctx_->add_result({op_sig(), tuned.p.signature(), first_, 0.01, ""}).value());
  ASSERT_TRUE(ctx_->add_result({op_sig(), tuned.p.dynamic_signature(kDynamicM), second_, 0.01, ""})
                  .value());
  ASSERT_EQ(entries(), 2u);
  ctx_->enable_tuning(false);
  ctx_->enable_record_untuned(true);
  ctx_->enable_wildcard_fallback(true);
  Problem concrete_hit(ta_, tb_, 37, 23, 29);
  Problem wildcard_hit(ta_, tb_, 53, 23, 29);  // another M
  Problem miss(ta_, tb_, 31, 19, 17);
  run(concrete_hit);
  run(wildcard_hit);
  run(miss);
  run(wildcard_hit);
  EXPECT_EQ(entries(), 2u);  // nothing new with tuning off
  EXPECT_EQ(op_->cached_solution(concrete_hit.params()), first_);
  EXPECT_EQ(op_->cached_solution(wildcard_hit.params()), second_);
  EXPECT_EQ(op_->cached_solution(miss.params()), "Default");

  // Record-untuned: both misses are recorded (a wildcard hit too), the concrete hit is not.
  const auto lines = untuned_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], op_sig() + "," + wildcard_hit.p.signature());
  EXPECT_EQ(lines[1], op_sig() + "," + miss.p.signature());

  // Fallback off: concrete only; the wildcard problem runs Default.
  ctx_->enable_wildcard_fallback(false);
  run(wildcard_hit);
  EXPECT_EQ(op_->cached_solution(wildcard_hit.params()), "Default");
  EXPECT_EQ(op_->cached_solution(concrete_hit.params()), first_);
}

INSTANTIATE_TEST_SUITE_P(Layouts, GemmDynamicDims, ::testing::Values("nn", "nt", "tn", "tt"),
                         [](const auto& test) { return std::string(test.param); });

TEST(GemmWildcardFallback, TheMostSpecificEntryWinsAndABucketBeatsAPlainWildcard) {
  TuningContext ctx;
  ctx.set_filename("");
  ctx.enable_tuning(false);
  ctx.enable_wildcard_fallback(true);
  std::vector<std::string> others;
  CandidateList<GemmParams> chosen = default_and_two_others(&others);
  ASSERT_EQ(others.size(), 2u);
  // File order: a broad wildcard, then a bucket entry, then an unrelated bucket.
  ASSERT_TRUE(ctx.add_result({"GemmTunableOp_float_TN", "tn_64_*_96_ld_96_96_64", others[0], 1, ""})
                  .value());
  ASSERT_TRUE(
      ctx.add_result({"GemmTunableOp_float_TN", "tn_64_[5-16]_96_ld_96_96_64", others[1], 1, ""})
          .value());
  ASSERT_TRUE(
      ctx.add_result({"GemmTunableOp_float_TN", "tn_64_[17-]_96_ld_96_96_64", "Default", 1, ""})
          .value());
  GemmTunableOp op(std::move(chosen), ctx);
  Problem in_bucket('t', 'n', 64, 9, 96), below('t', 'n', 64, 3, 96), above('t', 'n', 64, 40, 96);
  for (Problem* p : {&in_bucket, &below, &above}) {
    ASSERT_TRUE(op(p->params()).is_ok());
    EXPECT_LT(p->max_error(), 1e-3);
  }
  EXPECT_EQ(op.cached_solution(in_bucket.params()), others[1]);
  EXPECT_EQ(op.cached_solution(below.params()), others[0]);
  EXPECT_EQ(op.cached_solution(above.params()), "Default");
}

}  // namespace
}  // namespace tunekit
