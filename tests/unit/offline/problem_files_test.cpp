// Offline-tuning input: reading problems from real TunableOp files (every op kind, old
// signatures, BLAS_PARAMS suffixes, foreign validators, skips with reasons), dynamic and
// BLAS_PARAMS signatures of GemmParams, and bucket planning.
#include "tunekit/offline/problem_files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../test_files.hpp"
#include "tunekit/offline/buckets.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::offline {
namespace {

using namespace ::tunekit::ops;  // NOLINT(google-build-using-namespace): GemmParams and its enums

// Repository fixtures: tests/data/tunableop (README there) and the shipped workload files.
const std::string kTunableOp = TUNEKIT_TEST_DATA_DIR "/tunableop/";
const std::string kWorkloads = TUNEKIT_WORKLOADS_DIR "/";

std::string write_temp(const std::string& name, const std::string& text) {
  static const testing::TempDir dir;  // removed at exit
  return dir.write(name, text);
}

GemmParams parse(const char* op, const char* params) {
  auto p = GemmParams::from_signature(op, params);
  EXPECT_TRUE(p.has_value()) << p.status().to_string();
  return p.value();
}

TEST(GemmProblems, ReadsTheRealUpstreamFilesIncludingForeignValidatorsAndOldSignatures) {
  GemmProblemSet set;
  for (const char* f :
       {"untuned_mixed_ops.csv", "rocm_mid2024_results.csv", "readme_example_results.csv"}) {
    ASSERT_TRUE(read_gemm_problems(kTunableOp + f, set).is_ok()) << f;
  }
  EXPECT_TRUE(set.skipped.empty());
  ASSERT_EQ(set.problems.size(), 10u);
  // Every op kind of the untuned file.
  EXPECT_EQ(set.problems[2].params.kind, GemmKind::kGemmAndBias);
  EXPECT_EQ(set.problems[3].params.kind, GemmKind::kStridedBatched);
  EXPECT_EQ(set.problems[3].params.batch, 8);
  EXPECT_EQ(set.problems[4].params.dtype, DType::kBFloat16);
  // Old form without _ld_: dense leading dimensions.
  EXPECT_EQ(set.problems[0].params.signature(), "nt_768_1024_512_ld_768_1024_768");
  // Results lines: the solution names of other back-ends are ignored.
  EXPECT_EQ(set.problems[5].params_signature, "tn_8192_2_3584");
  EXPECT_EQ(set.problems[8].params.signature(), "nt_25088_4096_64_ld_25088_4096_25088");

  GemmProblemSet workloads;
  for (const char* f : {"llama2-7b_float_untuned.csv", "llama3-8b_float_untuned.csv",
                        "bert-base_float_untuned.csv"}) {
    ASSERT_TRUE(read_gemm_problems(kWorkloads + f, workloads).is_ok()) << f;
  }
  EXPECT_EQ(workloads.problems.size(), 16u + 15u + 9u - 1u);  // llama3's 4096^2 q_proj at 1 token
  EXPECT_TRUE(workloads.skipped.empty());
}

// The bf16 workload's problems are upstream's (bf16 C); --dtype bf16_float tunes them with a
// float C, under the op signature of that problem.
TEST(GemmProblems, Bf16WorkloadHasBf16OutputAndTheDtypeOverrideRenamesIt) {
  GemmProblemSet set;
  ASSERT_TRUE(read_gemm_problems(kWorkloads + "llama2-7b_bf16_untuned.csv", set).is_ok());
  ASSERT_EQ(set.problems.size(), 16u);
  for (const GemmProblem& p : set.problems) {
    EXPECT_EQ(p.params.dtype, DType::kBFloat16) << p.op_signature;
    EXPECT_EQ(p.op_signature, p.params.op_signature());
  }
  auto float_c = parse_dtype("bf16_float");
  ASSERT_TRUE(float_c);
  EXPECT_EQ(*float_c, DType::kBFloat16Float);
  EXPECT_EQ(parse_dtype("BFloat16_float").value(), DType::kBFloat16Float);
  EXPECT_EQ(parse_dtype("bf16").value(), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("BFloat16").value(), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("half").status().code(), StatusCode::kInvalidArgument);
  GemmProblemSet renamed;
  ASSERT_TRUE(
      read_gemm_problems(kWorkloads + "llama2-7b_bf16_untuned.csv", renamed, &*float_c).is_ok());
  ASSERT_EQ(renamed.problems.size(), 16u);
  EXPECT_EQ(renamed.problems[0].params.dtype, DType::kBFloat16Float);
  EXPECT_EQ(renamed.problems[0].op_signature, "GemmTunableOp_BFloat16_float_TN");
}

TEST(GemmProblems, UnrunnableAndMalformedLinesAreSkippedWithFileLineAndReason) {
  const std::string path = write_temp(
      "mixed.csv",
      "Validator,PT_VERSION,2.9.1\r\n"
      "ScaledGemmTunableOp_Float8_e4m3fn_Float8_e4m3fn_BFloat16_TN,tn_64_32_128_ld_128_128_64_rw_0_"
      "bias_None,Gemm_Hipblaslt_1,0.01\r\n"
      "GemmTunableOp_Half_NT,nt_65536_32768_384_ld_65536_65536_65536\r\n"
      "GemmTunableOp_tf32_NN,nn_37_37_37_ld_37_37_37\r\n"
      "\r\n"
      "GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default,0.01,BLAS_PARAMS: - { function: matmul, "
      "M: 8, N: 8, K: 8, alpha: 1.0000 }\r\n"
      "FooTunableOp_float_NN,nn_8_8_8\r\n"
      "GemmTunableOp_float_NN,nn_*_8_8_ld_*_8_*,eigen,0.1\r\n"
      "GemmTunableOp_float_NN,nn_x_8_8\r\n"
      "GemmTunableOp_float_NN,nn_8_8_8_ld_4_8_8\r\n"
      "GemmTunableOp_float_NN\r\n");
  GemmProblemSet set;
  ASSERT_TRUE(read_gemm_problems(path, set).is_ok());
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].line, 6);
  ASSERT_EQ(set.skipped.size(), 8u);
  const auto reason = [&](std::size_t i) { return set.skipped[i].reason.message(); };
  EXPECT_EQ(set.skipped[0].reason.code(), StatusCode::kUnsupported);
  EXPECT_NE(reason(0).find(path + ":2:"), std::string::npos);
  EXPECT_NE(reason(0).find("ScaledGemm"), std::string::npos);
  EXPECT_NE(reason(1).find("Half"), std::string::npos);
  EXPECT_NE(reason(2).find("tf32"), std::string::npos);
  EXPECT_NE(reason(3).find(path + ":7:"), std::string::npos);
  EXPECT_NE(reason(4).find("wildcard"), std::string::npos);
  EXPECT_NE(reason(5).find("not a number"), std::string::npos);
  EXPECT_NE(reason(6).find("lda"), std::string::npos);
  EXPECT_NE(reason(7).find(path + ":11:"), std::string::npos);

  const std::string binary = write_temp("bin.csv", std::string("GemmTunableOp\0\x01\x02", 16));
  Status s = read_gemm_problems(binary, set);
  EXPECT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_NE(s.message().find(binary + ":1: binary content"), std::string::npos) << s.message();
}

TEST(GemmSignatures, DynamicSignatureFollowsTheLdRules) {
  const GemmParams nn = parse("GemmTunableOp_float_NN", "nn_64_32_16_ld_70_16_64");
  EXPECT_EQ(nn.dynamic_signature(0), nn.signature());
  EXPECT_EQ(nn.dynamic_signature(1), "nn_*_32_16_ld_*_16_*");
  EXPECT_EQ(nn.dynamic_signature(2), "nn_64_*_16_ld_70_16_64");
  EXPECT_EQ(nn.dynamic_signature(4), "nn_64_32_*_ld_70_*_64");
  const GemmParams tt = parse("GemmTunableOp_float_TT", "tt_64_32_16_ld_16_32_64");
  EXPECT_EQ(tt.dynamic_signature(1), "tt_*_32_16_ld_16_32_*");
  EXPECT_EQ(tt.dynamic_signature(2), "tt_64_*_16_ld_16_*_64");
  EXPECT_EQ(tt.dynamic_signature(4), "tt_64_32_*_ld_*_32_64");
  const GemmParams b = parse("GemmStridedBatchedTunableOp_float_NN", "nn_64_64_32_B_8_ld_64_32_64");
  EXPECT_EQ(b.dynamic_signature(8), "nn_64_64_32_B_*_ld_64_32_64");
  EXPECT_EQ(nn.dynamic_signature(8), nn.signature());  // no batch in a plain GEMM
  EXPECT_TRUE(wildcard_match(nn.dynamic_signature(1), "nn_3_32_16_ld_3_16_3"));
}

TEST(GemmSignatures, BlasParamsBlock) {
  GemmParams p = parse("GemmAndBiasTunableOp_BFloat16_TN", "tn_768_32_1024_ld_1024_1024_768");
  EXPECT_EQ(p.blas_signature(),
            "- { function: matmul, M: 768, N: 32, K: 1024, lda: 1024, ldb: 1024, ldc: 768, ldd: "
            "768, stride_a: 0, stride_b: 0, stride_c: 0, stride_d: 0, alpha: 1.0000, beta: "
            "0.0000, transA: T, transB: N, batch_count: 1, a_type: bf16_r, b_type: bf16_r, "
            "c_type: bf16_r, d_type: bf16_r, bias_type: bf16_r, compute_type: f32_r }");
}

TEST(Buckets, SpecsParseIntoAscendingRanges) {
  EXPECT_EQ(parse_buckets("1,16,128,512").value(),
            (std::vector<Bucket>{{1, 1, 1}, {2, 16, 16}, {17, 128, 128}, {129, -1, 512}}));
  EXPECT_EQ(parse_buckets("1-8:4, 9-64:32, end").value(),
            (std::vector<Bucket>{{1, 8, 4}, {9, 64, 32}}));
  EXPECT_EQ(parse_buckets("pow2:1-8").value(),
            (std::vector<Bucket>{{1, 1, 1}, {2, 2, 2}, {3, 4, 4}, {5, -1, 8}}));
  EXPECT_EQ(parse_buckets("8-16").value(), (std::vector<Bucket>{{8, -1, 16}}));
  for (const char* bad : {"", "16,4", "1-8:9", "0", "x", "1-4,3-8", "pow2:8-1"}) {
    auto b = parse_buckets(bad);
    EXPECT_FALSE(b.has_value()) << bad;
    if (!b) {
      EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_EQ(parse_bucket_dim("N").value(), 2);
  EXPECT_FALSE(parse_bucket_dim("x").has_value());
}

TEST(Buckets, RepresentativesAndBucketSignatures) {
  const GemmParams tn = parse("GemmTunableOp_float_TN", "tn_4096_16_4096_ld_4096_4096_4096");
  EXPECT_EQ(bucket_signature(tn, 2, {17, 128, 128}), "tn_4096_[17-128]_4096_ld_4096_4096_4096");
  EXPECT_EQ(bucket_signature(tn, 2, {129, -1, 512}), "tn_4096_[129-]_4096_ld_4096_4096_4096");
  const GemmParams nn = parse("GemmTunableOp_float_NN", "nn_40_8_8_ld_48_8_40");
  EXPECT_EQ(bucket_signature(nn, 1, {1, 64, 64}), "nn_[1-64]_8_8_ld_*_8_*");
  // Dense lds follow the new size; padded ones stay when large enough.
  auto m64 = with_dim(nn, 1, 64);
  ASSERT_TRUE(m64.has_value());
  EXPECT_EQ(m64->signature(), "nn_64_8_8_ld_64_8_64");
  auto m8 = with_dim(nn, 1, 8);
  EXPECT_EQ(m8->signature(), "nn_8_8_8_ld_48_8_8");
  EXPECT_FALSE(with_dim(nn, 8, 4).has_value());

  GemmProblemSet set;
  ASSERT_TRUE(read_gemm_problems(kWorkloads + "llama2-7b_float_untuned.csv", set).is_ok());
  const BucketPlan plan = plan_buckets(set.problems, 2, parse_buckets("1,16,128,512").value());
  EXPECT_TRUE(plan.skipped.empty());
  // 4 projection shapes x 4 representatives, which are exactly the file's problems.
  ASSERT_EQ(plan.representatives.size(), 16u);
  ASSERT_EQ(plan.entries.size(), 16u);
  EXPECT_EQ(plan.entries[1].bucket_params_signature, "tn_4096_[2-16]_4096_ld_4096_4096_4096");
  EXPECT_EQ(plan.entries[1].representative_signature, "tn_4096_16_4096_ld_4096_4096_4096");
  EXPECT_TRUE(
      wildcard_match(plan.entries[2].bucket_params_signature, "tn_4096_64_4096_ld_4096_4096_4096"));
}

}  // namespace
}  // namespace tunekit::offline
