// Knob importance (main-effect variance share of log time) on constructed samples.
#include "tunekit/report/knob_importance.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tunekit::report {
namespace {

TEST(KnobImportance, AKnobThatDecidesEverythingHasShareOne) {
  // tile decides the time (x1 or x8); unroll changes nothing.
  std::vector<KnobSample> s;
  for (const char* tile : {"8", "32"}) {
    for (const char* unroll : {"0", "1"}) {
      s.push_back({{unroll, tile}, std::string(tile) == "8" ? 1e-3 : 8e-3});
    }
  }
  const auto imp = knob_importance({"unroll", "tile"}, s);
  ASSERT_EQ(imp.size(), 2u);
  EXPECT_EQ(imp[0].knob, "tile");
  EXPECT_DOUBLE_EQ(imp[0].share, 1.0);
  EXPECT_EQ(imp[0].values, 2u);
  EXPECT_EQ(imp[1].knob, "unroll");
  EXPECT_NEAR(imp[1].share, 0.0, 1e-12);
}

TEST(KnobImportance, SharesOfTwoAdditiveKnobsFollowTheirEffects) {
  // log t = a + b with a in {0, 2 ln 2} and b in {0, ln 2} on a full grid: the between sums of
  // squares are 4 (ln 2)^2 and (ln 2)^2, the total 5 (ln 2)^2, so shares 0.8 and 0.2.
  std::vector<KnobSample> s;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) {
      s.push_back({{std::to_string(a), std::to_string(b)}, std::exp2(2 * a + b)});
    }
  }
  const auto imp = knob_importance({"a", "b"}, s);
  EXPECT_NEAR(imp[0].share, 0.8, 1e-12);
  EXPECT_NEAR(imp[1].share, 0.2, 1e-12);
}

TEST(KnobImportance, FailedTimesAreSkippedAndTooFewSamplesGiveZero) {
  std::vector<KnobSample> s = {{{"1"}, 1e-3}, {{"2"}, NAN}, {{"3"}, -1.0}, {{"2"}, 2e-3}};
  const auto imp = knob_importance({"k"}, s);
  ASSERT_EQ(imp.size(), 1u);
  EXPECT_EQ(imp[0].share, 0.0);  // 2 usable samples
  EXPECT_EQ(imp[0].values, 2u);
}

}  // namespace
}  // namespace tunekit::report
