// Unit tests for results and untuned files on a hostile disk: a full disk in the middle of an
// append, an unterminated last line that parses, and devices or FIFOs in place of a file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "../child_process.hpp"
#include "fake_op.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/results_file.hpp"
#include "tunekit/tunable/untuned.hpp"

namespace tunekit {
namespace {

using testing::ChildLimits;
using testing::contains;
using testing::run_in_child;
using testing::slurp;
using testing::TempDir;

std::string header_of(const TuningContext& ctx) {
  std::string text;
  for (const auto& [k, v] : ctx.get_validators()) text += "Validator," + k + "," + v + "\n";
  return text;
}

TEST(TornLines, AnUnterminatedLastLineIsNeverAResultEvenWhenItParses) {
  const std::string header = "Validator,TUNEKIT_VERSION,x\n";
  // A disk that filled up after "0.00" of "0.00123" leaves a line that parses as 0 ms.
  for (const std::string torn :
       {"op,p2,libxsmm,0.00", "op,p2,libxsmm", "op,p2,libxsmm,0.5,BLAS_PAR", "Validator,B,1"}) {
    auto parsed = parse_results(header + "op,p1,Default,1\n" + torn, "k.csv");
    ASSERT_TRUE(parsed.has_value()) << torn << ": " << parsed.status().to_string();
    EXPECT_EQ(parsed->results.size(), 1u) << torn;
    EXPECT_EQ(parsed->validators.size(), 1u) << torn;
    ASSERT_EQ(parsed->warnings.size(), 1u) << torn;
    EXPECT_TRUE(
        contains(parsed->warnings[0], "k.csv:3: ignoring the incomplete last line '" + torn + "'"))
        << parsed->warnings[0];
  }
  // A CR is no line end either.
  auto cr = parse_results(header + "op,p1,Default,1\r\nop,p2,x,1\r", "c.csv");
  ASSERT_TRUE(cr.has_value());
  EXPECT_EQ(cr->results.size(), 1u);
  EXPECT_EQ(cr->warnings.size(), 1u);
}

TEST(TornLines, AnAppendRemovesAnUnterminatedLastLineInsteadOfEndingIt) {
  TempDir dir;
  const std::string path = dir.write("r.csv", "Validator,K,V\nop,p1,Default,1\nop,p2,libxsmm,0.00");
  ASSERT_TRUE(append_line_locked(path, "Validator,K,V\n", "op,p3,Default,3").is_ok());
  EXPECT_EQ(slurp(path), "Validator,K,V\nop,p1,Default,1\nop,p3,Default,3\n");

  // The same for untuned files: a line cut inside its signature names another problem.
  const std::string untuned = dir.write("u.csv", "Op,nn_8_8_8\nOp,nn_4096_4096_40");
  UntunedRecorder recorder;
  ASSERT_TRUE(recorder.record("Op", "nn_16_16_16", "", untuned).value());
  EXPECT_EQ(slurp(untuned), "Op,nn_8_8_8\nOp,nn_16_16_16\n");
}

TEST(ShortWrites, AnAppendCutShortByAFullDiskIsUndoneAndReported) {
  TempDir dir;
  const std::string path = dir.write("r.csv", "Validator,K,V\nop,p1,Default,1\n");
  const std::string before = slurp(path);
  const std::string line = "GemmTunableOp_float_NN,nn_4096_4096_4096_ld_4096_4096_4096,libxsmm,1.5";
  // The file may grow by 10 bytes: the write stops inside the line's time field.
  const int rc = run_in_child(
      [&] {
        Status s = append_line_locked(path, "Validator,K,V\n", line);
        if (s.is_ok()) return 1;
        if (s.code() != StatusCode::kIoError || !contains(s.message(), path)) return 2;
        return 0;
      },
      ChildLimits{.file_bytes = static_cast<rlim_t>(before.size() + 10)});
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(slurp(path), before);

  // A new file that cannot take its header and first line holds nothing afterwards.
  const std::string fresh = dir.file("fresh.csv");
  EXPECT_EQ(run_in_child([&] { return append_line_locked(fresh, "Validator,K,V\n", line).is_ok(); },
                         ChildLimits{.file_bytes = 20}),
            0);
  EXPECT_EQ(slurp(fresh), "");
}

TEST(ShortWrites, AResultThatCouldNotBeSavedIsAnErrorAndTheFileLoadsAsBefore) {
  testing::clear_tunekit_env();
  TempDir dir;
  TuningContext ctx;
  const std::string path = dir.file("results0.csv");
  ctx.set_filename(path);
  { std::ofstream(path, std::ios::binary) << header_of(ctx) << "Op,p1,Default,0.5\n"; }
  ASSERT_TRUE(ctx.read_file().is_ok());
  const std::string before = slurp(path);
  const int rc = run_in_child(
      [&] {
        auto added = ctx.add_result({"Op", "p2", "libxsmm", 0.00123, ""});
        return added.has_value() ? 1 : 0;
      },
      ChildLimits{.file_bytes = static_cast<rlim_t>(before.size() + 12)});
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(slurp(path), before);
  TuningContext fresh;
  ASSERT_TRUE(fresh.read_file(path).is_ok());
  EXPECT_EQ(fresh.get_results().size(), 1u);
}

// Reading /dev/zero used to grow memory until the process was killed, and a FIFO blocked
// forever: the child has an alarm and a capped address space.
TEST(DeviceFiles, OnlyRegularFilesAreReadOrWrittenAsResults) {
  TempDir dir;
  const std::string fifo = dir.file("fifo.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string folder = dir.file("folder.csv");
  std::filesystem::create_directory(folder);
  const std::pair<std::string, std::string> cases[] = {
      {"/dev/zero", "'/dev/zero' is not a regular file (a character device)"},
      {"/dev/full", "'/dev/full' is not a regular file (a character device)"},
      {fifo, "'" + fifo + "' is not a regular file (a FIFO)"},
      {folder, "'" + folder + "' is a directory"}};
  const int rc = run_in_child(
      [&] {
        int failure = 10;
        for (const auto& [path, message] : cases) {
          auto read = read_results_file(path);
          if (read.has_value() || read.status().code() == StatusCode::kNotFound) return failure;
          if (!contains(read.status().message(), message)) return failure + 1;
          Status append = append_line_locked(path, "Validator,K,V\n", "op,p,Default,1");
          if (append.is_ok() || !contains(append.message(), message)) return failure + 2;
          if (write_file_locked(path, "Validator,K,V\n").is_ok()) return failure + 3;
          UntunedRecorder recorder;
          if (recorder.record("Op", "p", "", path).has_value()) return failure + 4;
          failure += 10;
        }
        return 0;
      },
      ChildLimits{.alarm_s = 20, .address_bytes = rlim_t{2} << 30});
  EXPECT_EQ(rc, 0) << "142: a read or write blocked; 134: ran out of memory; 1x: /dev/zero, "
                      "2x: /dev/full, 3x: the FIFO, 4x: the folder";
  EXPECT_TRUE(std::filesystem::is_directory(folder));
}

}  // namespace
}  // namespace tunekit
