// Tuning logs on a hostile disk: only regular files are read or written (a device or FIFO is one
// clear error, never an endless read or a hang), standard input is read with a bound, a torn
// last line is no record, and an append cut short by a full disk is undone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "../child_process.hpp"
#include "../test_files.hpp"
#include "tunekit/records/record_store.hpp"

namespace tunekit {
namespace {

using testing::ChildLimits;
using testing::contains;
using testing::run_in_child;
using testing::slurp;
using testing::TempDir;

/// A v0.2 record line from the TopHub fixture (line 4 of tophub_lines.log).
std::string record_line() {
  std::ifstream in(TUNEKIT_TEST_DATA_DIR "/autotvm/tophub_lines.log");
  std::string line;
  for (int i = 0; i < 4; ++i) std::getline(in, line);
  return line;
}

Record sample_record() { return decode_record_line(record_line())->second; }

TEST(LogFiles, OnlyRegularFilesAreReadOrWritten) {
  TempDir dir;
  const std::string fifo = dir.file("fifo.log");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::pair<std::string, std::string> cases[] = {{"/dev/zero", "(a character device)"},
                                                       {"/dev/full", "(a character device)"},
                                                       {fifo, "(a FIFO)"}};
  const Record record = sample_record();
  const int rc = run_in_child(
      [&] {
        int failure = 10;
        for (const auto& [path, kind] : cases) {
          auto loaded = load_records(path);
          if (loaded.has_value()) return failure;
          if (!contains(loaded.status().message(),
                        "'" + path + "' is not a regular file " + kind)) {
            return failure + 1;
          }
          JsonLinesStore store(path);
          Status appended = store.append(record);
          if (appended.is_ok() || !contains(appended.message(), "not a regular file")) {
            return failure + 2;
          }
          if (store.load().has_value()) return failure + 3;
          failure += 10;
        }
        return 0;
      },
      ChildLimits{.alarm_s = 20, .address_bytes = rlim_t{2} << 30});
  EXPECT_EQ(rc, 0) << "142: a read or write blocked; 134: ran out of memory; 1x: /dev/zero, "
                      "2x: /dev/full, 3x: the FIFO";
}

TEST(LogFiles, StandardInputIsReadWithABoundOnTheLineLength) {
  const int rc = run_in_child(
      [] {
        const int zero = ::open("/dev/zero", O_RDONLY);
        if (zero < 0 || ::dup2(zero, STDIN_FILENO) < 0) return 1;
        auto loaded = load_records("-");
        if (loaded.has_value()) return 2;
        return contains(loaded.status().message(), "longer than") ? 0 : 3;
      },
      ChildLimits{.alarm_s = 20, .address_bytes = rlim_t{2} << 30});
  EXPECT_EQ(rc, 0) << "142: endless read; 134: ran out of memory";
}

TEST(LogFiles, AnUnterminatedLastLineIsAnIncompleteWriteAndAnAppendRemovesIt) {
  TempDir dir;
  const std::string line = record_line();
  const std::string fragment = line.substr(0, line.size() / 2);
  const std::string path = dir.write("torn.log", line + "\n" + fragment);
  LoadOptions strict;
  strict.strict = true;
  auto loaded = load_records(path, strict);
  ASSERT_TRUE(loaded.has_value()) << loaded.status().to_string();
  EXPECT_EQ(loaded->size(), 1u);

  JsonLinesStore store(path);
  ASSERT_TRUE(store.append(sample_record()).is_ok());
  // The fragment is gone: the file holds the first line and the new record (the fixture's line
  // encodes back byte for byte), each whole.
  EXPECT_EQ(slurp(path), line + "\n" + encode_record(sample_record()) + "\n");
  auto reloaded = load_records(path, strict);
  ASSERT_TRUE(reloaded.has_value()) << reloaded.status().to_string();
  EXPECT_EQ(reloaded->size(), 2u);
}

TEST(LogFiles, AnAppendCutShortByAFullDiskIsUndoneAndReported) {
  TempDir dir;
  const std::string path = dir.write("full.log", record_line() + "\n");
  const std::string before = slurp(path);
  const Record record = sample_record();
  const int rc = run_in_child(
      [&] {
        Status s = JsonLinesStore(path).append(record);
        if (s.is_ok()) return 1;
        return contains(s.message(), path) ? 0 : 2;
      },
      ChildLimits{.file_bytes = static_cast<rlim_t>(before.size() + 40)});
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(slurp(path), before);
}

}  // namespace
}  // namespace tunekit
