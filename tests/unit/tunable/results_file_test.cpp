// Unit tests for the TunableOp results CSV: time format, parsing real upstream lines, errors with
// file:line, wildcard matching, and locked appends from concurrent processes.
#include "tunekit/tunable/results_file.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "fake_op.hpp"

namespace tunekit {
namespace {

using testing::lines_of;
using testing::slurp;
using testing::TempDir;

TEST(ResultsFormat, TimeUsesDefaultOstreamFormatting) {
  EXPECT_EQ(format_time_ms(0.0240676), "0.0240676");
  EXPECT_EQ(format_time_ms(1.262), "1.262");
  EXPECT_EQ(format_time_ms(0.033), "0.033");
  EXPECT_EQ(format_time_ms(1e-5), "1e-05");
  EXPECT_EQ(format_time_ms(0.123456789), "0.123457");
  EXPECT_EQ(format_time_ms(123456789.0), "1.23457e+08");
  EXPECT_EQ(format_time_ms(0.0), "0");
}

TEST(ResultsFormat, LinesRoundTrip) {
  const ResultLine line{"GemmTunableOp_float_NT", "nt_25088_4096_64", "Gemm_Hipblaslt_1219", 1.262,
                        ""};
  EXPECT_EQ(format_result_line(line),
            "GemmTunableOp_float_NT,nt_25088_4096_64,Gemm_Hipblaslt_1219,1.262");
  EXPECT_EQ(format_validator_line("TUNEKIT_VERSION", "0.1.0"), "Validator,TUNEKIT_VERSION,0.1.0");
}

TEST(ResultsParse, ReadsRealUpstreamLinesWithCrlfBlankLinesAndBlasParams) {
  const std::string text =
      "Validator,PT_VERSION,2.9.1\r\n"
      "Validator,HIP_VERSION,603\r\n"
      "\r\n"
      "GemmTunableOp_BFloat16_TN,tn_8192_1_4096_ld_4096_4096_8192,Gemm_Rocblas_621284994,0."
      "0196817\r\n"
      "GemmTunableOp_float_NT,nt_4096_4096_64,Gemm_Rocblas_-61\n"
      "\n"
      "GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default,0.01,BLAS_PARAMS: - { function: matmul, M: "
      "8, "
      "N: 8 }\n";
  auto parsed = parse_results(text, "seed.csv");
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  ASSERT_EQ(parsed->validators.size(), 2u);
  EXPECT_EQ(parsed->validators[0], (ValidatorEntry{"PT_VERSION", "2.9.1"}));
  EXPECT_EQ(parsed->validators[1], (ValidatorEntry{"HIP_VERSION", "603"}));
  ASSERT_EQ(parsed->results.size(), 3u);
  EXPECT_EQ(parsed->results[0].solution, "Gemm_Rocblas_621284994");
  EXPECT_DOUBLE_EQ(parsed->results[0].time_ms, 0.0196817);
  EXPECT_EQ(parsed->results[1].solution, "Gemm_Rocblas_-61");
  EXPECT_EQ(parsed->results[1].time_ms, 0.0);  // 3-field line
  EXPECT_EQ(parsed->results[2].extra, "BLAS_PARAMS: - { function: matmul, M: 8, N: 8 }");
  EXPECT_EQ(format_result_line(parsed->results[2]),
            "GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default,0.01,BLAS_PARAMS: - { function: "
            "matmul, M: 8, N: 8 }");
}

TEST(ResultsParse, MalformedLinesNameFileAndLine) {
  auto two_fields = parse_results("Validator,A,1\nop,params\n", "bad.csv");
  ASSERT_FALSE(two_fields.has_value());
  EXPECT_EQ(two_fields.status().code(), StatusCode::kParseError);
  EXPECT_NE(two_fields.status().message().find("bad.csv:2:"), std::string::npos);
  EXPECT_NE(two_fields.status().message().find("could not parse line"), std::string::npos);

  auto bad_time = parse_results("\nop,params,Default,fast\n", "t.csv");
  ASSERT_FALSE(bad_time.has_value());
  EXPECT_NE(bad_time.status().message().find("t.csv:2:"), std::string::npos);
  EXPECT_NE(bad_time.status().message().find("'fast'"), std::string::npos);

  for (const char* t : {"nan", "-3", "1e999", "inf"}) {
    auto r = parse_results(std::string("op,params,Default,") + t + "\n", "f.csv");
    ASSERT_FALSE(r.has_value()) << t;
    EXPECT_NE(r.status().message().find("f.csv:1:"), std::string::npos) << t;
  }

  auto bad_validator = parse_results("Validator,ONLYKEY\n", "v.csv");
  ASSERT_FALSE(bad_validator.has_value());
  EXPECT_NE(bad_validator.status().message().find("v.csv:1:"), std::string::npos);

  auto conflicting = parse_results("Validator,A,1\nValidator,A,2\n", "c.csv");
  ASSERT_FALSE(conflicting.has_value());
  EXPECT_NE(conflicting.status().message().find("c.csv:2:"), std::string::npos);
}

// Files joined with `cat` keep each one's byte order mark: a mark at the start of any line is
// dropped, so the op signature read back is the one written (a second mark used to stay in it).
TEST(ResultsParse, ByteOrderMarksAtLineStartsAreDropped) {
  const std::string bom = "\xEF\xBB\xBF";
  const std::string text = bom + bom + "GemmTunableOp_float_NN,nn_8_8_8,Default,0.5\n" + bom +
                           "GemmTunableOp_float_NT,nt_8_8_8,Default,0.25\n";
  auto parsed = parse_results(text, "joined.csv");
  ASSERT_TRUE(parsed) << parsed.status().to_string();
  ASSERT_EQ(parsed->results.size(), 2u);
  EXPECT_EQ(parsed->results[0].op_signature, "GemmTunableOp_float_NN");
  EXPECT_EQ(parsed->results[1].op_signature, "GemmTunableOp_float_NT");
  EXPECT_EQ(strip_byte_order_mark(bom + bom + "x"), "x");
}

TEST(ResultsParse, DuplicatesFirstWins) {
  auto parsed = parse_results("op,p,First,1\nop,p,Second,2\nop,q,Other,3\n", "d.csv");
  ASSERT_TRUE(parsed.has_value());
  ASSERT_EQ(parsed->results.size(), 2u);
  EXPECT_EQ(parsed->results[0].solution, "First");
  ASSERT_EQ(parsed->duplicates.size(), 1u);
  EXPECT_NE(parsed->duplicates[0].find("d.csv:2"), std::string::npos);
}

TEST(ResultsParse, ATemplateConfigurationInBracketsIsOneField) {
  const std::string name = "native_f32[mr=16,nr=6,kc=256,mc=96,nc=4092,order=ji,threads=2]";
  auto parsed = parse_results("op,p," + name + ",0.5,BLAS_PARAMS: - { M: 1, N: 2 }\n", "t.csv");
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  ASSERT_EQ(parsed->results.size(), 1u);
  EXPECT_EQ(parsed->results[0].solution, name);
  EXPECT_EQ(parsed->results[0].time_ms, 0.5);
  EXPECT_EQ(parsed->results[0].extra, "BLAS_PARAMS: - { M: 1, N: 2 }");
  EXPECT_EQ(format_result_line(parsed->results[0]),
            "op,p," + name + ",0.5,BLAS_PARAMS: - { M: 1, N: 2 }");
  // An unclosed bracket does not swallow the time; brackets elsewhere do not group.
  auto unclosed = parse_results("op,p,native_f32[mr=16,nr=6,0.5\n", "u.csv");
  ASSERT_FALSE(unclosed.has_value());
  EXPECT_NE(unclosed.status().message().find("u.csv:1"), std::string::npos);
  auto in_params = parse_results("op,tn_[1,2],Default,0.5\n", "q.csv");
  ASSERT_FALSE(in_params.has_value());
}

TEST(Wildcard, MatchesTokenByToken) {
  EXPECT_TRUE(wildcard_match("nn_*_64_64_ld_*_64_*", "nn_37_64_64_ld_37_64_37"));
  EXPECT_FALSE(wildcard_match("nn_*_64_64_ld_*_64_*", "nn_37_64_65_ld_37_64_37"));
  EXPECT_FALSE(wildcard_match("nn_*_64", "nn_37_64_1"));
  EXPECT_FALSE(wildcard_match("nn_*_64_1", "nn_37_64"));
  EXPECT_TRUE(wildcard_match("*", "anything"));
  EXPECT_TRUE(wildcard_match("nn_8", "nn_8"));
}

TEST(ResultsAppend, HeaderOnlyIntoMissingOrEmptyFile) {
  TempDir dir;
  const std::string path = dir.file("r.csv");
  ASSERT_TRUE(append_line_locked(path, "Validator,K,V\n", "op,p1,Default,1").is_ok());
  ASSERT_TRUE(append_line_locked(path, "Validator,K,V\n", "op,p2,Default,2").is_ok());
  EXPECT_EQ(slurp(path), "Validator,K,V\nop,p1,Default,1\nop,p2,Default,2\n");

  // An earlier writer's unterminated line is neither extended nor ended: it is removed.
  ASSERT_TRUE(write_file_locked(path, "Validator,K,V\nop,p1,Def").is_ok());
  ASSERT_TRUE(append_line_locked(path, "Validator,K,V\n", "op,p3,Default,3").is_ok());
  EXPECT_EQ(slurp(path), "Validator,K,V\nop,p3,Default,3\n");

  // check_existing can veto the append.
  Status vetoed = append_line_locked(path, "", "op,p4,Default,4", [](std::string_view) {
    return Status(StatusCode::kValidatorMismatch, "no");
  });
  EXPECT_EQ(vetoed.code(), StatusCode::kValidatorMismatch);
  EXPECT_EQ(lines_of(path).size(), 2u);
}

TEST(ResultsAppend, ConcurrentProcessesNeverInterleave) {
  TempDir dir;
  const std::string path = dir.file("shared.csv");
  constexpr int kProcesses = 4;
  constexpr int kLines = 200;
  const std::string header = "Validator,TUNEKIT_VERSION,x\nValidator,CPU_MODEL,a long model name\n";
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < kLines; ++i) {
        const std::string line = "Op_" + std::to_string(p) + ",params_" + std::to_string(i) +
                                 "_padding_padding_padding,Solution_" + std::to_string(p) + ",0.5";
        if (!append_line_locked(path, header, line).is_ok()) ::_exit(1);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto parsed = read_results_file(path);
  ASSERT_TRUE(parsed.has_value()) << parsed.status().to_string();
  EXPECT_EQ(parsed->validators.size(), 2u);
  ASSERT_EQ(parsed->results.size(), static_cast<std::size_t>(kProcesses * kLines));
  for (const ResultLine& r : parsed->results) {
    EXPECT_EQ(r.solution, "Solution_" + r.op_signature.substr(3));
    EXPECT_EQ(r.time_ms, 0.5);
  }
  EXPECT_EQ(lines_of(path).size(), static_cast<std::size_t>(kProcesses * kLines + 2));
}

TEST(ResultsRead, MissingFileIsNotFound) {
  TempDir dir;
  auto r = read_results_file(dir.file("nope.csv"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tunekit
