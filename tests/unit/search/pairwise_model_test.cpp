#include "tunekit/search/pairwise_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "correlation.hpp"

namespace tunekit {
namespace {

using testing::pearson;

// A function with per-knob effects and pairwise interactions over knobs of sizes 3, 4, 2, 5
// and a constant knob; rows drawn at random.
struct PairwiseLandscape {
  std::vector<std::uint64_t> sizes{3, 4, 2, 5, 1};
  std::vector<std::vector<std::uint32_t>> rows, test;
  std::vector<double> y, y_test;
  explicit PairwiseLandscape(std::uint64_t seed, std::size_t n = 150, std::size_t m = 100) {
    Rng rng(seed);
    std::vector<double> first(20), pair(400);
    for (auto& v : first) v = rng.uniform01() * 2.0 - 1.0;
    for (auto& v : pair) v = rng.uniform01() - 0.5;
    auto f = [&](const std::vector<std::uint32_t>& c) {
      double v = 0.0;
      for (std::size_t a = 0; a < 4; ++a) {
        v += first[a * 5 + c[a]];
        for (std::size_t b = a + 1; b < 4; ++b) v += pair[(a * 4 + b) * 25 + c[a] * 5 + c[b]];
      }
      return v;
    };
    auto draw = [&] {
      std::vector<std::uint32_t> c(sizes.size());
      for (std::size_t k = 0; k < c.size(); ++k)
        c[k] = static_cast<std::uint32_t>(rng.uniform(sizes[k]));
      return c;
    };
    for (std::size_t i = 0; i < n; ++i) {
      rows.push_back(draw());
      y.push_back(f(rows.back()));
    }
    for (std::size_t i = 0; i < m; ++i) {
      test.push_back(draw());
      y_test.push_back(f(test.back()));
    }
  }
};

TEST(PairwiseBayesModel, PosteriorDrawsLearnAPairwiseFunction) {
  PairwiseLandscape d(1);
  PairwiseBayesModel m(d.sizes);
  EXPECT_FALSE(m.fitted());
  Rng rng(7);
  ASSERT_TRUE(m.fit(d.rows, d.y, rng).is_ok());
  EXPECT_TRUE(m.fitted());
  std::vector<double> p;
  for (const auto& c : d.test) p.push_back(m.predict(c));
  EXPECT_GT(pearson(p, d.y_test), 0.9);  // on configurations it has not seen
  // Each fit is a fresh draw: different on unseen rows, close to the data on the trained ones.
  ASSERT_TRUE(m.fit(d.rows, d.y, rng).is_ok());
  std::vector<double> q;
  for (const auto& c : d.test) q.push_back(m.predict(c));
  EXPECT_NE(p, q);
  double sd = 0.0, mean = std::accumulate(d.y.begin(), d.y.end(), 0.0) / 150.0, err = 0.0;
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    sd += (d.y[i] - mean) * (d.y[i] - mean);
    err += (m.predict(d.rows[i]) - d.y[i]) * (m.predict(d.rows[i]) - d.y[i]);
  }
  EXPECT_LT(err / sd, 0.1);
}

TEST(PairwiseBayesModel, GrowingFitsEqualAFreshFit) {
  // The Cholesky factor is extended row by row when the rows only grow; a fresh model fitted on
  // all rows with the same random stream draws the same function.
  PairwiseLandscape d(2, 80);
  PairwiseBayesModel grown(d.sizes), fresh(d.sizes);
  Rng a(3), b(5);
  std::vector<std::vector<std::uint32_t>> head(d.rows.begin(), d.rows.begin() + 50);
  ASSERT_TRUE(grown.fit(head, std::vector<double>(d.y.begin(), d.y.begin() + 50), a).is_ok());
  a.reseed(11);
  b.reseed(11);
  ASSERT_TRUE(grown.fit(d.rows, d.y, a).is_ok());
  ASSERT_TRUE(fresh.fit(d.rows, d.y, b).is_ok());
  for (const auto& c : d.test) EXPECT_NEAR(grown.predict(c), fresh.predict(c), 1e-9);
  // Other rows (not an extension) refactor from scratch.
  std::vector<std::vector<std::uint32_t>> other(d.rows.rbegin(), d.rows.rend());
  std::vector<double> other_y(d.y.rbegin(), d.y.rend());
  a.reseed(13);
  b.reseed(13);
  PairwiseBayesModel fresh2(d.sizes);
  ASSERT_TRUE(grown.fit(other, other_y, a).is_ok());
  ASSERT_TRUE(fresh2.fit(other, other_y, b).is_ok());
  for (const auto& c : d.test) EXPECT_NEAR(grown.predict(c), fresh2.predict(c), 1e-9);
}

TEST(PairwiseBayesModel, BeyondMaxRowsConditionsOnTheBestHalf) {
  PairwiseLandscape d(3, 200);
  PairwiseBayesSettings s;
  s.max_rows = 40;
  PairwiseBayesModel m(d.sizes, s);
  Rng rng(1);
  ASSERT_TRUE(m.fit(d.rows, d.y, rng).is_ok());
  // The best row is always conditioned on, so the draw is near its value.
  const auto best =
      static_cast<std::size_t>(std::max_element(d.y.begin(), d.y.end()) - d.y.begin());
  const double lo = *std::min_element(d.y.begin(), d.y.end());
  EXPECT_NEAR(m.predict(d.rows[best]), d.y[best], 0.15 * (d.y[best] - lo));
  std::vector<double> p;
  for (const auto& c : d.test) p.push_back(m.predict(c));
  EXPECT_GT(pearson(p, d.y_test), 0.5);
}

TEST(PairwiseBayesModel, NoiseGridPicksTheMarginalLikelihoodMaximum) {
  PairwiseLandscape d(5, 120);
  PairwiseBayesSettings s;
  s.noise_grid = {0.001, 0.03, 3.0};
  PairwiseBayesModel m(d.sizes, s);
  Rng rng(2);
  ASSERT_TRUE(m.fit(d.rows, d.y, rng).is_ok());
  EXPECT_LT(m.noise(), 0.1);  // an exact pairwise function: little noise
  std::vector<double> noise(d.y.size());
  for (auto& v : noise) v = rng.uniform01();
  ASSERT_TRUE(m.fit(d.rows, noise, rng).is_ok());
  EXPECT_EQ(m.noise(), 3.0);  // a target unrelated to the knobs: all noise
  // Without a grid the setting is used as is.
  PairwiseBayesModel fixed(d.sizes);
  ASSERT_TRUE(fixed.fit(d.rows, d.y, rng).is_ok());
  EXPECT_EQ(fixed.noise(), PairwiseBayesSettings{}.noise_variance);
}

TEST(PairwiseBayesModel, KnobsOfThousandsOfValuesDrawPriorWeightsLazily) {
  // 1200 x 1000 pairwise terms (beyond the dense limit): a fit touches only the terms of its
  // rows and candidates. The target depends on the small knob only; unseen values of the big
  // knobs add prior noise to each draw, which averages out over draws.
  const std::vector<std::uint64_t> sizes{1200, 1000, 4};
  Rng data(9);
  std::vector<std::vector<std::uint32_t>> rows, test;
  std::vector<double> y, y_test;
  for (int i = 0; i < 300; ++i) {
    auto& out = i < 200 ? rows : test;
    out.push_back({static_cast<std::uint32_t>(data.uniform(1200)),
                   static_cast<std::uint32_t>(data.uniform(1000)),
                   static_cast<std::uint32_t>(data.uniform(4))});
    (i < 200 ? y : y_test).push_back(2.0 * out.back()[2]);
  }
  PairwiseBayesModel a(sizes), b(sizes);
  Rng ra(4), rb(4);
  std::vector<double> mean(test.size(), 0.0);
  for (int draw = 0; draw < 30; ++draw) {
    ASSERT_TRUE(a.fit(rows, y, ra).is_ok());
    ASSERT_TRUE(b.fit(rows, y, rb).is_ok());
    for (std::size_t i = 0; i < test.size(); ++i) {
      const double p = a.predict(test[i]);
      EXPECT_EQ(p, b.predict(test[i]));  // the lazy draws are reproducible
      mean[i] += p / 30.0;
    }
    EXPECT_NEAR(a.predict(rows[0]), y[0], 1.0);  // at a trained row the draw follows the data
  }
  EXPECT_GT(pearson(mean, y_test), 0.95);
}

TEST(PairwiseBayesModel, BadInputIsRejected) {
  PairwiseLandscape d(4, 10, 1);
  PairwiseBayesModel m(d.sizes);
  Rng rng(1);
  EXPECT_EQ(m.fit({}, {}, rng).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.fit(d.rows, std::vector<double>(9, 0.0), rng).code(), StatusCode::kInvalidArgument);
  auto bad = d.rows;
  bad[3][1] = 4;  // knob 1 has 4 values
  EXPECT_EQ(m.fit(bad, d.y, rng).code(), StatusCode::kInvalidArgument);
  bad = d.rows;
  bad[2].pop_back();
  EXPECT_EQ(m.fit(bad, d.y, rng).code(), StatusCode::kInvalidArgument);
  auto y = d.y;
  y[0] = std::nan("");
  EXPECT_EQ(m.fit(d.rows, y, rng).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(m.fitted());
  // A constant target (no information) still fits: every draw is near that constant.
  ASSERT_TRUE(m.fit(d.rows, std::vector<double>(10, 2.5), rng).is_ok());
  EXPECT_TRUE(std::isfinite(m.predict(d.test[0])));
}

}  // namespace
}  // namespace tunekit
