// Tests of GemmParams: TunableOp signatures and their parser, keys, validation, byte sizes,
// workspaces, output comparison and bf16 conversions.
#include "tunekit/ops/gemm_params.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace tunekit::ops {
namespace {

GemmParams make(char ta, char tb, std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmParams p;
  p.transa = ta;
  p.transb = tb;
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = (ta == 'n' || ta == 'N') ? m : k;
  p.ldb = (tb == 'n' || tb == 'N') ? k : n;
  p.ldc = m;
  return p;
}

TEST(GemmSignature, MatchesTunableOpFormats) {
  GemmParams p = make('t', 'n', 4096, 16, 4096);
  EXPECT_EQ(p.op_signature(), "GemmTunableOp_float_TN");
  EXPECT_EQ(p.signature(), "tn_4096_16_4096_ld_4096_4096_4096");

  p.dtype = DType::kBFloat16;
  p.kind = GemmKind::kGemmAndBias;
  EXPECT_EQ(p.op_signature(), "GemmAndBiasTunableOp_BFloat16_TN");
  p.dtype = DType::kBFloat16Float;
  EXPECT_EQ(p.op_signature(), "GemmAndBiasTunableOp_BFloat16_float_TN");

  GemmParams b = make('n', 'n', 64, 64, 32);
  b.kind = GemmKind::kStridedBatched;
  b.dtype = DType::kDouble;
  b.batch = 8;
  EXPECT_EQ(b.op_signature(), "GemmStridedBatchedTunableOp_double_NN");
  EXPECT_EQ(b.signature(), "nn_64_64_32_B_8_ld_64_32_64");

  // Upper-case transposes are accepted and written the TunableOp way.
  GemmParams u = make('T', 'T', 5, 7, 3);
  EXPECT_EQ(u.op_signature(), "GemmTunableOp_float_TT");
  EXPECT_EQ(u.signature(), "tt_5_7_3_ld_3_7_5");
  EXPECT_EQ(u.key(), make('t', 't', 5, 7, 3).key());
}

TEST(GemmSignature, ParsesCurrentAndOldForms) {
  auto p =
      GemmParams::from_signature("GemmTunableOp_float_TN", "tn_4096_16_4096_ld_4096_4096_4096");
  ASSERT_TRUE(p) << p.status().to_string();
  EXPECT_EQ(p->kind, GemmKind::kGemm);
  EXPECT_EQ(p->dtype, DType::kFloat);
  EXPECT_EQ(p->transa, 't');
  EXPECT_EQ(p->transb, 'n');
  EXPECT_EQ(p->m, 4096);
  EXPECT_EQ(p->n, 16);
  EXPECT_EQ(p->k, 4096);
  EXPECT_EQ(p->alpha, 1.0);
  EXPECT_EQ(p->beta, 0.0);

  // Old form (before mid-2024): dense leading dimensions, and it re-signs in the new form.
  auto old = GemmParams::from_signature("GemmTunableOp_float_NT", "nt_25088_4096_64");
  ASSERT_TRUE(old) << old.status().to_string();
  EXPECT_EQ(old->lda, 25088);  // A is m x k for 'n'
  EXPECT_EQ(old->ldb, 4096);   // B is n x k for 't'
  EXPECT_EQ(old->ldc, 25088);
  EXPECT_EQ(old->signature(), "nt_25088_4096_64_ld_25088_4096_25088");

  auto bf = GemmParams::from_signature("GemmTunableOp_BFloat16_TN", "tn_8192_2_3584");
  ASSERT_TRUE(bf);
  EXPECT_EQ(bf->dtype, DType::kBFloat16);
  EXPECT_EQ(bf->lda, 3584);
  EXPECT_EQ(bf->ldb, 3584);
  EXPECT_EQ(bf->ldc, 8192);

  auto batched = GemmParams::from_signature("GemmStridedBatchedTunableOp_float_NN",
                                            "nn_64_64_32_B_8_ld_64_32_64");
  ASSERT_TRUE(batched) << batched.status().to_string();
  EXPECT_EQ(batched->batch, 8);
  EXPECT_EQ(batched->stride_a, 64 * 32);
  EXPECT_EQ(batched->stride_b, 32 * 64);
  EXPECT_EQ(batched->stride_c, 64 * 64);

  auto bias = GemmParams::from_signature("GemmAndBiasTunableOp_float_TN",
                                         "tn_768_32_1024_ld_1024_1024_768");
  ASSERT_TRUE(bias);
  EXPECT_EQ(bias->kind, GemmKind::kGemmAndBias);

  // Padded leading dimensions are kept exactly (ROCm/TheRock#5553).
  auto padded = GemmParams::from_signature("GemmTunableOp_float_NT",
                                           "nt_65536_32768_384_ld_65536_65536_65536");
  ASSERT_TRUE(padded);
  EXPECT_EQ(padded->ldb, 65536);
  EXPECT_EQ(padded->signature(), "nt_65536_32768_384_ld_65536_65536_65536");
}

TEST(GemmSignature, BothBFloat16TokensParseAndRoundTrip) {
  // Upstream's "BFloat16" has a bf16 C; tunekit's "BFloat16_float" keeps A and B bf16, C float.
  struct Case {
    const char* op;
    const char* params;
    GemmKind kind;
    DType dtype;
  };
  const Case cases[] = {
      {"GemmTunableOp_BFloat16_TN", "tn_4096_16_4096_ld_4096_4096_4096", GemmKind::kGemm,
       DType::kBFloat16},
      {"GemmTunableOp_BFloat16_float_TN", "tn_4096_16_4096_ld_4096_4096_4096", GemmKind::kGemm,
       DType::kBFloat16Float},
      {"GemmStridedBatchedTunableOp_BFloat16_float_NT", "nt_64_32_16_B_4_ld_64_32_64",
       GemmKind::kStridedBatched, DType::kBFloat16Float},
      {"GemmAndBiasTunableOp_BFloat16_TN", "tn_768_32_1024_ld_1024_1024_768",
       GemmKind::kGemmAndBias, DType::kBFloat16},
      {"GemmAndBiasTunableOp_BFloat16_float_TN", "tn_768_32_1024_ld_1024_1024_768",
       GemmKind::kGemmAndBias, DType::kBFloat16Float},
  };
  for (const Case& c : cases) {
    auto p = GemmParams::from_signature(c.op, c.params);
    ASSERT_TRUE(p) << c.op << ": " << p.status().to_string();
    EXPECT_EQ(p->kind, c.kind) << c.op;
    EXPECT_EQ(p->dtype, c.dtype) << c.op;
    EXPECT_EQ(p->op_signature(), c.op);
    EXPECT_EQ(p->signature(), c.params);
  }
  EXPECT_EQ(dtype_name(DType::kBFloat16), "BFloat16");
  EXPECT_EQ(dtype_name(DType::kBFloat16Float), "BFloat16_float");
  // The integer values are part of a C ABI.
  EXPECT_EQ(static_cast<int>(DType::kFloat), 0);
  EXPECT_EQ(static_cast<int>(DType::kDouble), 1);
  EXPECT_EQ(static_cast<int>(DType::kBFloat16), 2);
  EXPECT_EQ(static_cast<int>(DType::kBFloat16Float), 3);
  EXPECT_EQ(element_bytes(DType::kBFloat16), 2u);
  EXPECT_EQ(output_element_bytes(DType::kBFloat16), 2u);
  EXPECT_EQ(element_bytes(DType::kBFloat16Float), 2u);
  EXPECT_EQ(output_element_bytes(DType::kBFloat16Float), 4u);
  // The two dtypes are different problems.
  auto bf = GemmParams::from_signature(cases[0].op, cases[0].params);
  auto bff = GemmParams::from_signature(cases[1].op, cases[1].params);
  ASSERT_TRUE(bf && bff);
  EXPECT_NE(bf->key(), bff->key());
  EXPECT_NE(GemmParams::hash(bf->key()), GemmParams::hash(bff->key()));
  // A near miss is a parse error naming the dtype.
  auto bad = GemmParams::from_signature("GemmTunableOp_BFloat16_half_TN", "tn_4_4_4");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), StatusCode::kParseError);
  EXPECT_NE(bad.status().message().find("BFloat16_half"), std::string::npos);
}

TEST(GemmSignature, BlasLogNamesTheOutputType) {
  auto bf = GemmParams::from_signature("GemmAndBiasTunableOp_BFloat16_TN", "tn_8_4_16");
  auto bff = GemmParams::from_signature("GemmAndBiasTunableOp_BFloat16_float_TN", "tn_8_4_16");
  ASSERT_TRUE(bf && bff);
  const std::string b = bf->blas_signature();
  EXPECT_NE(b.find("a_type: bf16_r, b_type: bf16_r, c_type: bf16_r, d_type: bf16_r, "
                   "bias_type: bf16_r, compute_type: f32_r }"),
            std::string::npos)
      << b;
  const std::string f = bff->blas_signature();
  EXPECT_NE(f.find("a_type: bf16_r, b_type: bf16_r, c_type: f32_r, d_type: f32_r, "
                   "bias_type: f32_r, compute_type: f32_r }"),
            std::string::npos)
      << f;
}

TEST(GemmSignature, RealSignaturesRoundTrip) {
  std::ifstream in(std::string(TUNEKIT_TEST_DATA_DIR) + "/ops/gemm_signatures.csv");
  ASSERT_TRUE(in) << "missing fixture tests/data/ops/gemm_signatures.csv";
  std::string line;
  int parsed = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto comma = line.find(',');
    ASSERT_NE(comma, std::string::npos) << line;
    const std::string op = line.substr(0, comma);
    const std::string params = line.substr(comma + 1);
    auto p = GemmParams::from_signature(op, params);
    ASSERT_TRUE(p) << line << ": " << p.status().to_string();
    EXPECT_EQ(p->op_signature(), op) << line;
    if (params.find("_ld_") != std::string::npos) {
      EXPECT_EQ(p->signature(), params) << line;
    }
    EXPECT_TRUE(p->validate_shape()) << line;
    ++parsed;
  }
  EXPECT_GE(parsed, 20);
}

TEST(GemmSignature, ShippedWorkloadsParse) {
  // Every workload file the project ships (examples/workloads) must parse.
  const std::filesystem::path dir = TUNEKIT_WORKLOADS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int parsed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".csv") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      const auto comma = line.find(',');
      if (comma == std::string::npos) continue;
      auto p = GemmParams::from_signature(line.substr(0, comma), line.substr(comma + 1));
      ASSERT_TRUE(p) << entry.path() << ": " << line << ": " << p.status().to_string();
      EXPECT_EQ(p->signature(), line.substr(comma + 1));
      ++parsed;
    }
  }
  EXPECT_GT(parsed, 30);
}

TEST(GemmSignature, UnsupportedKindsSayWhy) {
  struct Case {
    const char* op;
    const char* params;
    const char* reason;
  };
  const Case cases[] = {
      {"ScaledGemmTunableOp_Float8_e4m3fn_Float8_e4m3fn_Half_TN",
       "tn_16_16_16_ld_16_16_16_rw_0_bias_None", "ScaledGemm"},
      {"GemmTunableOp_Half_NN", "nn_37_37_37_ld_37_37_37", "Half"},
      {"GemmTunableOp_tf32_NN", "nn_37_37_37_ld_37_37_37", "tf32"},
      {"GemmTunableOp_c10::complex<float>_NN", "nn_4_4_4_ld_4_4_4", "complex"},
      {"GemmTunableOp_c10::complex<double>_TN", "tn_4_4_4_ld_4_4_4", "complex"},
      {"GemmTunableOp_Float8_e5m2_TN", "tn_4_4_4_ld_4_4_4", "Float8_e5m2"},
  };
  for (const Case& c : cases) {
    auto p = GemmParams::from_signature(c.op, c.params);
    ASSERT_FALSE(p) << c.op;
    EXPECT_EQ(p.status().code(), StatusCode::kUnsupported) << c.op;
    EXPECT_NE(p.status().message().find(c.reason), std::string::npos) << p.status().message();
  }
}

TEST(GemmSignature, GarbageIsAParseErrorWithAReason) {
  struct Case {
    const char* op;
    const char* params;
    const char* reason;
  };
  const Case cases[] = {
      {"", "nn_1_1_1", "expected GemmTunableOp"},
      {"Gemm_float_NN", "nn_1_1_1", "expected GemmTunableOp"},
      {"GemmTunableOp_float", "nn_1_1_1", "layout"},
      {"GemmTunableOp_float_NX", "nn_1_1_1", "layout"},
      {"GemmTunableOp_int8_NN", "nn_1_1_1", "unknown dtype 'int8'"},
      {"GemmTunableOp_float_NN", "", "expected {ta}{tb}"},
      {"GemmTunableOp_float_NN", "nn_1_1", "expected {ta}{tb}"},
      {"GemmTunableOp_float_NN", "nx_1_1_1", "two of n/t"},
      {"GemmTunableOp_float_NN", "tn_1_1_1", "disagree"},
      {"GemmTunableOp_float_NN", "nn_4x_1_1", "m '4x' is not a number"},
      {"GemmTunableOp_float_NN", "nn_1_-1_1", "n '-1' is not a number"},
      {"GemmTunableOp_float_NN", "nn_1_1_0", "k 0 is out of range"},
      {"GemmTunableOp_float_NN", "nn_1_1_99999999999", "out of range"},
      {"GemmTunableOp_float_NN", "nn_4_4_4_ld_4_4", "three values"},
      {"GemmTunableOp_float_NN", "nn_4_4_4_ld_4_4_4_9", "three values"},
      {"GemmTunableOp_float_NN", "nn_4_4_4_xx_4_4_4", "unexpected token 'xx'"},
      {"GemmTunableOp_float_NN", "nn_8_4_4_ld_4_4_8", "lda (4) must be >= m (8)"},
      {"GemmTunableOp_float_TN", "tn_8_4_6_ld_5_6_8", "lda (5) must be >= k (6)"},
      {"GemmTunableOp_float_NT", "nt_8_4_6_ld_8_3_8", "ldb (3) must be >= n (4)"},
      {"GemmTunableOp_float_NN", "nn_8_4_6_ld_8_6_7", "ldc (7) must be >= m (8)"},
      {"GemmTunableOp_float_NN", "nn_4_4_4_B_2_ld_4_4_4", "only valid for GemmStridedBatched"},
      {"GemmStridedBatchedTunableOp_float_NN", "nn_4_4_4_ld_4_4_4", "_B_"},
      {"GemmStridedBatchedTunableOp_float_NN", "nn_4_4_4_B", "missing batch"},
      {"GemmStridedBatchedTunableOp_float_NN", "nn_4_4_4_B_0_ld_4_4_4", "batch 0"},
      {"GemmTunableOp_float_NN", "nn_1_2_3_4_5_6_7_8_9_10_11", "too many"},
  };
  for (const Case& c : cases) {
    auto p = GemmParams::from_signature(c.op, c.params);
    ASSERT_FALSE(p) << c.op << "," << c.params;
    EXPECT_EQ(p.status().code(), StatusCode::kParseError) << c.op << "," << c.params;
    EXPECT_NE(p.status().message().find(c.reason), std::string::npos)
        << c.op << "," << c.params << " -> " << p.status().message();
  }
}

TEST(GemmKeyTest, EqualProblemsShareKeysAndHashes) {
  GemmParams a = make('t', 'n', 4096, 16, 4096);
  GemmParams b = a;
  b.alpha = 2;  // not part of the key
  b.a = &a;     // nor are pointers
  EXPECT_EQ(a.key(), b.key());
  EXPECT_EQ(GemmParams::hash(a.key()), GemmParams::hash(b.key()));

  // Every field of the key changes it; hashes of the variants are distinct.
  std::vector<GemmParams> variants;
  variants.push_back(a);
  auto vary = [&](auto f) {
    GemmParams v = a;
    f(v);
    variants.push_back(v);
  };
  vary([](GemmParams& v) { v.kind = GemmKind::kGemmAndBias; });
  vary([](GemmParams& v) { v.dtype = DType::kDouble; });
  vary([](GemmParams& v) { v.transa = 'n'; });
  vary([](GemmParams& v) { v.transb = 't'; });
  vary([](GemmParams& v) { v.m = 4095; });
  vary([](GemmParams& v) { v.n = 17; });
  vary([](GemmParams& v) { v.k = 4097; });
  vary([](GemmParams& v) { v.lda = 4100; });
  vary([](GemmParams& v) { v.ldb = 4100; });
  vary([](GemmParams& v) { v.ldc = 4100; });
  vary([](GemmParams& v) {
    v.kind = GemmKind::kStridedBatched;
    v.batch = 2;
  });
  std::unordered_set<std::uint64_t> hashes;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    for (std::size_t j = i + 1; j < variants.size(); ++j) {
      EXPECT_FALSE(variants[i].key() == variants[j].key()) << i << " vs " << j;
    }
    hashes.insert(GemmParams::hash(variants[i].key()));
  }
  EXPECT_EQ(hashes.size(), variants.size());
  // make_key() from the field values (what tunekit::gemm computes from its arguments) is key().
  for (const GemmParams& v : variants) {
    EXPECT_EQ(GemmParams::make_key(v.kind, v.dtype, v.transa, v.transb, v.m, v.n, v.k, v.lda, v.ldb,
                                   v.ldc, v.batch),
              v.key());
  }
}

TEST(GemmParamsTest, Flops) {
  GemmParams p = make('n', 'n', 3, 5, 7);
  EXPECT_EQ(p.flops(), 2.0 * 3 * 5 * 7);
  p.kind = GemmKind::kGemmAndBias;
  EXPECT_EQ(p.flops(), 2.0 * 3 * 5 * 7 + 3 * 5);
  p.kind = GemmKind::kStridedBatched;
  p.batch = 4;
  EXPECT_EQ(p.flops(), 4 * 2.0 * 3 * 5 * 7);
}

TEST(GemmParamsTest, ValidateNamesTheField) {
  const float dummy[4] = {};
  float out[4] = {};
  auto expect_invalid = [](const GemmParams& p, const std::string& what) {
    Status s = p.validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << what;
    EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
  };
  GemmParams ok = make('n', 'n', 2, 2, 2);
  ok.a = dummy;
  ok.b = dummy;
  ok.c = out;
  EXPECT_TRUE(ok.validate());

  GemmParams p = ok;
  p.transa = 'x';
  expect_invalid(p, "transa");
  p = ok;
  p.transb = 'c';
  expect_invalid(p, "transb");
  p = ok;
  p.m = 0;
  expect_invalid(p, "m must be");
  p = ok;
  p.k = -3;
  expect_invalid(p, "k must be");
  p = ok;
  p.lda = 1;
  expect_invalid(p, "lda (1) must be >= m (2)");
  p = ok;
  p.ldb = 1;
  expect_invalid(p, "ldb (1) must be >= k (2)");
  p = ok;
  p.ldc = 1;
  expect_invalid(p, "ldc (1) must be >= m (2)");
  p = ok;
  p.batch = 2;
  expect_invalid(p, "batch must be 1");
  p = ok;
  p.kind = GemmKind::kStridedBatched;
  p.batch = 2;
  p.stride_c = 3;
  expect_invalid(p, "stride_c (3) must be >= ldc*n (4)");
  p.stride_c = 4;
  p.stride_a = -1;
  expect_invalid(p, "stride_a");
  p = ok;
  p.alpha = std::numeric_limits<double>::quiet_NaN();
  expect_invalid(p, "alpha");
  p = ok;
  p.beta = std::numeric_limits<double>::infinity();
  expect_invalid(p, "beta");
  p = ok;
  p.kind = GemmKind::kGemmAndBias;
  p.bias = dummy;
  p.beta = 1;
  expect_invalid(p, "beta must be 0 for GemmAndBias");
  p.beta = 0;
  p.bias = nullptr;
  expect_invalid(p, "bias is null");
  p = ok;
  p.a = nullptr;
  expect_invalid(p, "a is null");
  p = ok;
  p.c = nullptr;
  expect_invalid(p, "c is null");
  p = ok;
  p.m = std::int64_t{1} << 40;
  expect_invalid(p, "m must be in");
  p = ok;
  p.dtype = static_cast<DType>(9);
  expect_invalid(p, "dtype 9");
}

// a + b and a * b with two's-complement wrap-around (no undefined overflow at the extremes).
std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

// Params near the validity boundary (fixed seed): a valid problem with up to three fields
// replaced by values at and around their bounds.
std::vector<GemmParams> edge_params(std::size_t count) {
  static const float dummy[4] = {};
  static float out[4] = {};
  constexpr std::int64_t kBig = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int64_t> small = {1, 2, 7, 16, 1000};
  const std::vector<std::int64_t> edges = {-kBig - 1,
                                           -1,
                                           0,
                                           1,
                                           (1 << 28) - 1,
                                           1 << 28,
                                           (1 << 28) + 1,
                                           (std::int64_t{1} << 31) - 1,
                                           std::int64_t{1} << 31,
                                           (std::int64_t{1} << 32) + 16,
                                           kBig};
  const std::vector<char> trans = {'n', 'N', 't', 'T', 'c', 'x', '\0', static_cast<char>(0xEE)};
  const std::vector<double> scalars = {0.0, 1.0, -2.5, std::numeric_limits<double>::quiet_NaN(),
                                       std::numeric_limits<double>::infinity()};
  std::mt19937_64 rng(20261201);
  auto pick = [&](const auto& v) { return v[rng() % v.size()]; };
  auto near = [&](std::int64_t bound) {  // bound - 1, bound, bound + 3 or an edge value
    return rng() % 4 == 0 ? pick(edges)
                          : wrap_add(bound, pick(std::vector<std::int64_t>{-1, 0, 3}));
  };
  std::vector<GemmParams> all;
  for (std::size_t i = 0; i < count; ++i) {
    GemmParams p;
    p.kind = static_cast<GemmKind>(rng() % 3);
    p.dtype = static_cast<DType>(rng() % 4);
    p.transa = pick(std::vector<char>{'n', 'N', 't', 'T'});
    p.transb = pick(std::vector<char>{'n', 'N', 't', 'T'});
    p.m = pick(small);
    p.n = pick(small);
    p.k = pick(small);
    p.lda = (p.a_is_n() ? p.m : p.k) + static_cast<std::int64_t>(rng() % 2) * 3;
    p.ldb = (p.b_is_n() ? p.k : p.n) + static_cast<std::int64_t>(rng() % 2) * 3;
    p.ldc = p.m + static_cast<std::int64_t>(rng() % 2) * 3;
    p.batch = p.kind == GemmKind::kStridedBatched ? 2 : 1;
    p.stride_a = p.stride_b = 16;
    p.stride_c = p.ldc * p.n;
    p.beta = p.kind == GemmKind::kGemmAndBias ? 0.0 : 0.5;
    p.a = p.b = p.bias = dummy;
    p.c = out;
    for (std::uint64_t changes = rng() % 4; changes > 0; --changes) {
      switch (rng() % 18) {
        case 0:
          p.kind = static_cast<GemmKind>(rng() % 4);
          break;
        case 1:
          p.dtype = static_cast<DType>(pick(std::vector<int>{0, 1, 2, 3, 7}));
          break;
        case 2:
          p.transa = pick(trans);
          break;
        case 3:
          p.transb = pick(trans);
          break;
        case 4:
          p.m = near(p.m);
          break;
        case 5:
          p.n = near(p.n);
          break;
        case 6:
          p.k = near(p.k);
          break;
        case 7:
          p.lda = near(p.a_is_n() ? p.m : p.k);
          break;
        case 8:
          p.ldb = near(p.b_is_n() ? p.k : p.n);
          break;
        case 9:
          p.ldc = near(p.m);
          break;
        case 10:
          p.batch = pick(std::vector<std::int64_t>{0, 1, 2, -1});
          break;
        case 11:
          p.stride_a = pick(std::vector<std::int64_t>{-1, 0, 16});
          break;
        case 12:
          p.stride_c = near(wrap_mul(p.ldc, p.n));
          break;
        case 13:
          p.alpha = pick(scalars);
          break;
        case 14:
          p.beta = pick(scalars);
          break;
        case 15:
          p.bias = nullptr;
          break;
        case 16:
          p.c = nullptr;
          break;
        default:
          *pick(std::vector<const void**>{&p.a, &p.b}) = nullptr;
          break;
      }
    }
    all.push_back(p);
  }
  return all;
}

TEST(GemmParamsTest, QuickChecksAcceptOnlyWhatValidateAccepts) {
  std::size_t accepted = 0, valid = 0;
  for (const GemmParams& p : edge_params(200000)) {
    const bool ok = p.validate().is_ok();
    valid += ok;
    if (!p.passes_quick_checks()) continue;
    ++accepted;
    ASSERT_TRUE(ok) << p.signature() << " kind " << static_cast<int>(p.kind) << ": "
                    << p.validate().to_string();
  }
  EXPECT_GT(accepted, 10000u);  // the sample reaches the accepting side too
  EXPECT_GT(valid, accepted);   // large or batched valid problems are left to validate()

  // Ordinary problems pass, either transpose case, with bias.
  const float dummy[4] = {};
  float out[4] = {};
  for (char ta : {'n', 'T'}) {
    GemmParams p = make(ta, 'N', 64, 1, 4096);
    p.a = p.b = dummy;
    p.c = out;
    EXPECT_TRUE(p.passes_quick_checks()) << ta;
    p.kind = GemmKind::kGemmAndBias;
    p.bias = dummy;
    EXPECT_TRUE(p.passes_quick_checks()) << ta;
  }
}

TEST(GemmParamsTest, CallChecksDecideValidityForTheKeyOfAValidProblem) {
  // Params that share the key of a valid problem differ from it only in fields outside the key;
  // for them the call checks agree with validate() (and refuse every strided-batched problem).
  std::size_t checked = 0;
  for (const GemmParams& p : edge_params(200000)) {
    GemmParams shape = p;  // the same key fields, every other field valid
    shape.batch = p.kind == GemmKind::kStridedBatched ? p.batch : 1;
    shape.stride_a = shape.stride_b = 0;
    shape.stride_c = wrap_mul(shape.ldc, shape.n);
    shape.alpha = 1.0;
    shape.beta = 0.0;
    shape.a = shape.b = shape.bias = &shape;
    shape.c = &shape;
    if (!shape.validate().is_ok()) continue;
    ASSERT_EQ(shape.key(), p.key());
    ++checked;
    if (p.kind == GemmKind::kStridedBatched) {
      EXPECT_FALSE(p.passes_call_checks());
    } else {
      ASSERT_EQ(p.passes_call_checks(), p.validate().is_ok())
          << p.signature() << ": " << p.validate().to_string();
    }
  }
  EXPECT_GT(checked, 1000u);
}

TEST(GemmKeyTest, OutOfRangeFieldsNeverShareAValidKey) {
  GemmParams v = make('n', 't', 16, 24, 32);
  v.lda = 40;
  const GemmKey key = v.key();
  ASSERT_NE(key, GemmKey::invalid());
  const std::int64_t wrap = std::int64_t{1} << 32;  // the same low 32 bits
  std::vector<GemmParams> aliases;
  auto alias = [&](auto change) {
    GemmParams p = v;
    change(p);
    aliases.push_back(p);
  };
  alias([&](GemmParams& p) { p.m += wrap; });
  alias([&](GemmParams& p) { p.n += wrap; });
  alias([&](GemmParams& p) { p.k += wrap; });
  alias([&](GemmParams& p) { p.lda += wrap; });
  alias([&](GemmParams& p) { p.ldb += wrap; });
  alias([&](GemmParams& p) { p.ldc += wrap; });
  alias([&](GemmParams& p) { p.m = -p.m; });
  alias([&](GemmParams& p) { p.transa = 'x'; });
  alias([&](GemmParams& p) { p.transb = static_cast<char>('t' | 0x80); });
  alias([&](GemmParams& p) { p.kind = static_cast<GemmKind>(3); });
  alias([&](GemmParams& p) { p.dtype = static_cast<DType>(4); });
  alias([&](GemmParams& p) {
    p.kind = GemmKind::kStridedBatched;
    p.batch = wrap + 1;
  });
  for (std::size_t i = 0; i < aliases.size(); ++i) {
    EXPECT_NE(aliases[i].key(), key) << i;
    EXPECT_EQ(aliases[i].key(), GemmKey::invalid()) << i;
    EXPECT_FALSE(aliases[i].validate().is_ok()) << i;
  }
  // Upper-case transposes and fields outside the key give the same key.
  GemmParams same = v;
  same.transa = 'N';
  same.transb = 'T';
  same.alpha = 3;
  same.batch = 7;  // not strided-batched: batch is not part of the key
  EXPECT_EQ(same.key(), key);
}

TEST(GemmParamsTest, ByteSizesFollowTheUpstreamRule) {
  // Dense: elem * m * k.
  GemmParams p = make('n', 'n', 3, 5, 7);
  EXPECT_EQ(p.a_bytes(), 4u * 3 * 7);
  EXPECT_EQ(p.b_bytes(), 4u * 7 * 5);
  EXPECT_EQ(p.c_bytes(), 4u * 3 * 5);
  EXPECT_EQ(p.bias_bytes(), 0u);
  // Padded leading dimensions: ld * stored columns.
  p.lda = 10;
  p.ldb = 9;
  p.ldc = 4;
  EXPECT_EQ(p.a_bytes(), 4u * 10 * 7);
  EXPECT_EQ(p.b_bytes(), 4u * 9 * 5);
  EXPECT_EQ(p.c_bytes(), 4u * 4 * 5);
  // Transposed: A stored k x m.
  GemmParams t = make('t', 't', 3, 5, 7);
  EXPECT_EQ(t.a_bytes(), 4u * 7 * 3);
  EXPECT_EQ(t.b_bytes(), 4u * 5 * 7);
  // bf16 inputs with fp32 output and bias, bf16 everywhere; double everywhere.
  GemmParams bf = make('n', 'n', 3, 5, 7);
  bf.dtype = DType::kBFloat16Float;
  bf.kind = GemmKind::kGemmAndBias;
  EXPECT_EQ(bf.a_bytes(), 2u * 3 * 7);
  EXPECT_EQ(bf.c_bytes(), 4u * 3 * 5);
  EXPECT_EQ(bf.bias_bytes(), 4u * 3);
  bf.dtype = DType::kBFloat16;
  EXPECT_EQ(bf.a_bytes(), 2u * 3 * 7);
  EXPECT_EQ(bf.c_bytes(), 2u * 3 * 5);
  EXPECT_EQ(bf.bias_bytes(), 2u * 3);
  bf.dtype = DType::kDouble;
  EXPECT_EQ(bf.bias_bytes(), 8u * 3);
  EXPECT_EQ(bf.operand_bytes(), bf.a_bytes() + bf.b_bytes() + bf.bias_bytes());
  // Batched: max(stride * batch, dense * batch); stride 0 (broadcast) still covers one matrix
  // per batch, as upstream's dense minimum (PR #139137).
  GemmParams b = make('n', 'n', 4, 4, 4);
  b.kind = GemmKind::kStridedBatched;
  b.batch = 3;
  b.stride_a = 100;
  b.stride_b = 0;
  b.stride_c = 16;
  EXPECT_EQ(b.a_bytes(), 4u * 100 * 3);
  EXPECT_EQ(b.b_bytes(), 4u * 16 * 3);
  EXPECT_EQ(b.c_bytes(), 4u * 16 * 3);
  EXPECT_EQ(b.output_bytes(), b.c_bytes());
}

TEST(BFloat16Test, ConversionsRoundToNearestEven) {
  EXPECT_EQ(to_bfloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(to_float(BFloat16{0x3f80}), 1.0f);
  EXPECT_EQ(to_bfloat16(-2.0f).bits, 0xc000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(to_bfloat16(1.0f + 1.0f / 256).bits, 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even (1 + 2^-6).
  EXPECT_EQ(to_bfloat16(1.0f + 3.0f / 256).bits, 0x3f82);
  // Just above halfway rounds up.
  EXPECT_EQ(to_bfloat16(1.0f + 1.0f / 256 + 1.0f / 65536).bits, 0x3f81);
  EXPECT_TRUE(std::isnan(to_float(to_bfloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(to_float(to_bfloat16(std::numeric_limits<float>::infinity())),
            std::numeric_limits<float>::infinity());
  // The largest float rounds to infinity (as upstream c10::BFloat16).
  EXPECT_TRUE(std::isinf(to_float(to_bfloat16(std::numeric_limits<float>::max()))));
  // Bulk conversions agree with the scalar ones and bf16 -> float -> bf16 is exact.
  std::vector<float> in = {0.0f, -0.0f, 1e-40f, 3.14159f, -65504.0f, 1e30f};
  std::vector<BFloat16> mid(in.size());
  std::vector<float> back(in.size());
  to_bfloat16(in.data(), mid.data(), in.size());
  to_float(mid.data(), back.data(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(mid[i].bits, to_bfloat16(in[i]).bits);
    EXPECT_EQ(back[i], to_float(mid[i]));
    EXPECT_EQ(to_bfloat16(back[i]).bits, mid[i].bits);
  }
}

TEST(GemmWorkspaceTest, CopiesAreEqualDeterministicAndAligned) {
  GemmParams p = make('t', 'n', 5, 3, 7);
  p.lda = 9;  // padded
  p.kind = GemmKind::kGemmAndBias;
  auto ws = GemmWorkspace::create(p, 3, /*random_fill=*/true, 42);
  ASSERT_TRUE(ws) << ws.status().to_string();
  auto again = GemmWorkspace::create(p, 1, true, 42);
  auto other = GemmWorkspace::create(p, 1, true, 43);
  ASSERT_TRUE(again && other);
  EXPECT_EQ((*ws)->copies(), 3u);
  const GemmParams c0 = (*ws)->bind(0);
  for (std::size_t i = 0; i < 3; ++i) {
    const GemmParams ci = (*ws)->bind(i);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ci.a) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(ci.c) % 64, 0u);
    EXPECT_EQ(std::memcmp(ci.a, c0.a, p.a_bytes()), 0);
    EXPECT_EQ(std::memcmp(ci.b, c0.b, p.b_bytes()), 0);
    EXPECT_EQ(std::memcmp(ci.c, c0.c, p.c_bytes()), 0);
    EXPECT_EQ(std::memcmp(ci.bias, c0.bias, p.bias_bytes()), 0);
    if (i > 0) {
      EXPECT_NE(ci.a, c0.a);
      EXPECT_NE(ci.c, c0.c);
    }
  }
  EXPECT_EQ(std::memcmp((*again)->bind(0).a, c0.a, p.a_bytes()), 0);
  EXPECT_NE(std::memcmp((*other)->bind(0).a, c0.a, p.a_bytes()), 0);
  // Values lie in [-1, 1) and are not all equal.
  const auto* a = static_cast<const float*>(c0.a);
  float lo = 1, hi = -1;
  for (std::size_t i = 0; i < p.a_bytes() / 4; ++i) {
    lo = std::min(lo, a[i]);
    hi = std::max(hi, a[i]);
  }
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, hi);
  // reset_output restores C.
  auto* c = static_cast<float*>(c0.c);
  const float before = c[0];
  c[0] = 12345.0f;
  (*ws)->reset_output(0);
  EXPECT_EQ(c[0], before);
  EXPECT_EQ(std::memcmp((*ws)->initial_output(), c0.c, p.c_bytes()), 0);
}

TEST(GemmWorkspaceTest, CopiesCallerOperands) {
  GemmParams p = make('n', 'n', 2, 2, 2);
  p.dtype = DType::kDouble;
  const double a[4] = {1, 2, 3, 4};
  const double b[4] = {5, 6, 7, 8};
  double c[4] = {9, 10, 11, 12};
  p.a = a;
  p.b = b;
  p.c = c;
  auto ws = GemmWorkspace::create(p, 2, false);
  ASSERT_TRUE(ws);
  const GemmParams q = (*ws)->bind(1);
  EXPECT_EQ(static_cast<const double*>(q.a)[3], 4.0);
  EXPECT_EQ(static_cast<const double*>(q.b)[0], 5.0);
  EXPECT_EQ(static_cast<const double*>(q.c)[2], 11.0);
  EXPECT_NE(q.a, p.a);

  p.c = nullptr;  // C defaults to zeros
  auto zeros = GemmWorkspace::create(p, 1, false);
  ASSERT_TRUE(zeros);
  EXPECT_EQ(static_cast<const double*>((*zeros)->bind(0).c)[1], 0.0);

  p.a = nullptr;
  auto missing = GemmWorkspace::create(p, 1, false);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(GemmWorkspace::create(p, 0, true).status().code(), StatusCode::kInvalidArgument);
  GemmParams bad = p;
  bad.ldc = 1;
  EXPECT_EQ(GemmWorkspace::create(bad, 1, true).status().code(), StatusCode::kInvalidArgument);
}

TEST(CompareOutputTest, ReportsTheFirstMismatch) {
  GemmParams p = make('n', 'n', 2, 3, 1);
  p.ldc = 3;  // one padding row, never compared
  std::vector<float> ref = {1, 2, -7, 3, 4, -7, 5, 6, -7};
  std::vector<float> got = ref;
  got[2] = 99;  // padding
  EXPECT_TRUE(compare_gemm_output(p, ref.data(), got.data(), 1e-5, 1e-5));
  got[4] = 4.5f;  // row 1, column 1
  got[7] = 7.0f;  // row 1, column 2
  Status s = compare_gemm_output(p, ref.data(), got.data(), 1e-5, 1e-5);
  EXPECT_EQ(s.code(), StatusCode::kWrongResult);
  EXPECT_NE(s.message().find("2 of 6"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("row 1, column 1"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("got 4.5"), std::string::npos) << s.message();
  // Tolerances: |got - ref| <= atol + rtol * |ref|.
  EXPECT_TRUE(compare_gemm_output(p, ref.data(), got.data(), 1.0, 0.0));
  GemmParams pr = p, pg = p;
  pr.c = ref.data();
  pg.c = got.data();
  EXPECT_TRUE(pg.compare_output(pr, 0.0, 0.2));
  EXPECT_EQ(pg.compare_output(pr, 0.0, 0.01).code(), StatusCode::kWrongResult);
  pr.m = 1;
  EXPECT_EQ(pg.compare_output(pr, 0.0, 0.2).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(p.default_tolerance(), dtype_tolerance("float", 1));
  // NaN fails unless the reference has NaN there too.
  got = ref;
  got[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(compare_gemm_output(p, ref.data(), got.data(), 1, 1));
  ref[0] = got[0];
  EXPECT_TRUE(compare_gemm_output(p, ref.data(), got.data(), 1, 1));

  // Doubles, batched at stride_c.
  GemmParams d = make('n', 'n', 1, 1, 1);
  d.dtype = DType::kDouble;
  d.kind = GemmKind::kStridedBatched;
  d.batch = 2;
  d.stride_c = 2;
  std::vector<double> dr = {1, 0, 2, 0};
  std::vector<double> dg = {1, 5, 2 + 1e-9, 5};
  EXPECT_TRUE(compare_gemm_output(d, dr.data(), dg.data(), 1e-6, 0));
  dg[2] = 3;
  Status sd = compare_gemm_output(d, dr.data(), dg.data(), 1e-6, 0);
  EXPECT_NE(sd.message().find("batch 1"), std::string::npos) << sd.message();
  EXPECT_EQ(compare_gemm_output(d, nullptr, dg.data(), 1, 1).code(), StatusCode::kInvalidArgument);
}

TEST(CompareOutputTest, BFloat16OutputsAreReadAsBf16WithItsRounding) {
  GemmParams p = make('n', 'n', 2, 2, 1);
  p.dtype = DType::kBFloat16;
  std::vector<BFloat16> ref = {to_bfloat16(1.0f), to_bfloat16(-2.0f), to_bfloat16(3.0f),
                               to_bfloat16(0.5f)};
  std::vector<BFloat16> got = ref;
  EXPECT_TRUE(compare_gemm_output(p, ref.data(), got.data(), 0, 0));
  // One bf16 ulp apart (2^-7 at 1.0): within the default tolerance, which allows the rounding.
  got[0].bits = static_cast<std::uint16_t>(got[0].bits + 1);
  const Tolerance t = p.default_tolerance();
  EXPECT_GE(t.rtol, dtype_tolerance("BFloat16_float").rtol + 1.0 / 256);
  EXPECT_TRUE(compare_gemm_output(p, ref.data(), got.data(), t.atol, t.rtol));
  Status s = compare_gemm_output(p, ref.data(), got.data(), 0, 1e-3);
  EXPECT_EQ(s.code(), StatusCode::kWrongResult);
  EXPECT_NE(s.message().find("got 1.0078125"), std::string::npos) << s.message();
  got[3] = to_bfloat16(8.0f);
  EXPECT_FALSE(compare_gemm_output(p, ref.data(), got.data(), t.atol, t.rtol));
}

}  // namespace
}  // namespace tunekit::ops
