// Unit tests for files that survive anything (torn last lines, binary and header-less files,
// concurrent untuned recorders), dynamic-dims masks and guards, and wildcard/range lookups.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "fake_op.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/dynamic_dims.hpp"
#include "tunekit/tunable/results_file.hpp"
#include "tunekit/tunable/untuned.hpp"

namespace tunekit {
namespace {

using testing::lines_of;
using testing::slurp;
using testing::TempDir;

// --- dynamic dims ---------------------------------------------------------------------------

TEST(DynamicDims, ParsesLettersNumbersAndNone) {
  EXPECT_EQ(parse_dynamic_dims("M").value(), kDynamicM);
  EXPECT_EQ(parse_dynamic_dims("m,n").value(), kDynamicM | kDynamicN);
  EXPECT_EQ(parse_dynamic_dims("N|K").value(), kDynamicN | kDynamicK);
  EXPECT_EQ(parse_dynamic_dims("MNKB").value(), kAllDynamicDims);
  EXPECT_EQ(parse_dynamic_dims("batch").value(), kDynamicBatch);
  EXPECT_EQ(parse_dynamic_dims("5").value(), kDynamicM | kDynamicK);
  EXPECT_EQ(parse_dynamic_dims("").value(), 0);
  EXPECT_EQ(parse_dynamic_dims("none").value(), 0);
  EXPECT_EQ(parse_dynamic_dims("16").status().code(), StatusCode::kInvalidArgument);
  const auto bad = parse_dynamic_dims("M,X");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.status().message().find("'M,X'"), std::string::npos);
  EXPECT_EQ(dynamic_dims_to_string(kDynamicM | kDynamicBatch), "M|B");
  EXPECT_EQ(dynamic_dims_to_string(0), "none");
}

TEST(DynamicDims, GuardsNestPerThreadAndOverrideTheProcessSetting) {
  testing::clear_tunekit_env();
  TuningContext ctx;
  EXPECT_EQ(ctx.effective_dynamic_dims(), 0);
  ctx.set_dynamic_dims(kDynamicK);
  EXPECT_EQ(ctx.effective_dynamic_dims(), kDynamicK);
  {
    DynamicDimsGuard m(kDynamicM);
    EXPECT_EQ(ctx.effective_dynamic_dims(), kDynamicM);
    {
      TunableDynamicDimsGuard none(0);  // explicitly static inside
      EXPECT_EQ(ctx.effective_dynamic_dims(), 0);
    }
    EXPECT_EQ(ctx.effective_dynamic_dims(), kDynamicM);
    DynamicDimsMask other_thread = 99;
    std::thread([&] { other_thread = ctx.effective_dynamic_dims(); }).join();
    EXPECT_EQ(other_thread, kDynamicK);  // guards are per thread
  }
  EXPECT_EQ(ctx.effective_dynamic_dims(), kDynamicK);
}

TEST(DynamicDims, EnvironmentSettingWinsAndMalformedIsAnError) {
  testing::clear_tunekit_env();
  ::setenv("TUNEKIT_DYNAMIC_DIMS", "M,N", 1);
  {
    TuningContext ctx;
    EXPECT_TRUE(ctx.environment_status().is_ok());
    ctx.set_dynamic_dims(0);
    EXPECT_EQ(ctx.dynamic_dims(), kDynamicM | kDynamicN);
  }
  ::setenv("TUNEKIT_DYNAMIC_DIMS", "Q", 1);
  {
    TuningContext ctx;
    EXPECT_EQ(ctx.environment_status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(ctx.environment_status().message().find("TUNEKIT_DYNAMIC_DIMS"), std::string::npos);
  }
  ::unsetenv("TUNEKIT_DYNAMIC_DIMS");
}

// --- wildcards and ranges -------------------------------------------------------------------

TEST(Wildcard, RangeTokensMatchInclusiveAndOpenRanges) {
  EXPECT_TRUE(wildcard_match("tn_4096_[9-16]_4096", "tn_4096_9_4096"));
  EXPECT_TRUE(wildcard_match("tn_4096_[9-16]_4096", "tn_4096_16_4096"));
  EXPECT_FALSE(wildcard_match("tn_4096_[9-16]_4096", "tn_4096_17_4096"));
  EXPECT_FALSE(wildcard_match("tn_4096_[9-16]_4096", "tn_4096_8_4096"));
  EXPECT_TRUE(wildcard_match("tn_4096_[513-]_4096", "tn_4096_100000_4096"));
  EXPECT_FALSE(wildcard_match("tn_4096_[513-]_4096", "tn_4096_512_4096"));
  EXPECT_FALSE(wildcard_match("tn_[1-2]", "tn_x"));
  EXPECT_FALSE(parse_range_token("[16-9]").has_value());
  EXPECT_FALSE(parse_range_token("[-9]").has_value());
  EXPECT_EQ(format_range_token(17, 32), "[17-32]");
  EXPECT_EQ(format_range_token(513, -1), "[513-]");
  EXPECT_EQ(wildcard_specificity("nn_*_5_[1-4]_ld_*_5_*"), (WildcardSpecificity{3, 1}));
  EXPECT_TRUE(is_wildcard_signature("nn_[1-4]_5_6"));
  EXPECT_FALSE(is_wildcard_signature("nn_4_5_6"));
}

TEST(Wildcard, LookupPrefersFewestStarsThenFewestRangesThenFileOrder) {
  testing::clear_tunekit_env();
  TuningContext ctx;
  ResultsManager& results = ctx.results_manager();
  const std::string op = "GemmTunableOp_float_NN";
  results.add({op, "nn_*_*_64_ld_*_64_*", "four_stars", 1, ""});
  results.add({op, "nn_*_32_64_ld_*_64_*", "three_stars", 1, ""});
  results.add({op, "nn_*_32_64_ld_40_64_*", "two_stars_ld40", 1, ""});
  results.add({op, "nn_*_32_64_ld_*_64_[1-100]", "two_stars_one_range_first", 1, ""});
  results.add({op, "nn_[1-16]_32_64_ld_*_64_*", "two_stars_one_range_later", 1, ""});
  results.add({op, "nn_10_32_64_ld_40_64_10", "concrete", 1, ""});

  // ld 41: the ld-40 pattern does not match; two equally specific range patterns: file order.
  auto hit = results.lookup_wildcard(op, "nn_10_32_64_ld_41_64_10");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->solution, "two_stars_one_range_first");
  EXPECT_EQ(hit->params_signature, "nn_*_32_64_ld_*_64_[1-100]");
  // ld 40: two stars and no range is the most specific.
  EXPECT_EQ(results.lookup_wildcard(op, "nn_10_32_64_ld_40_64_10")->solution, "two_stars_ld40");
  // n = 33: only the four-star pattern.
  EXPECT_EQ(results.lookup_wildcard(op, "nn_10_33_64_ld_41_64_10")->solution, "four_stars");
  // m = 200 is outside both ranges: three stars.
  EXPECT_EQ(results.lookup_wildcard(op, "nn_200_32_64_ld_200_64_200")->solution, "three_stars");
  EXPECT_FALSE(results.lookup_wildcard(op, "nn_10_32_65_ld_41_65_10").has_value());
  EXPECT_FALSE(results.lookup_wildcard("GemmTunableOp_float_TN", "nn_10_32_64_ld_41_64_10"));
}

// --- torn, binary and header-less files -----------------------------------------------------

TEST(TornLines, AnUnterminatedLastLineThatDoesNotParseIsIgnoredWithAWarningNamingTheLine) {
  const std::string header = "Validator,TUNEKIT_VERSION,x\n";
  for (const std::string torn : {"GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default",  // no time
                                 "GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default,0.0x",
                                 "GemmTunableOp_float_NN,nn_8_8", "Validator,CPU_MO"}) {
    auto parsed = parse_results(header + "op,p1,Default,1\n" + torn, "k.csv");
    ASSERT_TRUE(parsed.has_value()) << torn << ": " << parsed.status().to_string();
    ASSERT_EQ(parsed->results.size(), 1u) << torn;
    EXPECT_EQ(parsed->validators.size(), 1u) << torn;
    ASSERT_EQ(parsed->warnings.size(), 1u) << torn;
    EXPECT_NE(parsed->warnings[0].find("k.csv:3:"), std::string::npos) << parsed->warnings[0];
    EXPECT_NE(parsed->warnings[0].find("incomplete last line"), std::string::npos);
  }
  // A last line that parses but lacks its line end was not completely written either.
  auto whole = parse_results(header + "op,p1,Default,1", "w.csv");
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->results.empty());
  EXPECT_EQ(whole->warnings.size(), 1u);
  // The same damage in the middle of a file is an error naming the line.
  auto middle = parse_results(header + "op,p1,Default,0.0x\nop,p2,Default,1\n", "m.csv");
  ASSERT_FALSE(middle.has_value());
  EXPECT_NE(middle.status().message().find("m.csv:2:"), std::string::npos);
}

TEST(TornLines, ReadFileLoadsEverythingCompleteAndAppendRemovesTheFragment) {
  testing::clear_tunekit_env();
  TempDir dir;
  TuningContext ctx;
  const std::string path = dir.file("results0.csv");
  ctx.set_filename(path);
  std::string text;
  for (const auto& [k, v] : ctx.get_validators()) text += "Validator," + k + "," + v + "\n";
  text += "Op,p1,Default,0.5\nOp,p2,Default,0.25\nOp,p3,Defa";
  { std::ofstream(path, std::ios::binary) << text; }
  const std::string log_path = dir.file("log.txt");
  ASSERT_TRUE(log::set_sink(log_path).is_ok());
  ASSERT_TRUE(ctx.read_file().is_ok());
  EXPECT_EQ(ctx.get_results().size(), 2u);
  const std::size_t header_lines = ctx.get_validators().size();
  EXPECT_NE(slurp(log_path).find(path + ":" + std::to_string(header_lines + 3) +
                                 ": ignoring the incomplete last line 'Op,p3,Defa'"),
            std::string::npos)
      << slurp(log_path);

  // The next append removes the fragment (it is no line) and the file loads cleanly again.
  ASSERT_TRUE(ctx.add_result({"Op", "p4", "Default", 0.125, ""}).value());
  (void)log::set_sink("err");
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), header_lines + 3);
  EXPECT_EQ(lines.back(), "Op,p4,Default,0.125");
  auto reread = read_results_file(path);
  ASSERT_TRUE(reread.has_value());
  EXPECT_TRUE(reread->warnings.empty());
  EXPECT_EQ(reread->results.size(), 3u);
}

TEST(TornLines, AppendRemovesAnUnterminatedLastLineWhetherItParsesOrNot) {
  TempDir dir;
  const std::string path = dir.file("r.csv");
  ASSERT_TRUE(write_file_locked(path, "Validator,K,V\nop,p1,Default,1").is_ok());
  ASSERT_TRUE(append_line_locked(path, "Validator,K,V\n", "op,p2,Default,2").is_ok());
  EXPECT_EQ(slurp(path), "Validator,K,V\nop,p2,Default,2\n");
  ASSERT_TRUE(write_file_locked(path, "Validator,K,V\nop,p1,Def").is_ok());
  ASSERT_TRUE(append_line_locked(path, "Validator,K,V\n", "op,p3,Default,3").is_ok());
  EXPECT_EQ(slurp(path), "Validator,K,V\nop,p3,Default,3\n");
  // A file holding only a fragment of its header gets a whole header.
  ASSERT_TRUE(write_file_locked(path, "Validator,K").is_ok());
  ASSERT_TRUE(append_line_locked(path, "Validator,K,V\n", "op,p4,Default,4").is_ok());
  EXPECT_EQ(slurp(path), "Validator,K,V\nop,p4,Default,4\n");
}

TEST(BadFiles, BinaryAndHeaderlessFilesGiveOneMessageNamingFileAndLine) {
  const char kBinary[] = "Validator,A,1\nop,p\0\x01,x,1\n";
  auto binary = parse_results(std::string(kBinary, sizeof(kBinary) - 1), "b.csv");
  ASSERT_FALSE(binary.has_value());
  EXPECT_EQ(binary.status().code(), StatusCode::kParseError);
  EXPECT_NE(binary.status().message().find("b.csv:2: binary content (control byte 0x00"),
            std::string::npos)
      << binary.status().message();

  testing::clear_tunekit_env();
  TempDir dir;
  TuningContext ctx;
  const std::string path = dir.file("headerless.csv");
  { std::ofstream(path) << "\nGemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default,0.1\n"; }
  Status s = ctx.read_file(path);
  EXPECT_EQ(s.code(), StatusCode::kValidatorMismatch);
  EXPECT_NE(s.message().find(path + ":2: key=\"TUNEKIT_VERSION\" is not provided"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("no validator header"), std::string::npos);

  const std::string untuned = dir.file("untuned.csv");
  { std::ofstream(untuned) << "GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8\n"; }
  s = ctx.read_file(untuned);
  EXPECT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_NE(s.message().find(untuned + ":1:"), std::string::npos);
  EXPECT_NE(s.message().find("untuned"), std::string::npos) << s.message();
}

TEST(BadFiles, DuplicatesWithDifferentSolutionsAreReportedAtVerboseOneAndTheFirstWins) {
  testing::clear_tunekit_env();
  TempDir dir;
  TuningContext ctx;
  const std::string path = dir.file("dups.csv");
  {
    std::ofstream out(path);
    for (const auto& [k, v] : ctx.get_validators()) out << "Validator," << k << "," << v << "\r\n";
    out << "Op,p1,First,1\r\n\r\nOp,p1,Second,2\r\n";
  }
  const std::string log_path = dir.file("log.txt");
  ASSERT_TRUE(log::set_sink(log_path).is_ok());
  log::set_level(1);
  ASSERT_TRUE(ctx.read_file(path).is_ok());
  log::set_level(0);
  (void)log::set_sink("err");
  EXPECT_EQ(ctx.results_manager().lookup("Op", "p1")->solution, "First");
  const std::size_t line = ctx.get_validators().size() + 3;
  EXPECT_NE(slurp(log_path).find(path + ":" + std::to_string(line) +
                                 ": duplicate result Op,p1 -> Second ignored"),
            std::string::npos)
      << slurp(log_path);
}

// --- untuned files ----------------------------------------------------------------------------

TEST(Untuned, ConcurrentProcessesRecordEveryLineWhole) {
  TempDir dir;
  const std::string path = dir.file("tunekit_untuned0.csv");
  constexpr int kProcesses = 4;
  constexpr int kLines = 200;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      UntunedRecorder recorder;
      for (int i = 0; i < kLines; ++i) {
        const std::string params =
            "nn_" + std::to_string(p) + "_" + std::to_string(i) + "_7_ld_100_100_100";
        if (!recorder.record("GemmTunableOp_float_NN", params, "", path)) ::_exit(1);
        if (!recorder.record("GemmTunableOp_float_NN", params, "", path)) ::_exit(1);  // dedup
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
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kProcesses * kLines));
  std::set<std::string> distinct(lines.begin(), lines.end());
  EXPECT_EQ(distinct.size(), lines.size());
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.starts_with("GemmTunableOp_float_NN,nn_")) << line;
    EXPECT_TRUE(line.ends_with("_7_ld_100_100_100")) << line;
  }
}

}  // namespace
}  // namespace tunekit
