// The log's line clearer: a progress line on the terminal is cleared before each log line
// written to stderr or stdout, and left alone by lines written to a log file.
#include "tunekit/core/log.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace tunekit::log {
namespace {

void count_clears(void* context) { ++*static_cast<int*>(context); }

TEST(LogLineClearer, RunsBeforeEachTerminalLineOnly) {
  int clears = 0;
  set_line_clearer(&count_clears, &clears);
  warn("line clearer test: a warning on stderr");
  EXPECT_EQ(clears, 1);
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("tunekit_log_test_" + std::to_string(::getpid()) + ".log"))
                               .string();
  ASSERT_TRUE(set_sink(file).is_ok());
  warn("line clearer test: a warning in a file");
  EXPECT_EQ(clears, 1);
  ASSERT_TRUE(set_sink("err").is_ok());
  std::remove(file.c_str());
  set_line_clearer(nullptr, nullptr);
  warn("line clearer test: no clearer");
  EXPECT_EQ(clears, 1);
}

}  // namespace
}  // namespace tunekit::log
