// Tests of the single-process offline-tuning pieces: input file patterns.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_files.hpp"
#include "tunekit/offline/problem_files.hpp"

namespace tunekit::offline {
namespace {

using namespace ::tunekit::ops;  // NOLINT(google-build-using-namespace): GemmParams and its enums

using testing::TempDir;

TEST(Patterns, ExpandGlobsAndNameWhatIsMissing) {
  TempDir dir;
  for (const char* f : {"tunekit_untuned0.csv", "tunekit_untuned1.csv", "tunekit_untuned12.csv"}) {
    dir.write(f, "x\n");
  }
  auto one_char = expand_file_patterns({dir.file("tunekit_untuned?.csv")});
  ASSERT_TRUE(one_char.has_value());
  EXPECT_EQ(*one_char, (std::vector<std::string>{dir.file("tunekit_untuned0.csv"),
                                                 dir.file("tunekit_untuned1.csv")}));
  auto star =
      expand_file_patterns({dir.file("tunekit_untuned*.csv"), dir.file("tunekit_untuned0.csv")});
  ASSERT_TRUE(star.has_value());
  EXPECT_EQ(star->size(), 3u);  // duplicates dropped
  auto none = expand_file_patterns({dir.file("nothing?.csv")});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.status().message().find("nothing?.csv"), std::string::npos);
  auto missing = expand_file_patterns({dir.file("missing.csv")});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.status().message().find("missing.csv"), std::string::npos);
}

}  // namespace
}  // namespace tunekit::offline
