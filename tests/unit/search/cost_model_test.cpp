// Cost model tests: XGBoost through its C API learns a simple landscape, early stopping on
// a-recall@N, shape errors, and the a-recall metric itself.
#include <gtest/gtest.h>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {
namespace {

TEST(AverageRecall, PerfectAndReversedRankings) {
  const std::vector<double> labels{5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(average_recall_at(labels, labels, 5), 1.0);
  const std::vector<double> reversed{1, 2, 3, 4, 5};
  // top-1: 0/1, top-2: 0/2, top-3: 1/3, top-4: 3/4, top-5: 5/5.
  EXPECT_NEAR(average_recall_at(reversed, labels, 5), (0 + 0 + 1.0 / 3 + 0.75 + 1) / 5, 1e-12);
  EXPECT_EQ(average_recall_at({}, {}, 3), 0.0);
}

TEST(XGBoostCostModel, LearnsAndRanks) {
  Rng rng(3);
  FeatureMatrix x, test;
  std::vector<double> y, y_test;
  auto f = [](float a, float b) { return static_cast<double>(a * b - 2 * a); };
  for (int i = 0; i < 300; ++i) {
    const float a = static_cast<float>(rng.uniform(10)), b = static_cast<float>(rng.uniform(10));
    const std::vector<float> row{a, b};
    (i < 200 ? x : test).add_row(row);
    (i < 200 ? y : y_test).push_back(f(a, b));
  }
  for (const char* loss : {"reg", "rank"}) {
    XGBoostSettings s;
    s.loss = loss;
    s.eval_top_n = 20;
    XGBoostCostModel m(s);
    EXPECT_FALSE(m.predict(test));
    ASSERT_TRUE(m.fit(x, y)) << loss;
    EXPECT_GT(m.rounds(), 0);
    auto p = m.predict(test);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->size(), 100u);
    EXPECT_GT(average_recall_at(*p, y_test, 20), 0.6) << loss;
  }
  XGBoostCostModel m;
  EXPECT_EQ(m.fit(x, std::vector<double>(3, 0.0)).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(m.fit(x, y));
  FeatureMatrix wide;
  wide.add_row(std::vector<float>{1, 2, 3});
  EXPECT_EQ(m.predict(wide).status().code(), StatusCode::kInvalidArgument);
  XGBoostSettings bad;
  bad.loss = "hinge";
  EXPECT_EQ(XGBoostCostModel(bad).fit(x, y).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunekit
