// Cost model tests: XGBoost through its C API learns a simple landscape, early stopping on
// a-recall@N, shape errors, and the a-recall metric itself; BoostedTreesModel learns the same
// landscape, ranks like XGBoost, drops zero-weight rows and rejects bad input; ForestModel
// refuses settings out of range.
#include "tunekit/search/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "correlation.hpp"
#include "tunekit/search/forest_model.hpp"
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

/// Rows of a two-knob landscape y = a*b - 2a with a, b in 0..9 (training and test halves).
struct Landscape {
  FeatureMatrix x, test;
  std::vector<double> y, y_test;
  explicit Landscape(std::uint64_t seed, int train = 200, int tests = 100) {
    Rng rng(seed);
    for (int i = 0; i < train + tests; ++i) {
      const float a = static_cast<float>(rng.uniform(10)), b = static_cast<float>(rng.uniform(10));
      const std::vector<float> row{a, b};
      (i < train ? x : test).add_row(row);
      (i < train ? y : y_test).push_back(static_cast<double>(a * b - 2 * a));
    }
  }
};

using testing::pearson;

TEST(BoostedTreesModel, LearnsTheLandscape) {
  Landscape d(3);
  BoostedTreesModel m;
  EXPECT_FALSE(m.fitted());
  ASSERT_TRUE(m.fit(d.x, d.y).is_ok());
  EXPECT_TRUE(m.fitted());
  auto p = m.predict(d.test);
  ASSERT_TRUE(p.has_value());
  double se = 0, var = 0;
  const double mean =
      std::accumulate(d.y_test.begin(), d.y_test.end(), 0.0) / static_cast<double>(d.y_test.size());
  for (std::size_t i = 0; i < d.y_test.size(); ++i) {
    se += ((*p)[i] - d.y_test[i]) * ((*p)[i] - d.y_test[i]);
    var += (d.y_test[i] - mean) * (d.y_test[i] - mean);
  }
  EXPECT_LT(se / var, 0.05);  // R^2 > 0.95 on unseen rows
  // A base margin is added to every prediction.
  const std::vector<double> margin(d.test.rows, 10.0);
  auto q = m.predict(d.test, margin);
  ASSERT_TRUE(q.has_value());
  for (std::size_t i = 0; i < q->size(); ++i) EXPECT_DOUBLE_EQ((*q)[i], (*p)[i] + 10.0);
}

TEST(BoostedTreesModel, PredictsLikeXGBoostWithTheSameSettings) {
  // Same objective, split gain and leaf values: on a few rows the two implementations agree
  // up to XGBoost's different initial prediction (0.5 instead of the mean), which the 60
  // rounds absorb.
  Landscape d(11, 60, 200);
  XGBoostSettings xs;
  xs.max_rounds = 60;
  xs.early_stopping_rounds = 1000000;
  XGBoostCostModel xgb(xs);
  BoostedTreesModel own;  // the same defaults: depth 3, eta 0.3, lambda 1, gamma 1e-4
  ASSERT_TRUE(xgb.fit(d.x, d.y).is_ok());
  ASSERT_TRUE(own.fit(d.x, d.y).is_ok());
  auto a = xgb.predict(d.test);
  auto b = own.predict(d.test);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_GT(pearson(*a, *b), 0.99);
}

TEST(BoostedTreesModel, ZeroWeightRowsAreDropped) {
  Landscape d(5, 100, 50);
  // The same rows plus outliers of weight 0 (at feature values the other rows do not have, so
  // they add split points between the training values) predict the same at the training values.
  FeatureMatrix x2 = d.x;
  std::vector<double> y2 = d.y, w2(d.y.size(), 1.0);
  for (int i = 0; i < 20; ++i) {
    const std::vector<float> row{static_cast<float>(i % 10) + 0.5f,
                                 static_cast<float>((3 * i) % 10) + 0.25f};
    x2.add_row(row);
    y2.push_back(1e6);
    w2.push_back(0.0);
  }
  BoostedTreesModel plain, weighted;
  ASSERT_TRUE(plain.fit(d.x, d.y).is_ok());
  ASSERT_TRUE(weighted.fit(x2, y2, {}, w2).is_ok());
  for (const FeatureMatrix* t : {&d.test}) {
    auto p = plain.predict(*t);
    auto q = weighted.predict(*t);
    ASSERT_TRUE(p.has_value());
    ASSERT_TRUE(q.has_value());
    for (std::size_t i = 0; i < p->size(); ++i) EXPECT_NEAR((*p)[i], (*q)[i], 1e-9);
  }
}

TEST(BoostedTreesModel, BadInputIsRejected) {
  Landscape d(1, 10, 5);
  BoostedTreesModel m;
  EXPECT_EQ(m.predict(d.test).status().code(), StatusCode::kInvalidArgument);  // before fit
  const std::vector<double> short_y(d.y.begin(), d.y.end() - 1);
  EXPECT_EQ(m.fit(d.x, short_y).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.fit(d.x, d.y, {}, std::vector<double>(d.y.size(), 0.0)).code(),
            StatusCode::kInvalidArgument);
  BoostedTreesSettings zero;
  zero.rounds = 0;
  EXPECT_EQ(BoostedTreesModel(zero).fit(d.x, d.y).code(), StatusCode::kInvalidArgument);
  BoostedTreesSettings negative_gamma;
  negative_gamma.gamma = -1.0;
  EXPECT_EQ(BoostedTreesModel(negative_gamma).fit(d.x, d.y).code(), StatusCode::kInvalidArgument);
  BoostedTreesSettings deep;
  deep.max_depth = 13;
  EXPECT_EQ(BoostedTreesModel(deep).fit(d.x, d.y).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(m.fit(d.x, d.y).is_ok());
  EXPECT_EQ(m.predict(d.test, std::vector<double>(d.test.rows + 1, 0.0)).status().code(),
            StatusCode::kInvalidArgument);  // one margin per row
  EXPECT_EQ(m.predict(d.test, std::vector<double>(d.test.rows + 1, 0.0)).status().code(),
            StatusCode::kInvalidArgument);  // one margin per row
  FeatureMatrix wide;
  wide.add_row(std::vector<float>{1, 2, 3});
  EXPECT_EQ(m.predict(wide).status().code(), StatusCode::kInvalidArgument);
  // Rows without features (a space of constant knobs): the model predicts the mean.
  FeatureMatrix empty;
  empty.rows = 3;
  BoostedTreesModel flat;
  ASSERT_TRUE(flat.fit(empty, std::vector<double>{1.0, 2.0, 6.0}).is_ok());
  auto p = flat.predict(empty);
  ASSERT_TRUE(p.has_value());
  for (double v : *p) EXPECT_NEAR(v, 3.0, 1e-12);
}

TEST(ForestModel, SettingsOutOfRangeAreRejectedByFit) {
  // A feature fraction above 1 asked for more features per split than there are (which read
  // past the feature list), a negative one for a huge count; fit and refresh refuse both.
  Landscape d(2, 40, 5);
  for (double fraction : {2.0, 1.01, 1.5, -1.0, 0.0, std::nan("")}) {
    ForestSettings s;
    s.feature_fraction = fraction;
    ForestModel m(s);
    const Status st = m.fit(d.x, d.y);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << fraction;
    EXPECT_NE(st.message().find("feature_fraction"), std::string::npos) << st.message();
    EXPECT_FALSE(m.fitted());
    EXPECT_EQ(m.predict(d.test).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(m.refresh(d.x, d.y, 1).code(), StatusCode::kInvalidArgument) << fraction;
  }
  // Nor does a fit on rows and labels of different counts leave empty trees to predict from.
  ForestModel shapes;
  const std::vector<double> short_y(d.y.begin(), d.y.end() - 1);
  EXPECT_EQ(shapes.fit(d.x, short_y).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(shapes.fitted());
  EXPECT_EQ(shapes.predict(d.test).status().code(), StatusCode::kInvalidArgument);
  ForestSettings no_leaf;
  no_leaf.min_samples_leaf = 0;
  EXPECT_EQ(ForestModel(no_leaf).fit(d.x, d.y).code(), StatusCode::kInvalidArgument);
  ForestSettings no_trees;
  no_trees.trees = 0;
  EXPECT_EQ(ForestModel(no_trees).fit(d.x, d.y).code(), StatusCode::kInvalidArgument);
  // The ends of the range train.
  for (double fraction : {1.0, 1e-9}) {
    ForestSettings s;
    s.feature_fraction = fraction;
    ForestModel m(s);
    EXPECT_TRUE(m.fit(d.x, d.y).is_ok()) << fraction;
    EXPECT_TRUE(m.predict(d.test).has_value());
  }
}

}  // namespace
}  // namespace tunekit
