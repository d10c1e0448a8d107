// Tests of tunekit's own GEMM kernels: every micro-kernel this CPU runs against a plain loop for
// all transposes, edge tiles, leading dimensions, alpha/beta, several blocks, both loop orders
// and threads; the decode kernels; solution names; the configuration space's constraints; the
// template candidates in a tuning run.
#include "tunekit/ops/native_gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/native_build.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/threading.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit::ops {
namespace {

// One column-major float problem with its operands and a reference result.
struct Problem {
  GemmParams p;
  std::vector<float> a, b, c, expected;

  Problem(char ta, char tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float beta,
          unsigned seed) {
    p.transa = ta;
    p.transb = tb;
    p.m = m;
    p.n = n;
    p.k = k;
    p.lda = (ta == 'n' ? m : k) + 3;
    p.ldb = (tb == 'n' ? k : n) + 1;
    p.ldc = m + 2;
    p.alpha = alpha;
    p.beta = beta;
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    a.resize(static_cast<std::size_t>(p.lda * (ta == 'n' ? k : m)));
    b.resize(static_cast<std::size_t>(p.ldb * (tb == 'n' ? n : k)));
    c.resize(static_cast<std::size_t>(p.ldc * n));
    for (float& x : a) x = dist(gen);
    for (float& x : b) x = dist(gen);
    for (float& x : c) x = beta == 0.0f ? std::nanf("") : dist(gen);  // beta 0: C is not read
    compute_expected();
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
  }
  // The reference result from a, b and c as they are now.
  void compute_expected() {
    expected = c;
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t i = 0; i < p.m; ++i) {
        double sum = 0;
        for (std::int64_t q = 0; q < p.k; ++q) {
          const float x = p.transa == 'n' ? a[i + q * p.lda] : a[q + i * p.lda];
          const float y = p.transb == 'n' ? b[q + j * p.ldb] : b[j + q * p.ldb];
          sum += static_cast<double>(x) * y;
        }
        float& out = expected[i + j * p.ldc];
        out = static_cast<float>(p.alpha * sum + (p.beta == 0.0 ? 0.0 : p.beta * out));
      }
    }
  }
  // Largest difference from the reference inside C; 1e9 for a NaN inside C (with beta 0 C holds
  // NaN before the call, so a kernel that reads it fails) or a changed padding row.
  double error() const {
    double worst = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const bool pad = static_cast<std::int64_t>(i % p.ldc) >= p.m;
      if (pad) {
        if (!(std::isnan(c[i]) && std::isnan(expected[i])) && c[i] != expected[i]) return 1e9;
        continue;
      }
      const double diff = std::fabs(static_cast<double>(c[i]) - expected[i]);
      if (std::isnan(diff)) return 1e9;
      worst = std::max(worst, diff);
    }
    return worst;
  }
};

TEST(NativeGemm, EveryMicroKernelMatchesAPlainLoop) {
  const auto tiles = native_tiles();
  if (tiles.empty()) GTEST_SKIP() << "no micro-kernel for " << hw::host_cpu().describe();
  unsigned seed = 1;
  for (const auto& [mr, nr] : tiles) {
    for (const char* t : {"nn", "nt", "tn", "tt"}) {
      // {threads, nc in nr, part}: with 3 threads there are enough A blocks for the threads to
      // claim whole blocks, round by round or, when all of B is one column round, with every
      // depth round of a block at once; part "own" splits the rows of C unevenly with 3 threads.
      for (const auto& [threads, nc_panels, part] : {std::tuple{1, 1, "shared"},
                                                     {2, 1, "shared"},
                                                     {3, 1, "shared"},
                                                     {3, 4, "shared"},
                                                     {2, 1, "own"},
                                                     {3, 4, "own"}}) {
        SCOPED_TRACE(testing::Message() << mr << "x" << nr << " " << t << " threads " << threads
                                        << " nc " << nc_panels * nr << " part " << part);
        // Several mc, nc and kc blocks, edge tiles in both dims, beta 0 and not.
        const std::int64_t m = threads == 3 ? 12 * mr + 5 : 3 * mr + 5;
        Problem prob(t[0], t[1], m, 2 * nr + 3, 77, 1.5f, threads == 1 ? 0.0f : 0.5f, seed++);
        NativeGemmConfig config;
        config.mr = mr;
        config.nr = nr;
        config.kc = 32;
        config.mc = threads == 3 ? mr : 2 * mr;
        config.nc = nc_panels * nr;
        config.order = threads == 2 ? "ij" : "ji";
        config.threads = threads;
        config.part = part;
        ASSERT_TRUE(native_gemm(prob.p, config));
        EXPECT_LT(prob.error(), 1e-4);
      }
    }
  }
}

// Constant weights: A is packed on the first call with the call's blocking (kc evened out over
// k) and the pack serves the next calls; the threads claim the packed blocks, or (part "own")
// each takes a contiguous share of them.
TEST(NativeGemm, ConstantWeightsPackedOnceServeLaterCalls) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  const auto [mr, nr] = native_tiles().front();
  Problem prob('t', 'n', 20 * mr + 3, 2 * nr + 1, 77, 1.0f, 0.0f, 31);
  NativeGemmConfig config;
  config.mr = mr;
  config.nr = nr;
  config.kc = 32;
  config.mc = 2 * mr;
  config.threads = 2;
  // nc = nr: B in several column rounds; nc = 4 nr: all of B in one (every depth round of a
  // claimed block at once).
  for (const auto& [nc, part] : {std::pair{nr, "shared"}, {4 * nr, "shared"}, {nr, "own"}}) {
    SCOPED_TRACE(part);
    config.nc = nc;
    config.part = part;
    auto family = make_native_gemm_template(/*constant_a=*/true);
    auto instance = as_template(*family)->from_name(solution_name(config));
    ASSERT_TRUE(instance) << instance.status().to_string();
    for (int call = 0; call < 2; ++call) {
      std::fill(prob.c.begin(), prob.c.end(), 0.0f);
      for (std::size_t i = 0; i < prob.c.size(); ++i) {
        if (static_cast<std::int64_t>(i % prob.p.ldc) >= prob.p.m) prob.c[i] = prob.expected[i];
      }
      ASSERT_TRUE((*instance)->run(prob.p));
      EXPECT_LT(prob.error(), 1e-4) << "nc " << nc << " call " << call;
    }
  }
}

// A stored configuration may name blocks far larger than the problem (the parser takes mc and nc
// up to 2^24, kc up to 2^20): the kernels size their buffers by the problem, not by the name.
TEST(NativeGemm, BlocksLargerThanTheProblemAreCutToIt) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  const auto [mr, nr] = native_tiles().front();
  NativeGemmConfig config;
  config.mr = mr;
  config.nr = nr;
  config.kc = 1 << 20;
  config.mc = (1 << 24) / mr * mr;
  config.nc = (1 << 24) / nr * nr;
  config.threads = 2;
  Problem plain('t', 'n', 5 * mr + 1, 2 * nr + 1, 1000, 1.0f, 0.5f, 51);
  ASSERT_TRUE(native_gemm(plain.p, config));
  EXPECT_LT(plain.error(), 1e-4);
  Problem constant('t', 'n', 5 * mr + 1, 2 * nr + 1, 1000, 1.0f, 0.0f, 52);
  auto family = make_native_gemm_template(/*constant_a=*/true);
  auto instance = as_template(*family)->from_name(solution_name(config));
  ASSERT_TRUE(instance) << instance.status().to_string();
  ASSERT_TRUE((*instance)->run(constant.p));
  EXPECT_LT(constant.error(), 1e-4);
}

TEST(NativeGemm, ZeroAlphaScalesC) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  NativeGemmConfig config;
  config.mr = native_tiles()[0].first;
  config.nr = native_tiles()[0].second;
  config.mc = config.mr;
  config.nc = config.nr;
  for (float beta : {0.0f, 2.0f}) {
    Problem prob('n', 'n', 9, 4, 5, 0.0f, beta, 7);
    ASSERT_TRUE(native_gemm(prob.p, config));
    EXPECT_LT(prob.error(), 1e-5);
  }
}

TEST(NativeGemm, StridedBatchedAndBiasRunThroughTheSameKernels) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  auto shape = GemmParams::from_signature("GemmStridedBatchedTunableOp_float_NT",
                                          "nt_37_11_20_B_3_ld_37_11_37");
  ASSERT_TRUE(shape) << shape.status().to_string();
  auto ws = GemmWorkspace::create(*shape, 2, /*random_fill=*/true, 5);
  ASSERT_TRUE(ws);
  GemmParams mine = (*ws)->bind(0);
  GemmParams ref = (*ws)->bind(1);
  NativeGemmConfig config;
  config.mr = native_tiles()[0].first;
  config.nr = native_tiles()[0].second;
  config.mc = config.mr;
  config.nc = config.nr;
  config.kc = 8;
  ASSERT_TRUE(native_gemm(mine, config));
  auto candidates = make_gemm_candidates();
  ASSERT_TRUE(candidates[0]->run(ref));
  EXPECT_TRUE(mine.compare_output(ref, 1e-4, 1e-4)) << "batched output differs from Default";
}

TEST(NativeGemm, DecodeKernelsMatchAPlainLoop) {
  auto candidates = make_gemm_candidates();
  Candidate<GemmParams>* decode = nullptr;
  for (auto& c : candidates) {
    if (c->name() == kNativeDecodeFamily) decode = c.get();
  }
  if (decode == nullptr) GTEST_SKIP() << "no decode kernels on " << hw::host_cpu().describe();
  auto* family = dynamic_cast<TemplateCandidate<GemmParams>*>(decode);
  ASSERT_NE(family, nullptr);
  unsigned seed = 40;
  for (int rows : {1, 2, 4, 8}) {
    for (std::int64_t n : {1, 3, 9, 16}) {
      for (char tb : {'n', 't'}) {
        SCOPED_TRACE(testing::Message() << "rows " << rows << " n " << n << " " << tb);
        // 16 columns in several passes: the depth is split in chunks (k = 611).
        Problem prob('t', tb, 45, n, n == 16 ? 611 : 77, 1.0f, n == 3 ? 0.25f : 0.0f, seed++);
        auto instance = family->from_name(solution_name(NativeDecodeConfig{rows, 2}));
        ASSERT_TRUE(instance) << instance.status().to_string();
        ASSERT_TRUE((*instance)->run(prob.p));
        EXPECT_LT(prob.error(), 1e-4);
      }
    }
  }
  Problem wide('t', 'n', 8, 17, 8, 1.0f, 0.0f, 1);
  EXPECT_EQ(decode->supports(wide.p).code(), StatusCode::kUnsupported);
  Problem plain_a('n', 'n', 8, 1, 8, 1.0f, 0.0f, 1);
  EXPECT_EQ(decode->supports(plain_a.p).code(), StatusCode::kUnsupported);
}

// Rounds prob's operands to bf16 (their bf16 copies into `a` and `b`), recomputes its reference
// on the rounded values and gives the bf16 problem on the copies, writing prob's C.
GemmParams as_bf16(Problem& prob, std::vector<BFloat16>& a, std::vector<BFloat16>& b) {
  a.resize(prob.a.size());
  b.resize(prob.b.size());
  to_bfloat16(prob.a.data(), a.data(), a.size());
  to_bfloat16(prob.b.data(), b.data(), b.size());
  to_float(a.data(), prob.a.data(), a.size());
  to_float(b.data(), prob.b.data(), b.size());
  prob.compute_expected();
  GemmParams p = prob.p;
  p.dtype = DType::kBFloat16Float;
  p.a = a.data();
  p.b = b.data();
  return p;
}

// The bf16 decode family's rows x columns x layouts on bf16 copies of float problems: the
// reference is the float problem's on the rounded values, so only the fp32 summation order
// differs (and, through AVX512-BF16, denormals are flushed; the values here have none).
void check_bf16_decode(TemplateCandidate<GemmParams>& family, Candidate<GemmParams>& candidate,
                       const std::string& route) {
  unsigned seed = 90;
  for (int rows : {1, 4, 8}) {
    for (std::int64_t n : {1, 5, 16}) {
      for (char tb : {'n', 't'}) {
        SCOPED_TRACE(testing::Message() << route << " rows " << rows << " n " << n << " " << tb);
        Problem prob('t', tb, 37, n, n == 16 ? 613 : 83, 0.5f, n == 5 ? 0.25f : 0.0f, seed++);
        std::vector<BFloat16> a, b;
        const GemmParams p = as_bf16(prob, a, b);
        ASSERT_TRUE(candidate.supports(p)) << candidate.supports(p).to_string();
        auto instance =
            family.from_name(solution_name(NativeDecodeConfig{rows, 2, DType::kBFloat16Float}));
        ASSERT_TRUE(instance) << instance.status().to_string();
        auto binding = dynamic_cast<GemmCandidate&>(**instance).binding();
        ASSERT_TRUE(binding);
        EXPECT_NE(binding->detail.find(route), std::string::npos) << binding->detail;
        ASSERT_TRUE((*instance)->run(p));
        EXPECT_LT(prob.error(), 1e-4);
      }
    }
  }
}

// Both routes where this CPU runs both: through AVX512-BF16, and widened as loaded (planned for
// this CPU without avx512_bf16).
TEST(NativeGemm, Bf16DecodeKernelsMatchAPlainLoopOnTheRoundedValues) {
  auto family_candidate = make_native_decode_template(DType::kBFloat16Float);
  EXPECT_EQ(family_candidate->name(), kNativeDecodeBf16Family);
  auto* family = as_template(*family_candidate);
  ASSERT_NE(family, nullptr);
  const bool pairs = hw::cpu().has("avx512_bf16") && hw::host_cpu().has("avx512_bf16");
  check_bf16_decode(*family, *family_candidate, pairs ? "AVX512-BF16" : "widened");
  if (pairs) {
    hw::CpuInfo without = hw::host_cpu();
    std::erase(without.flags, "avx512_bf16");
    hw::ScopedCpuOverride widened(without);
    check_bf16_decode(*family, *family_candidate, "widened");
  }
  Problem f32('t', 'n', 8, 1, 8, 1.0f, 0.0f, 1);
  EXPECT_EQ(family_candidate->supports(f32.p).code(), StatusCode::kUnsupported);
  EXPECT_EQ(family->from_name("native_decode_f32[rows=4,threads=1]").status().code(),
            StatusCode::kNotFound);
}

// bf16 problems run through the blocked family by their CPU's route: the x86-64-v4 micro-kernels
// (the 384-accumulator tiles) on operands packed as pairs of depths (VDPBF16PS) where the CPU has
// AVX512-BF16, every other tile on bf16 widened to fp32 as it is packed. Every tile, layout and
// driver path (threads claiming or sharing A blocks, all of B packed at once), an odd k (an odd
// last depth round), constant weights packed on the first call and reused. Without AVX512-BF16
// here, tests/emulated runs the pairs route in an emulated CPU (ops.v4_kernels_emulated). Where
// the process may use AMX, the AMX tile (32x32) runs on tile registers; elsewhere NativeAmx tests
// run that route on a software model of the tiles.
TEST(NativeGemm, Bf16ProblemsRunOnEveryTileByTheirCpusRoute) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  const bool pairs_here = hw::host_cpu().has("avx512_bf16");
  unsigned seed = 300;
  auto tiles = native_tiles();
  for (const auto& tile : native_amx_tiles()) tiles.push_back(tile);
  for (const auto& [mr, nr] : tiles) {
    const char* route = mr * nr == 1024                ? "AMX tiles"
                        : pairs_here && mr * nr == 384 ? "AVX512-BF16"
                                                       : "widened";
    for (const char* t : {"nn", "nt", "tn", "tt"}) {
      for (const auto& [threads, nc_panels, part] : {std::tuple{1, 1, "shared"},
                                                     {2, 1, "shared"},
                                                     {3, 1, "shared"},
                                                     {3, 4, "shared"},
                                                     {3, 1, "own"}}) {
        SCOPED_TRACE(testing::Message()
                     << mr << "x" << nr << " " << t << " threads " << threads << " nc "
                     << nc_panels * nr << " " << route << " part " << part);
        const std::int64_t m = threads == 3 ? 12 * mr + 5 : 3 * mr + 5;
        Problem prob(t[0], t[1], m, 2 * nr + 3, 77, 1.5f, threads == 1 ? 0.0f : 0.5f, seed++);
        std::vector<BFloat16> a, b;
        const GemmParams p = as_bf16(prob, a, b);
        NativeGemmConfig config{mr,
                                nr,
                                32,
                                threads == 3 ? mr : 2 * mr,
                                nc_panels * nr,
                                threads == 2 ? "ij" : "ji",
                                threads,
                                part};
        ASSERT_TRUE(native_gemm(p, config));
        EXPECT_LT(prob.error(), 1e-4);
        auto family = make_native_gemm_template(/*constant_a=*/true);
        auto instance = as_template(*family)->from_name(solution_name(config));
        ASSERT_TRUE(instance) << instance.status().to_string();
        auto binding = dynamic_cast<GemmCandidate&>(**instance).binding();
        ASSERT_TRUE(binding);
        EXPECT_NE(binding->detail.find(route), std::string::npos) << binding->detail;
        for (int call = 0; call < 2; ++call) {  // packed on the first call, reused on the second
          prob.compute_expected();
          ASSERT_TRUE((*instance)->run(p));
          EXPECT_LT(prob.error(), 1e-4) << "constant weights, call " << call;
        }
      }
    }
  }
}

// The AMX tile is offered for bf16 problems where this process may use AMX and nowhere else: not
// on a CPU that only plans for AMX (a fixture), not for float problems.
TEST(NativeGemm, AmxTilesServeBf16ProblemsWhereTheProcessMayUseThem) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  GemmParams bf16_problem = Problem('t', 'n', 256, 64, 512, 1.0f, 0.0f, 1).p;
  bf16_problem.dtype = DType::kBFloat16;
  const GemmParams float_problem = Problem('t', 'n', 256, 64, 512, 1.0f, 0.0f, 1).p;
  auto offers_amx = [](const GemmParams& p) {
    auto space = native_gemm_space(p, hw::cpu(), 2);
    EXPECT_TRUE(space) << space.status().to_string();
    const Knob& tile = (*space)->knob(0);
    return std::find(tile.entities.begin(), tile.entities.end(), nlohmann::json("32x32")) !=
           tile.entities.end();
  };
  const char* amx_name = "native_f32[mr=32,nr=32,kc=256,mc=256,nc=1024,order=ji,threads=1]";
  if (native_amx_tiles().empty()) {
    EXPECT_FALSE(hw::amx_refusal().empty());
    hw::ScopedCpuOverride intel(
        *hw::load_cpu_fixture(std::string(TUNEKIT_TEST_DATA_DIR) + "/cpu/intel_xeon_amx.txt"));
    EXPECT_TRUE(native_amx_tiles().empty()) << "planned for AMX, but the host has none";
    EXPECT_FALSE(offers_amx(bf16_problem));
    auto parsed = parse_native_gemm_name(amx_name);
    ASSERT_FALSE(parsed);
    EXPECT_EQ(parsed.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(parsed.status().message().find("32x32 is the AMX tile"), std::string::npos)
        << parsed.status().message();
    return;
  }
  EXPECT_TRUE(offers_amx(bf16_problem));
  EXPECT_FALSE(offers_amx(float_problem));
  auto config = parse_native_gemm_name(amx_name);
  ASSERT_TRUE(config) << config.status().to_string();
  const Status refused = native_gemm(float_problem, *config);
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.to_string().find("bf16 problems only"), std::string::npos)
      << refused.to_string();
}

// native_gemm() holds its configuration to the rules of a stored name before it runs anything:
// a kc or nc of 0 would divide by zero in the blocking.
TEST(NativeGemm, ConfigurationsOutsideTheNameRulesAreRefusedBeforeTheyRun) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  const auto [mr, nr] = native_tiles().front();
  Problem prob('n', 'n', 20, 7, 9, 1.0f, 0.0f, 5);
  const NativeGemmConfig good{mr, nr, 32, 2 * mr, 2 * nr, "ji", 1};
  ASSERT_TRUE(native_gemm(prob.p, good));
  auto bad = [&](auto change, const char* field) {
    NativeGemmConfig c = good;
    change(c);
    const Status s = native_gemm(prob.p, c);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
  };
  bad([](NativeGemmConfig& c) { c.kc = 0; }, "kc=0");
  bad([](NativeGemmConfig& c) { c.nc = -6; }, "nc=-6");
  bad([](NativeGemmConfig& c) { c.mc += 1; }, "not a multiple of mr");
  bad([](NativeGemmConfig& c) { c.threads = 0; }, "threads=0");
  bad([](NativeGemmConfig& c) { c.order = "xy"; }, "order=xy");
  Problem f64('n', 'n', 4, 4, 4, 1.0f, 0.0f, 6);
  f64.p.dtype = DType::kDouble;
  EXPECT_NE(native_gemm(f64.p, good).message().find("float and bf16 problems only"),
            std::string::npos);
}

// A stored configuration of a family that does not take the problem (a decode configuration on a
// 128-token problem, a bf16 one on a float problem) is unknown for that problem, with the reason.
TEST(NativeGemm, AStoredConfigurationMustFitItsProblem) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  TuningContext ctx;
  GemmTunableOp op(make_gemm_candidates(), ctx);
  auto decode = GemmParams::from_signature("GemmTunableOp_float_TN", "tn_64_1_32_ld_32_32_64");
  auto wide = GemmParams::from_signature("GemmTunableOp_float_TN", "tn_64_128_32_ld_32_32_64");
  ASSERT_TRUE(decode && wide);
  const std::string f32 = "native_decode_f32[rows=4,threads=1]";
  const std::string bf16 = "native_decode_bf16[rows=4,threads=1]";
  EXPECT_TRUE(op.solution_status(f32).is_ok());  // a name alone: it parses
  EXPECT_TRUE(op.solution_status(f32, &*decode).is_ok());
  const Status on_wide = op.solution_status(f32, &*wide);
  EXPECT_EQ(on_wide.code(), StatusCode::kUnsupported);
  EXPECT_NE(on_wide.message().find("n <= 16"), std::string::npos) << on_wide.message();
  // The bare family name runs the family's default configuration: the same rule.
  EXPECT_EQ(op.solution_status(kNativeDecodeFamily, &*wide).code(), StatusCode::kUnsupported);
  EXPECT_TRUE(op.solution_status(kNativeDecodeFamily, &*decode).is_ok());
  const Status on_float = op.solution_status(bf16, &*decode);
  EXPECT_EQ(on_float.code(), StatusCode::kUnsupported);
  EXPECT_NE(on_float.message().find("BFloat16"), std::string::npos) << on_float.message();
  EXPECT_NE(parse_native_decode_name("native_decode_f32[rows=16,threads=1]")
                .status()
                .message()
                .find("rows must be 1, 2, 4 or 8"),
            std::string::npos);
  EXPECT_NE(parse_native_decode_name("native_decode_f32[rows=4,threads=1]x")
                .status()
                .message()
                .find("text after the closing ']'"),
            std::string::npos);
}

TEST(NativeGemm, SolutionNamesRoundTripAndBadNamesSayWhy) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  NativeGemmConfig config;
  config.mr = native_tiles()[0].first;
  config.nr = native_tiles()[0].second;
  config.mc = 4 * config.mr;
  config.nc = 100 * config.nr;
  config.order = "ij";
  config.threads = 2;
  for (const char* part : {"shared", "own"}) {
    config.part = part;
    const std::string name = solution_name(config);
    // The default part is not written: names stored before the knob existed keep their meaning.
    EXPECT_EQ(name.find("part="), part == std::string("own") ? name.size() - 9 : std::string::npos)
        << name;
    auto parsed = parse_native_gemm_name(name);
    ASSERT_TRUE(parsed) << parsed.status().to_string();
    EXPECT_EQ(*parsed, config);
  }
  EXPECT_EQ(parse_native_gemm_name("blis[arch=zen3]").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(parse_native_gemm_name("native_f32").status().code(), StatusCode::kNotFound);
  for (const char* bad :
       {"native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji", "native_f32[mr=16]",
        "native_f32[mr=16,nr=6,kc=x,mc=96,nc=4092,order=ji,threads=1]",
        "native_f32[mr=16,nr=6,kc=256,mc=97,nc=4092,order=ji,threads=1]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ik,threads=1]",
        "native_f32[nr=6,mr=16,kc=256,mc=96,nc=4092,order=ji,threads=1]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=0]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=1,x=1]",
        "native_f32[mr=16,nr=6,kc=0256,mc=96,nc=4092,order=ji,threads=1]",
        "native_f32[mr=16,nr=6,kc=+256,mc=96,nc=4092,order=ji,threads=1]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=[1]]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=2,part=shared]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=2,part=rows]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,part=own,threads=2]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=2,part=own,x=1]",
        "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=1,part=own]"}) {
    auto r = parse_native_gemm_name(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kParseError) << bad;
  }
  // The reason names the field and the rule.
  EXPECT_NE(parse_native_gemm_name("native_f32[mr=16,nr=6,kc=256,mc=97,nc=4092,order=ji,threads=1]")
                .status()
                .message()
                .find("mc=97 is not a multiple of mr=16"),
            std::string::npos);
  EXPECT_NE(
      parse_native_gemm_name("native_f32[mr=16,nr=6,kc=0256,mc=96,nc=4092,order=ji,threads=1]")
          .status()
          .message()
          .find("without sign or leading zero"),
      std::string::npos);
  EXPECT_NE(parse_native_gemm_name(
                "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=2,part=own,x=1]")
                .status()
                .message()
                .find("unexpected field 'x'"),
            std::string::npos);
  EXPECT_EQ(parse_native_gemm_name("native_f32[mr=40,nr=6,kc=256,mc=80,nc=4092,order=ji,threads=1]")
                .status()
                .code(),
            StatusCode::kUnsupported);
  auto decode = parse_native_decode_name("native_decode_f32[rows=8,threads=2]");
  ASSERT_TRUE(decode);
  EXPECT_EQ(*decode, (NativeDecodeConfig{8, 2}));
  EXPECT_EQ(parse_native_decode_name("native_decode_f32[rows=3,threads=2]").status().code(),
            StatusCode::kParseError);
}

// This CPU with the given cache sizes (bytes).
hw::CpuInfo cpu_with_caches(std::size_t l1d, std::size_t l2, std::size_t llc) {
  hw::CpuInfo cpu = hw::host_cpu();
  cpu.l1d_bytes = l1d;
  cpu.l2_bytes = l2;
  cpu.llc_bytes = llc;
  return cpu;
}

TEST(NativeGemm, SpaceConstraintsComeFromTheCacheSizes) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  auto shape =
      GemmParams::from_signature("GemmTunableOp_float_TN", "tn_4096_128_4096_ld_4096_4096_4096");
  ASSERT_TRUE(shape);
  const hw::CpuInfo small = cpu_with_caches(32 << 10, 256 << 10, 8 << 20);
  hw::CpuInfo big = small;
  big.l2_bytes = 2 << 20;
  auto s_small = native_gemm_space(*shape, small, 2);
  auto s_big = native_gemm_space(*shape, big, 2);
  ASSERT_TRUE(s_small && s_big);
  EXPECT_LT((*s_small)->valid_count(), (*s_big)->valid_count());
  Rng rng(3);
  for (const Config& point : (*s_small)->sample_valid(50, rng)) {
    const NativeGemmConfig c = native_gemm_config(point);
    EXPECT_LE(c.kc * c.nr * 4, 16 << 10) << point.to_string();
    EXPECT_LE(c.mc * c.kc * 4, 256 << 10) << point.to_string();
    EXPECT_EQ(c.mc % c.mr, 0);
    EXPECT_EQ(c.nc % c.nr, 0);
    EXPECT_TRUE(c.threads == 1 || c.threads == 2);
    EXPECT_TRUE(c.part == "shared" || (c.part == "own" && c.threads == 2)) << point.to_string();
  }
  // n = 128: nc values stop at the first one covering n.
  const Knob& nc = (*s_small)->knob(*(*s_small)->find_knob("nc"));
  EXPECT_EQ(nc.entities.back(), 256);
  // Threads owning their rows is a choice for more than one thread only; a stored winner with
  // own rows seeds a space of one thread (or one whose nearest thread count is 1) as shared.
  auto one = native_gemm_space(*shape, small, 1);
  ASSERT_TRUE(one);
  EXPECT_EQ((*one)->knob(*(*one)->find_knob("part")).size(), 1u);
  EXPECT_EQ((*s_small)->knob(*(*s_small)->find_knob("part")).size(), 2u);
  NativeGemmConfig own = native_gemm_default(small, 2);
  own.part = "own";
  auto in_two = nearest_point(**s_small, own);
  ASSERT_TRUE(in_two);
  EXPECT_EQ(native_gemm_config(*in_two).part, "own");
  auto in_one = nearest_point(**one, own);
  ASSERT_TRUE(in_one);
  EXPECT_EQ(native_gemm_config(*in_one).part, "shared");
  auto eight = native_gemm_space(*shape, small, 8);  // threads 1 and 8: 2 is nearer to 1
  ASSERT_TRUE(eight);
  auto in_eight = nearest_point(**eight, own);
  ASSERT_TRUE(in_eight);
  EXPECT_EQ(native_gemm_config(*in_eight).threads, 1);
  EXPECT_EQ(native_gemm_config(*in_eight).part, "shared");
}

// bf16 problems: tiles whose route packs bf16 as bf16 (AVX512-BF16 pairs, AMX) count 2 bytes per
// packed element, so deeper panels (kc up to 1024) fit; widened ones count 4 as fp32 does.
TEST(NativeGemm, Bf16SpacesCountTheBytesTheirRoutePacks) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  auto shape =
      GemmParams::from_signature("GemmTunableOp_BFloat16_TN", "tn_4096_128_4096_ld_4096_4096_4096");
  ASSERT_TRUE(shape);
  const hw::CpuInfo cpu = cpu_with_caches(32 << 10, 1 << 20, 32 << 20);
  auto space = native_gemm_space(*shape, cpu, 2);
  ASSERT_TRUE(space);
  const Knob& kc = (*space)->knob(*(*space)->find_knob("kc"));
  EXPECT_EQ(kc.entities.back(), 1024);
  bool deep = false;  // a point only 2 bytes per element fit
  Rng rng(5);
  for (const Config& point : (*space)->sample_valid(200, rng)) {
    const NativeGemmConfig c = native_gemm_config(point);
    const int bytes = detail::native_packed_bytes(true, c.mr, c.nr);
    EXPECT_LE(c.kc * c.nr * bytes, 16 << 10) << point.to_string();
    EXPECT_LE(c.mc * c.kc * bytes, 1 << 20) << point.to_string();
    deep = deep || c.kc * c.nr * 4 > (16 << 10);
  }
  const NativeGemmConfig f = native_gemm_default(cpu, 2);
  const NativeGemmConfig b = native_gemm_default(cpu, 2, DType::kBFloat16);
  const bool packs_bf16 = detail::native_packed_bytes(true, b.mr, b.nr) == 2;
  EXPECT_EQ(packs_bf16, hw::host_cpu().has("avx512_bf16") && hw::cpu().has("avx512_bf16"));
  EXPECT_EQ(deep, packs_bf16);
  EXPECT_EQ(b.kc, packs_bf16 ? 2 * f.kc : f.kc) << "the seed's kc follows the bytes";
  EXPECT_TRUE(nearest_point(**space, b)) << solution_name(b);
  // Float problems keep 4 bytes.
  EXPECT_EQ(detail::native_packed_bytes(false, b.mr, b.nr), 4);
}

TEST(NativeGemm, TheDefaultBlockingFollowsTheCachesAndIsAPointOfTheSpace) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  auto shape =
      GemmParams::from_signature("GemmTunableOp_float_NN", "nn_4096_4096_4096_ld_4096_4096_4096");
  ASSERT_TRUE(shape);
  const hw::CpuInfo cpu = cpu_with_caches(32 << 10, 512 << 10, 32 << 20);
  const NativeGemmConfig c = native_gemm_default(cpu, 2);
  EXPECT_EQ(std::pair(c.mr, c.nr), native_tiles().front());
  EXPECT_LE(c.kc * c.nr * 4, 16 << 10);
  EXPECT_GT(c.kc * 2 * c.nr * 4, 16 << 10) << "kc is the largest that fits: " << c.kc;
  EXPECT_LE(c.mc * c.kc * 4, (512 << 10) * 6 / 10);
  EXPECT_EQ(c.mc % c.mr, 0);
  EXPECT_EQ(c.nc % c.nr, 0);
  EXPECT_LE(c.nc, 4096);
  EXPECT_EQ(c.threads, 2);
  auto space = native_gemm_space(*shape, cpu, 2);
  ASSERT_TRUE(space);
  auto point = nearest_point(**space, c);
  ASSERT_TRUE(point) << solution_name(c);
  EXPECT_EQ(native_gemm_config(*point).kc, c.kc);
  // A smaller L1 halves kc; a smaller L2 shrinks mc.
  const NativeGemmConfig s = native_gemm_default(cpu_with_caches(16 << 10, 128 << 10, 32 << 20), 1);
  EXPECT_LT(s.kc, c.kc);
  EXPECT_LE(s.mc * s.kc * 4, (128 << 10) * 6 / 10);
  EXPECT_EQ(s.threads, 1);
}

// Without stored winners, a search with several threads starts from the analytical blocking of
// every micro-kernel of the widest build with threads owning their rows, then from the first
// micro-kernel's with shared panels.
TEST(NativeGemm, SearchesStartFromEveryWidestTileWithOwnRowsThenSharedPanels) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  const int before = num_threads();
  if (set_num_threads(2) != 2) {
    set_num_threads(before);
    GTEST_SKIP() << "one usable core";
  }
  auto p =
      GemmParams::from_signature("GemmTunableOp_float_TN", "tn_4096_512_4096_ld_4096_4096_4096");
  ASSERT_TRUE(p);
  auto candidate = make_native_gemm_template(false);
  TemplateCandidate<GemmParams>* tmpl = as_template(*candidate);
  auto space = tmpl->space(*p);
  ASSERT_TRUE(space) << space.status().to_string();
  const std::vector<Config> seeds = tmpl->seeds(*p, **space, false);
  set_num_threads(before);
  const auto tiles = native_tiles();
  const auto* widest = detail::native_build_for(tiles.front().first, tiles.front().second);
  std::size_t own = 0;
  while (own < tiles.size() &&
         detail::native_build_for(tiles[own].first, tiles[own].second) == widest) {
    ++own;
  }
  ASSERT_EQ(seeds.size(), own + 1);
  for (std::size_t i = 0; i <= own; ++i) {
    const NativeGemmConfig c = native_gemm_config(seeds[i]);
    const auto tile = tiles[i < own ? i : 0];
    EXPECT_EQ(std::pair(c.mr, c.nr), tile) << seeds[i].to_string();
    EXPECT_EQ(c.part, i < own ? "own" : "shared") << seeds[i].to_string();
    EXPECT_EQ(c.threads, 2);
  }
}

// Transfer across processes: a stored winner handed to its template (as TunableOp does with the
// results file's lines) seeds the search of the nearest problems first; names of other families,
// of the other dtype, or malformed ones are ignored.
TEST(NativeGemm, StoredWinnersSeedTheirTemplatesNearestProblemFirst) {
  if (native_tiles().empty()) GTEST_SKIP() << "no micro-kernel here";
  auto problem = [](const char* signature) {
    auto p = GemmParams::from_signature("GemmTunableOp_float_TN", signature);
    EXPECT_TRUE(p) << p.status().to_string();
    return p ? *p : GemmParams{};
  };
  const GemmParams target = problem("tn_4096_96_4096_ld_4096_4096_4096");
  const GemmParams near = problem("tn_4096_128_4096_ld_4096_4096_4096");
  const GemmParams far = problem("tn_11008_512_4096_ld_4096_4096_11008");
  auto candidate = make_native_gemm_template(false);
  TemplateCandidate<GemmParams>* tmpl = as_template(*candidate);
  ASSERT_NE(tmpl, nullptr);
  auto space = tmpl->space(target);
  ASSERT_TRUE(space) << space.status().to_string();
  const std::size_t alone = tmpl->seeds(target, **space, true).size();
  const auto [mr, nr] = native_tiles().front();
  const NativeGemmConfig a{mr, nr, 128, 4 * mr, 8 * nr, "ij", 1};
  const NativeGemmConfig b{mr, nr, 64, 2 * mr, 4 * nr, "ji", 1};
  tmpl->remember_solution(far, solution_name(b));
  tmpl->remember_solution(near, solution_name(a));
  tmpl->remember_solution(near, "native_f32[mr=7]");
  tmpl->remember_solution(near, "Default");
  tmpl->remember_solution(near, "native_decode_f32[rows=8,threads=1]");
  const std::vector<Config> seeds = tmpl->seeds(target, **space, true);
  ASSERT_EQ(seeds.size(), alone + 2);
  auto expected = [&](const NativeGemmConfig& c) {
    auto point = nearest_point(**space, c);
    EXPECT_TRUE(point) << solution_name(c);
    return point ? native_gemm_config(*point) : NativeGemmConfig{};
  };
  EXPECT_EQ(native_gemm_config(seeds[0]), expected(a));
  EXPECT_EQ(native_gemm_config(seeds[1]), expected(b));
  EXPECT_EQ(tmpl->seeds(target, **space, false).size(), alone);  // transfer off: the default

  auto decode = make_native_decode_template(DType::kFloat);
  TemplateCandidate<GemmParams>* dt = as_template(*decode);
  ASSERT_NE(dt, nullptr);
  const GemmParams token = problem("tn_4096_1_4096_ld_4096_4096_4096");
  auto decode_space = dt->space(token);
  ASSERT_TRUE(decode_space) << decode_space.status().to_string();
  const std::size_t decode_alone = dt->seeds(token, **decode_space, true).size();
  dt->remember_solution(near, "native_decode_bf16[rows=2,threads=1]");
  EXPECT_EQ(dt->seeds(token, **decode_space, true).size(), decode_alone);
  dt->remember_solution(near, "native_decode_f32[rows=8,threads=1]");
  const std::vector<Config> decode_seeds = dt->seeds(token, **decode_space, true);
  ASSERT_EQ(decode_seeds.size(), decode_alone + 1);
  EXPECT_EQ(native_decode_config(decode_seeds[0]).rows, 8);
}

}  // namespace
}  // namespace tunekit::ops
