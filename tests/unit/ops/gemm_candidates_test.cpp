// Tests of the GEMM candidates: every candidate against a double-precision reference and
// against Default on fresh random inputs (dtypes, transposes, batches, bias, alpha/beta, edge
// shapes, padded leading dimensions), unsupported cases, and that each runs its own library.
#include "tunekit/ops/gemm_candidates.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ops/gemm_internal.hpp"
#include "ops/wheel_library.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/ops/gemm_plan.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::ops {
namespace {

// The wheels' candidates this CPU's plan leaves out as measured slower (not as wrong) although
// their library is here, so that every check below covers them too.
void add_unplanned_wheels(CandidateList<GemmParams>& list) {
  struct Wheel {
    const char* name;
    const detail::WheelLibrary* lib;
    std::unique_ptr<GemmCandidate> (*make)();
  };
  const Wheel wheels[] = {
      {"mkl", &detail::kMklLibrary, detail::make_mkl},
      {"scipy_openblas", &detail::kScipyOpenblasLibrary, detail::make_scipy_openblas}};
  for (const AbsentGemmCandidate& a : plan_gemm_candidates(hw::cpu(), this_build()).absent) {
    for (const Wheel& w : wheels) {
      if (a.name == w.name && detail::wheel_missing(*w.lib).empty()) list.push_back(w.make());
    }
  }
}

// One list for the whole test program (library copies load once): the plan's, then the
// unplanned wheels.
CandidateList<GemmParams>& candidates() {
  static CandidateList<GemmParams> list = [] {
    CandidateList<GemmParams> l = make_gemm_candidates();
    add_unplanned_wheels(l);
    return l;
  }();
  return list;
}

GemmCandidate& candidate(const std::string& name) {
  for (auto& c : candidates()) {
    if (c->name() == name) return dynamic_cast<GemmCandidate&>(*c);
  }
  ADD_FAILURE() << "no candidate " << name;
  return dynamic_cast<GemmCandidate&>(*candidates()[0]);
}

bool has_candidate(const std::string& name) {
  return std::any_of(candidates().begin(), candidates().end(),
                     [&](const auto& c) { return c->name() == name; });
}

double read_in(const GemmParams& p, const void* base, std::int64_t index) {
  switch (p.dtype) {
    case DType::kFloat:
      return static_cast<const float*>(base)[index];
    case DType::kDouble:
      return static_cast<const double*>(base)[index];
    case DType::kBFloat16:
    case DType::kBFloat16Float:
      return to_float(static_cast<const BFloat16*>(base)[index]);
  }
  return 0;
}
double read_out(const GemmParams& p, const void* base, std::int64_t index) {
  switch (p.dtype) {
    case DType::kDouble:
      return static_cast<const double*>(base)[index];
    case DType::kBFloat16:
      return to_float(static_cast<const BFloat16*>(base)[index]);
    default:
      return static_cast<const float*>(base)[index];
  }
}

// C = alpha op(A) op(B) + beta C (+ bias), in double, into `out` (same layout as C).
std::vector<double> reference(const GemmParams& p, const void* c_initial) {
  const std::int64_t batches = p.kind == GemmKind::kStridedBatched ? p.batch : 1;
  std::vector<double> out(p.c_bytes() / output_element_bytes(p.dtype));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = read_out(p, c_initial, static_cast<std::int64_t>(i));
  for (std::int64_t b = 0; b < batches; ++b) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t i = 0; i < p.m; ++i) {
        double sum = 0;
        for (std::int64_t l = 0; l < p.k; ++l) {
          const std::int64_t ai = p.a_is_n() ? i + l * p.lda : l + i * p.lda;
          const std::int64_t bi = p.b_is_n() ? l + j * p.ldb : j + l * p.ldb;
          sum += read_in(p, p.a, b * p.stride_a + ai) * read_in(p, p.b, b * p.stride_b + bi);
        }
        const std::int64_t ci = b * p.stride_c + i + j * p.ldc;
        double value =
            p.alpha * sum + (p.beta != 0.0 ? p.beta * out[static_cast<std::size_t>(ci)] : 0.0);
        if (p.kind == GemmKind::kGemmAndBias) value += read_out(p, p.bias, i);
        out[static_cast<std::size_t>(ci)] = value;
      }
    }
  }
  return out;
}

double tolerance(const GemmParams& p) {
  // Inputs lie in [-1, 1); bf16 products are exact in float, so float accumulation error
  // dominates for float and bf16 inputs.
  const double per_term = p.dtype == DType::kDouble ? 1e-15 : 2e-7;
  return 16 * per_term * static_cast<double>(p.k + 4) * (1.0 + std::fabs(p.alpha));
}

// The relative error a bf16 C adds: half a bf16 ulp (2^-8 of the value at most).
double output_rounding(const GemmParams& p) { return p.dtype == DType::kBFloat16 ? 1.0 / 256 : 0; }

struct Shape {
  std::int64_t m, n, k;
  std::int64_t pad;  // added to every leading dimension
};

GemmParams make_params(DType dtype, GemmKind kind, char ta, char tb, const Shape& s, double alpha,
                       double beta) {
  GemmParams p;
  p.kind = kind;
  p.dtype = dtype;
  p.transa = ta;
  p.transb = tb;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.lda = (ta == 'n' ? s.m : s.k) + s.pad;
  p.ldb = (tb == 'n' ? s.k : s.n) + s.pad;
  p.ldc = s.m + s.pad;
  p.alpha = alpha;
  p.beta = beta;
  if (kind == GemmKind::kStridedBatched) {
    p.batch = 3;
    p.stride_a = p.lda * (ta == 'n' ? s.k : s.m) + 5;
    p.stride_b = p.ldb * (tb == 'n' ? s.n : s.k) + 7;
    p.stride_c = p.ldc * s.n + 3;
  }
  return p;
}

// Runs every candidate that supports `shape` on fresh random inputs and checks it against the
// double reference and against Default's output (compare_gemm_output with the problem's
// default tolerance, as the tuner's numerical check does). Checks that C's padding is untouched
// and that unsupported problems return kUnsupported from run() too.
void check_all(const GemmParams& shape, std::uint64_t seed, std::map<std::string, int>* ran) {
  auto ws = GemmWorkspace::create(shape, 1, /*random_fill=*/true, seed);
  ASSERT_TRUE(ws) << ws.status().to_string();
  const GemmParams p = (*ws)->bind(0);
  const std::vector<double> expected = reference(p, (*ws)->initial_output());
  const double tol = tolerance(p);
  std::vector<unsigned char> default_output;
  const Tolerance check = p.default_tolerance();
  for (auto& c : candidates()) {
    SCOPED_TRACE(c->name() + " " + p.op_signature() + " " + p.signature() +
                 " alpha=" + std::to_string(p.alpha) + " beta=" + std::to_string(p.beta));
    const Status supported = c->supports(p);
    if (!supported) {
      EXPECT_EQ(supported.code(), StatusCode::kUnsupported) << supported.to_string();
      const Status ran_anyway = c->run(p);
      EXPECT_EQ(ran_anyway.code(), StatusCode::kUnsupported) << ran_anyway.to_string();
      continue;
    }
    const Status prepared = c->prepare(p);
    if (prepared.code() == StatusCode::kUnsupported) continue;  // e.g. libxsmm has no kernel
    ASSERT_TRUE(prepared) << prepared.to_string();
    (*ws)->reset_output(0);
    const Status s = c->run(p);
    ASSERT_TRUE(s) << s.to_string();
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const double got = read_out(p, p.c, static_cast<std::int64_t>(i));
      // Outside the m x n parts (padding, gaps between batches) C must be unchanged.
      const double allowed =
          tol * (1 + std::fabs(expected[i])) + output_rounding(p) * std::fabs(expected[i]);
      if (!(std::fabs(got - expected[i]) <= allowed)) {
        if (bad++ < 3) {
          ADD_FAILURE() << "element " << i << ": got " << got << ", expected " << expected[i];
        }
      }
    }
    EXPECT_EQ(bad, 0);
    if (default_output.empty()) {  // candidates()[0] is Default and supports everything
      default_output.assign(static_cast<const unsigned char*>(p.c),
                            static_cast<const unsigned char*>(p.c) + p.c_bytes());
    } else {
      const Status same =
          compare_gemm_output(p, default_output.data(), p.c, check.atol, check.rtol);
      EXPECT_TRUE(same) << same.to_string();
    }
    if (ran) ++(*ran)[c->name()];
  }
}

const std::vector<Shape>& edge_shapes() {
  static const std::vector<Shape> shapes = {
      {1, 1, 1, 0},    {1, 7, 5, 0},    {7, 1, 5, 2},     {13, 17, 19, 0},
      {33, 65, 31, 3}, {64, 64, 64, 0}, {100, 3, 257, 1}, {5, 40, 1, 4},
  };
  return shapes;
}

class CandidatesTest : public ::testing::Test {
 protected:
  void SetUp() override { set_num_threads(1); }
  void TearDown() override { set_num_threads(0); }
};

TEST_F(CandidatesTest, DefaultComesFirstAndNamesAreUniqueAndCanonical) {
  ASSERT_FALSE(candidates().empty());
  EXPECT_EQ(candidates()[0]->name(), "Default");
  EXPECT_EQ(candidates()[0]->library(), "openblas");
  std::set<std::string> names;
  for (const auto& c : candidates()) {
    EXPECT_TRUE(names.insert(c->name()).second) << c->name();
    EXPECT_EQ(c->name().find_first_of(" ,\n"), std::string::npos) << c->name();
    EXPECT_NE(dynamic_cast<GemmCandidate*>(c.get()), nullptr);
  }
  for (const char* name : {"onednn_matmul", "onednn_sgemm", "libxsmm"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  // The list is the plan for this CPU and build (tests/unit/ops/gemm_plan_test.cpp checks the
  // plans of the project's CPUs), and eigen is offered on every AVX2 or AVX-512 CPU.
  const std::vector<std::string> planned = plan_gemm_candidates(hw::cpu(), this_build()).names();
  std::vector<std::string> listed;
  for (const auto& c : candidates()) listed.push_back(c->name());
  listed.resize(std::min(listed.size(), planned.size()));  // past them: the unplanned wheels
  EXPECT_EQ(listed, planned);
  EXPECT_EQ(names.count("eigen") == 1, hw::cpu().x86_level() >= hw::X86Level::kV3);
  // A second list has the same order.
  auto again = make_gemm_candidates();
  ASSERT_EQ(again.size(), planned.size());
  for (std::size_t i = 0; i < again.size(); ++i)
    EXPECT_EQ(again[i]->name(), candidates()[i]->name());
}

TEST_F(CandidatesTest, FloatEveryTransposeAndEdgeShape) {
  std::map<std::string, int> ran;
  std::uint64_t seed = 1;
  for (const Shape& s : edge_shapes()) {
    for (char ta : {'n', 't'}) {
      for (char tb : {'n', 't'}) {
        check_all(make_params(DType::kFloat, GemmKind::kGemm, ta, tb, s, 1.0, 0.0), seed++, &ran);
      }
    }
  }
  for (const auto& c : candidates()) {
    if (c->name() == "native_decode_bf16") continue;  // bf16 only: DoubleAndBFloat16
    EXPECT_GT(ran[c->name()], 0) << c->name() << " never ran a float problem";
  }
}

TEST_F(CandidatesTest, AlphaAndBeta) {
  std::map<std::string, int> ran;
  std::uint64_t seed = 100;
  for (DType dtype : {DType::kFloat, DType::kDouble, DType::kBFloat16, DType::kBFloat16Float}) {
    for (auto [alpha, beta] : {std::pair{0.5, 0.0}, {1.0, 1.0}, {1.5, -0.75}, {-2.0, 0.25}}) {
      for (char ta : {'n', 't'}) {
        for (char tb : {'n', 't'}) {
          check_all(make_params(dtype, GemmKind::kGemm, ta, tb, {19, 11, 23, 2}, alpha, beta),
                    seed++, &ran);
        }
      }
    }
  }
  EXPECT_GT(ran["Default"], 0);
  EXPECT_GT(ran["onednn_matmul"], 0);
  EXPECT_GT(ran["libxsmm"], 0);  // beta = 1 with alpha = 1
}

TEST_F(CandidatesTest, DoubleAndBFloat16) {
  std::map<std::string, int> ran;
  std::uint64_t seed = 200;
  for (DType dtype : {DType::kDouble, DType::kBFloat16, DType::kBFloat16Float}) {
    for (const Shape& s : edge_shapes()) {
      for (char ta : {'n', 't'}) {
        for (char tb : {'n', 't'}) {
          check_all(make_params(dtype, GemmKind::kGemm, ta, tb, s, 1.0, 0.0), seed++, &ran);
        }
      }
    }
  }
  EXPECT_GT(ran["Default"], 0);
  if (has_candidate("eigen")) {
    EXPECT_GT(ran["eigen"], 0);  // double
  }
  EXPECT_GT(ran["onednn_matmul"], 0);  // bf16, also without AMX/avx512_bf16
  for (const std::string& arch : blis_archs()) EXPECT_GT(ran["blis[arch=" + arch + "]"], 0);
  if (has_candidate("native_decode_bf16")) {
    EXPECT_GT(ran["native_decode_bf16"], 0);  // n <= 16 with transa 't'
  }
}

TEST_F(CandidatesTest, StridedBatched) {
  std::map<std::string, int> ran;
  std::uint64_t seed = 300;
  for (DType dtype : {DType::kFloat, DType::kDouble, DType::kBFloat16, DType::kBFloat16Float}) {
    for (const Shape& s : {Shape{1, 1, 1, 0}, Shape{13, 9, 17, 2}, Shape{32, 32, 32, 0}}) {
      for (char ta : {'n', 't'}) {
        for (char tb : {'n', 't'}) {
          check_all(make_params(dtype, GemmKind::kStridedBatched, ta, tb, s, 1.0, 0.0), seed++,
                    &ran);
          check_all(make_params(dtype, GemmKind::kStridedBatched, ta, tb, s, 0.5, 1.0), seed++,
                    &ran);
        }
      }
    }
  }
  // Broadcast A (stride 0), as an expanded weight in bmm.
  GemmParams broadcast =
      make_params(DType::kFloat, GemmKind::kStridedBatched, 't', 'n', {11, 6, 9, 0}, 1.0, 0.0);
  broadcast.stride_a = 0;
  check_all(broadcast, seed++, &ran);
  for (const auto& c : candidates()) EXPECT_GT(ran[c->name()], 0) << c->name();
}

TEST_F(CandidatesTest, GemmAndBias) {
  std::map<std::string, int> ran;
  std::uint64_t seed = 400;
  for (DType dtype : {DType::kFloat, DType::kDouble, DType::kBFloat16, DType::kBFloat16Float}) {
    for (const Shape& s : {Shape{1, 1, 1, 0}, Shape{37, 5, 29, 3}, Shape{48, 16, 64, 0}}) {
      for (char ta : {'n', 't'}) {
        for (char tb : {'n', 't'}) {
          check_all(make_params(dtype, GemmKind::kGemmAndBias, ta, tb, s, 1.0, 0.0), seed++, &ran);
          check_all(make_params(dtype, GemmKind::kGemmAndBias, ta, tb, s, -0.5, 0.0), seed++, &ran);
        }
      }
    }
  }
  for (const auto& c : candidates()) EXPECT_GT(ran[c->name()], 0) << c->name();
}

TEST_F(CandidatesTest, TwoThreadsOnLargerShapes) {
  set_num_threads(2);
  std::uint64_t seed = 500;
  for (DType dtype : {DType::kFloat, DType::kDouble, DType::kBFloat16, DType::kBFloat16Float}) {
    check_all(make_params(dtype, GemmKind::kGemm, 't', 'n', {256, 33, 320, 0}, 1.0, 0.0), seed++,
              nullptr);
    check_all(make_params(dtype, GemmKind::kGemm, 'n', 't', {200, 150, 101, 5}, 1.0, 1.0), seed++,
              nullptr);
  }
}

TEST_F(CandidatesTest, NaNInOutputIsIgnoredWhenBetaIsZero) {
  GemmParams shape = make_params(DType::kFloat, GemmKind::kGemm, 'n', 'n', {8, 8, 8, 0}, 1.0, 0.0);
  auto ws = GemmWorkspace::create(shape, 1, true, 7);
  ASSERT_TRUE(ws);
  GemmParams p = (*ws)->bind(0);
  for (auto& c : candidates()) {
    if (!c->supports(p) || !c->prepare(p)) continue;
    std::fill_n(static_cast<float*>(p.c), 64, std::numeric_limits<float>::quiet_NaN());
    ASSERT_TRUE(c->run(p));
    for (int i = 0; i < 64; ++i) {
      ASSERT_FALSE(std::isnan(static_cast<float*>(p.c)[i])) << c->name() << " read C with beta 0";
    }
  }
}

// Every candidate that runs bf16 A and B with a float C (BFloat16_float) runs them with a bf16 C
// (BFloat16, upstream's meaning) too, natively or through the bf16-output adapter, and its bf16
// C is its float C rounded (within the bf16-C tolerance of the numerical check).
TEST_F(CandidatesTest, BFloat16OutputOnEveryCandidateMatchesItsFloatOutput) {
  for (char ta : {'n', 't'}) {
    const Shape s{13, 7, 29, 2};
    auto ws16 = GemmWorkspace::create(
        make_params(DType::kBFloat16, GemmKind::kGemm, ta, 'n', s, 1.0, 0.0), 1, true, 11);
    auto ws32 = GemmWorkspace::create(
        make_params(DType::kBFloat16Float, GemmKind::kGemm, ta, 'n', s, 1.0, 0.0), 1, true, 11);
    ASSERT_TRUE(ws16 && ws32);
    const GemmParams p16 = (*ws16)->bind(0), p32 = (*ws32)->bind(0);
    ASSERT_EQ(std::memcmp(p16.a, p32.a, p16.a_bytes()), 0);  // the same bf16 A and B
    const Tolerance t = p16.default_tolerance();
    for (auto& c : candidates()) {
      SCOPED_TRACE(c->name() + " " + p16.signature());
      const bool runs_float = c->supports(p32).is_ok() && c->prepare(p32).is_ok();
      const bool runs_bf16 = c->supports(p16).is_ok() && c->prepare(p16).is_ok();
      EXPECT_EQ(runs_bf16, runs_float);
      if (!runs_bf16 || !runs_float) continue;
      ASSERT_TRUE(c->run(p32));
      ASSERT_TRUE(c->run(p16));
      std::vector<BFloat16> rounded(p32.c_bytes() / sizeof(float));
      to_bfloat16(static_cast<const float*>(p32.c), rounded.data(), rounded.size());
      const Status same = compare_gemm_output(p16, rounded.data(), p16.c, t.atol, t.rtol);
      EXPECT_TRUE(same) << same.to_string();
    }
  }
}

TEST_F(CandidatesTest, BFloat16OutputWithBetaAndBias) {
  std::map<std::string, int> ran;
  std::uint64_t seed = 700;
  for (const Shape& s : {Shape{1, 1, 1, 0}, Shape{21, 6, 35, 3}}) {
    for (char ta : {'n', 't'}) {
      check_all(make_params(DType::kBFloat16, GemmKind::kGemm, ta, 'n', s, 1.25, 0.75), seed++,
                &ran);
      check_all(make_params(DType::kBFloat16, GemmKind::kGemmAndBias, ta, 'n', s, 0.5, 0.0), seed++,
                &ran);
      check_all(make_params(DType::kBFloat16, GemmKind::kStridedBatched, ta, 'n', s, 1.0, -1.0),
                seed++, &ran);
    }
  }
  EXPECT_GT(ran["Default"], 0);
  EXPECT_GT(ran["onednn_matmul"], 0);
  // With beta 0 a bf16 C is not read: NaN there does not reach the output.
  GemmParams shape = make_params(DType::kBFloat16, GemmKind::kGemm, 't', 'n', {8, 8, 8, 0}, 1, 0);
  auto ws = GemmWorkspace::create(shape, 1, true, 7);
  ASSERT_TRUE(ws);
  GemmParams p = (*ws)->bind(0);
  for (auto& c : candidates()) {
    if (!c->supports(p) || !c->prepare(p)) continue;
    std::fill_n(static_cast<BFloat16*>(p.c), 64, to_bfloat16(std::nanf("")));
    ASSERT_TRUE(c->run(p)) << c->name();
    for (int i = 0; i < 64; ++i) {
      ASSERT_FALSE(std::isnan(to_float(static_cast<BFloat16*>(p.c)[i])))
          << c->name() << " read C with beta 0";
    }
  }
}

TEST_F(CandidatesTest, UnsupportedAndInvalidAreStatusesNotCrashes) {
  // Large for libxsmm, double for oneDNN, bf16 for Eigen.
  GemmParams big = make_params(DType::kFloat, GemmKind::kGemm, 'n', 'n', {200, 200, 200, 0}, 1, 0);
  EXPECT_EQ(candidate("libxsmm").supports(big).code(), StatusCode::kUnsupported);
  GemmParams dbl = make_params(DType::kDouble, GemmKind::kGemm, 'n', 'n', {4, 4, 4, 0}, 1, 0);
  EXPECT_EQ(candidate("onednn_sgemm").supports(dbl).code(), StatusCode::kUnsupported);
  EXPECT_EQ(candidate("onednn_matmul").supports(dbl).code(), StatusCode::kUnsupported);
  GemmParams bf = dbl;
  bf.dtype = DType::kBFloat16;
  if (has_candidate("eigen")) {
    EXPECT_EQ(candidate("eigen").supports(bf).code(), StatusCode::kUnsupported);
  }
  GemmParams scaled = make_params(DType::kFloat, GemmKind::kGemm, 'n', 'n', {4, 4, 4, 0}, 2, 0.5);
  EXPECT_EQ(candidate("libxsmm").supports(scaled).code(), StatusCode::kUnsupported);
  EXPECT_NE(candidate("libxsmm").supports(scaled).message().find("alpha"), std::string::npos);
  GemmParams tn = make_params(DType::kFloat, GemmKind::kGemm, 't', 'n', {4, 4, 4, 0}, 1, 0);
  EXPECT_EQ(candidate("libxsmm").supports(tn).code(), StatusCode::kUnsupported);

  // Invalid problems (null operands, bad shapes): kInvalidArgument from every candidate.
  GemmParams null_ops = make_params(DType::kFloat, GemmKind::kGemm, 'n', 'n', {4, 4, 4, 0}, 1, 0);
  GemmParams bad_ld = null_ops;
  bad_ld.lda = 1;
  for (auto& c : candidates()) {
    EXPECT_EQ(c->run(null_ops).code(), StatusCode::kInvalidArgument) << c->name();
    EXPECT_EQ(c->supports(bad_ld).code(), StatusCode::kInvalidArgument) << c->name();
    EXPECT_EQ(c->run(bad_ld).code(), StatusCode::kInvalidArgument) << c->name();
  }
}

TEST_F(CandidatesTest, ConcurrentRunsAgree) {
  set_num_threads(1);
  GemmParams shape = make_params(DType::kFloat, GemmKind::kGemm, 'n', 't', {48, 20, 64, 1}, 1, 0);
  for (const char* name : {"Default", "onednn_matmul", "libxsmm", "eigen"}) {
    if (!has_candidate(name)) continue;  // eigen below x86-64-v3
    GemmCandidate& c = candidate(name);
    auto ws = GemmWorkspace::create(shape, 4, true, 9);
    ASSERT_TRUE(ws);
    const Status prepared = c.prepare((*ws)->bind(0));
    ASSERT_TRUE(prepared) << prepared.to_string();
    std::vector<std::thread> threads;
    std::vector<Status> results(4);
    for (std::size_t t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int r = 0; r < 20 && results[t].is_ok(); ++r) results[t] = c.run((*ws)->bind(t));
      });
    }
    for (auto& t : threads) t.join();
    for (std::size_t t = 0; t < 4; ++t) {
      ASSERT_TRUE(results[t]) << name << ": " << results[t].to_string();
      EXPECT_TRUE(compare_gemm_output(shape, (*ws)->bind(0).c, (*ws)->bind(t).c, 0, 0)) << name;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Each candidate runs its own library.

TEST(CandidateLibraries, DefaultRunsTheLinkedOpenBlas) {
  auto b = candidate("Default").binding();
  ASSERT_TRUE(b) << b.status().to_string();
  EXPECT_EQ(b->symbol, "cblas_sgemm");
  EXPECT_NE(b->file.find("libopenblas"), std::string::npos) << b->file;
  EXPECT_EQ(b->namespace_id, 0);
  EXPECT_NE(b->detail.find("OpenBLAS"), std::string::npos) << b->detail;  // openblas_get_config()
  EXPECT_FALSE(openblas_core_name().empty());
  EXPECT_NE(b->detail.find(openblas_core_name()), std::string::npos) << b->detail;
}

TEST(CandidateLibraries, OpenBlasCoreCopyRunsInItsOwnNamespace) {
  const std::vector<std::string> cores =
      plan_gemm_candidates(hw::cpu(), this_build()).settings(GemmFamily::kOpenblasCore);
  if (cores.empty()) {
    GTEST_SKIP() << "no OpenBLAS core copy offered here: the linked OpenBLAS already runs "
                 << openblas_core_name() << " on " << hw::cpu().describe();
  }
  for (const std::string& core : cores) {
    std::string name = "openblas[core=" + core + "]";
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    auto b = candidate(name).binding();
    ASSERT_TRUE(b) << b.status().to_string();
    EXPECT_NE(b->file.find("libopenblas"), std::string::npos) << b->file;
    EXPECT_NE(b->namespace_id, 0);
    EXPECT_NE(b->detail.find(core), std::string::npos) << b->detail;
  }
}

TEST(CandidateLibraries, BlisCopiesRunTheirOwnArchitectureInTheirOwnNamespace) {
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(blis_archs().empty());
  GTEST_SKIP() << "no BLIS under AddressSanitizer";
#endif
  const std::vector<std::string> archs = blis_archs();
  ASSERT_FALSE(archs.empty());
  std::set<long> namespaces;
  for (const std::string& arch : archs) {
    auto b = candidate("blis[arch=" + arch + "]").binding();
    ASSERT_TRUE(b) << arch << ": " << b.status().to_string();
    EXPECT_EQ(b->symbol, "bli_sgemm");
    EXPECT_NE(b->file.find("libblis"), std::string::npos) << b->file;
    EXPECT_NE(b->namespace_id, 0) << arch;  // not the main program's (where OpenBLAS's CBLAS is)
    namespaces.insert(b->namespace_id);
    EXPECT_NE(b->detail.find("arch=" + arch), std::string::npos) << b->detail;  // bli_arch_query_id
    EXPECT_NE(b->detail.find("BLIS 0.9"), std::string::npos) << b->detail;
  }
  EXPECT_EQ(namespaces.size(), archs.size());
  // Another candidate list shares the copies (one per architecture per process).
  auto other = make_gemm_candidates();
  for (auto& c : other) {
    if (c->library() != "blis") continue;
    auto b = dynamic_cast<GemmCandidate&>(*c).binding();
    ASSERT_TRUE(b) << b.status().to_string();
    EXPECT_TRUE(namespaces.count(b->namespace_id)) << c->name();
  }
}

TEST(CandidateLibraries, BlisArchsFollowTheEnvironment) {
  const char* saved = std::getenv("TUNEKIT_BLIS_ARCHS");
  const std::string restore = saved != nullptr ? saved : "";
  // Unknown names, archs this CPU cannot run (knl needs AVX512PF/ER) and repeats are dropped.
  setenv("TUNEKIT_BLIS_ARCHS", " haswell,knl ,bogus,generic,haswell", 1);
  const std::vector<std::string> archs = blis_archs();
  if (saved != nullptr) {
    setenv("TUNEKIT_BLIS_ARCHS", restore.c_str(), 1);
  } else {
    unsetenv("TUNEKIT_BLIS_ARCHS");
  }
#if defined(__SANITIZE_ADDRESS__)
  EXPECT_TRUE(archs.empty());
#else
  std::vector<std::string> expected;
  if (hw::cpu().has_all({"avx2", "fma"})) expected.push_back("haswell");
  expected.push_back("generic");
  EXPECT_EQ(archs, expected);
#endif
}

TEST(CandidateLibraries, OnednnEigenLibxsmm) {
  auto matmul = candidate("onednn_matmul").binding();
  ASSERT_TRUE(matmul);
  EXPECT_NE(matmul->file.find("libdnnl"), std::string::npos) << matmul->file;
  EXPECT_NE(matmul->detail.find("oneDNN 2."), std::string::npos) << matmul->detail;
  auto sgemm = candidate("onednn_sgemm").binding();
  ASSERT_TRUE(sgemm);
  EXPECT_NE(sgemm->file.find("libdnnl"), std::string::npos) << sgemm->file;
  // Both say which ISA oneDNN dispatches to (avx2 on Zen 3, avx512_core_* on AVX-512 CPUs).
  EXPECT_NE(matmul->detail.find(", isa="), std::string::npos) << matmul->detail;
  EXPECT_NE(sgemm->detail.find(", isa="), std::string::npos) << sgemm->detail;
  if (has_candidate("eigen")) {
    auto eigen = candidate("eigen").binding();
    ASSERT_TRUE(eigen) << eigen.status().to_string();
    EXPECT_NE(eigen->detail.find("Eigen 3."), std::string::npos) << eigen->detail;
  }
  auto xsmm = candidate("libxsmm").binding();
  ASSERT_TRUE(xsmm);
  EXPECT_NE(xsmm->detail.find("libxsmm 1."), std::string::npos) << xsmm->detail;
  EXPECT_NE(xsmm->detail.find("target="), std::string::npos) << xsmm->detail;
  EXPECT_EQ(xsmm->namespace_id, 0);
}

TEST(CandidateLibraries, OnednnMatmulBFloat16UsesAmxWhereThereAndStagesBelowAvx512) {
  std::string impls;
  bool amx = true;
  for (DType dtype : {DType::kBFloat16Float, DType::kBFloat16}) {
    GemmParams p = make_params(dtype, GemmKind::kGemm, 't', 'n', {64, 16, 64, 0}, 1, 0);
    auto impl = candidate("onednn_matmul").implementation(p);
    ASSERT_TRUE(impl) << impl.status().to_string();
    // oneDNN 2.6 has bf16 matmul kernels, bf16 C included, from AVX-512 up; below, the
    // candidate stages to float, and a bf16 C goes through a float copy
    // (CandidatesTest.DoubleAndBFloat16 checks its results).
    const bool staged = impl->find("(bf16 staged to f32") != std::string::npos;
    EXPECT_EQ(staged, hw::host_cpu().x86_level() < hw::X86Level::kV4) << *impl;
    amx = amx && impl->find("amx") != std::string::npos;
    impls += " " + *impl;
  }
  if (!hw::host_cpu().has("amx_bf16")) {
    GTEST_SKIP() << "needs amx_bf16 (this CPU: " << hw::host_cpu().describe() << "); oneDNN chose"
                 << impls;
  }
  EXPECT_TRUE(amx) << impls;
}

// ---------------------------------------------------------------------------------------------
// Lists planned for another CPU (hw::ScopedCpuOverride, as TUNEKIT_CPU_FIXTURE): what is offered
// follows the planned CPU, what runs never exceeds the real one.

hw::CpuInfo cpu_fixture(const std::string& name) {
  auto info = hw::load_cpu_fixture(std::string(TUNEKIT_TEST_DATA_DIR) + "/cpu/" + name + ".txt");
  EXPECT_TRUE(info) << info.status().to_string();
  return info ? *info : hw::CpuInfo{};
}

GemmCandidate* find_in(CandidateList<GemmParams>& list, const std::string& name) {
  for (auto& c : list) {
    if (c->name() == name) return dynamic_cast<GemmCandidate*>(c.get());
  }
  return nullptr;
}

// Runs `c` on fresh inputs and checks it against the double reference.
void expect_correct(GemmCandidate& c, const GemmParams& shape, std::uint64_t seed) {
  auto ws = GemmWorkspace::create(shape, 1, /*random_fill=*/true, seed);
  ASSERT_TRUE(ws) << ws.status().to_string();
  const GemmParams p = (*ws)->bind(0);
  const std::vector<double> expected = reference(p, (*ws)->initial_output());
  ASSERT_TRUE(c.prepare(p));
  const Status s = c.run(p);
  ASSERT_TRUE(s) << s.to_string();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double got = read_out(p, p.c, static_cast<std::int64_t>(i));
    ASSERT_LE(std::fabs(got - expected[i]), tolerance(p) * (1 + std::fabs(expected[i])))
        << c.name() << " element " << i;
  }
}

TEST(CpuOverride, CopiesPlannedForAnAvx512CpuAreOfferedButNeverRunHere) {
  if (hw::host_cpu().has("avx512f")) {
    GTEST_SKIP() << "needs a CPU without avx512f (this CPU: " << hw::host_cpu().describe() << ")";
  }
  CandidateList<GemmParams> list;
  {
    hw::ScopedCpuOverride intel(cpu_fixture("intel_xeon_amx"));
    list = make_gemm_candidates();
  }
  const GemmParams p = make_params(DType::kFloat, GemmKind::kGemm, 'n', 'n', {8, 8, 8, 0}, 1, 0);
  auto ws = GemmWorkspace::create(p, 1, true, 3);
  ASSERT_TRUE(ws);
  std::vector<std::string> refused;
  for (const char* name : {"blis[arch=skx]", "openblas[core=skylakex]"}) {
    GemmCandidate* c = find_in(list, name);
    if (c == nullptr) continue;  // no namespaces under AddressSanitizer
    for (const Status& s : {c->prepare((*ws)->bind(0)), c->run((*ws)->bind(0))}) {
      EXPECT_EQ(s.code(), StatusCode::kUnsupported) << name << ": " << s.to_string();
      EXPECT_NE(s.message().find("this CPU (" + hw::host_cpu().describe() + ")"), std::string::npos)
          << s.message();
    }
    refused.push_back(name);
  }
  if (this_build().namespaces) {
    EXPECT_FALSE(refused.empty());
  }
}

TEST(CpuOverride, EigenRunsTheAvx2BuildWhenPlannedForZen3) {
  if (hw::host_cpu().x86_level() < hw::X86Level::kV3) {
    GTEST_SKIP() << "needs avx2 and fma (this CPU: " << hw::host_cpu().describe() << ")";
  }
  set_num_threads(1);
  CandidateList<GemmParams> list;
  {
    hw::ScopedCpuOverride zen3(cpu_fixture("amd_zen3"));
    list = make_gemm_candidates();
  }
  GemmCandidate* eigen = find_in(list, "eigen");
  ASSERT_NE(eigen, nullptr);
  auto b = eigen->binding();
  ASSERT_TRUE(b) << b.status().to_string();
  EXPECT_NE(b->detail.find("x86-64-v3 build"), std::string::npos) << b->detail;
  std::uint64_t seed = 900;
  for (DType dtype : {DType::kFloat, DType::kDouble}) {
    for (const Shape& s : {Shape{13, 17, 19, 0}, Shape{64, 48, 96, 3}}) {
      expect_correct(*eigen, make_params(dtype, GemmKind::kGemm, 't', 'n', s, 1.5, 0.5), seed++);
    }
  }
  set_num_threads(0);
}

TEST(CpuOverride, EigenNeverRunsAboveTheRealCpu) {
  if (hw::host_cpu().x86_level() != hw::X86Level::kV3) {
    GTEST_SKIP() << "needs a CPU with avx2 and without avx512f (this CPU: "
                 << hw::host_cpu().describe() << ")";
  }
  CandidateList<GemmParams> list;
  {
    hw::ScopedCpuOverride intel(cpu_fixture("intel_xeon_amx"));
    list = make_gemm_candidates();
  }
  GemmCandidate* eigen = find_in(list, "eigen");
  ASSERT_NE(eigen, nullptr);
  auto b = eigen->binding();
  ASSERT_TRUE(b) << b.status().to_string();
  EXPECT_NE(b->detail.find("x86-64-v3 build"), std::string::npos) << b->detail;
  expect_correct(*eigen, make_params(DType::kFloat, GemmKind::kGemm, 'n', 't', {9, 5, 7, 1}, 1, 0),
                 950);
}

// ---------------------------------------------------------------------------------------------
// Threads

TEST(Threading, CountIsClampedToUsableCoresAndApplied) {
  const int usable = std::max(1, hw::cpu().usable_cores);
  EXPECT_EQ(set_num_threads(0), usable);
  EXPECT_EQ(num_threads(), usable);
  EXPECT_EQ(set_num_threads(usable + 100), usable);
  EXPECT_EQ(set_num_threads(-3), usable);
  EXPECT_EQ(set_num_threads(1), 1);
  EXPECT_EQ(num_threads(), 1);
  set_num_threads(0);
}

TEST(Threading, SettleIsBounded) {
  const auto waited = settle_threads(std::chrono::milliseconds(5));
  EXPECT_LT(waited, std::chrono::milliseconds(200));
  EXPECT_GE(waited, std::chrono::microseconds(400));  // at least one slice
}

}  // namespace
}  // namespace tunekit::ops
