// Unit tests for Welford statistics and order statistics.
#include "tunekit/core/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tunekit {
namespace {

TEST(Welford, MatchesTwoPassFormulas) {
  const std::vector<double> xs = {2, 4, 4, 4, 5, 5, 7, 9};
  Welford w;
  for (double x : xs) w.add(x);
  EXPECT_EQ(w.count(), 8u);
  EXPECT_DOUBLE_EQ(w.mean(), 5.0);
  EXPECT_NEAR(w.variance(), 32.0 / 7.0, 1e-12);
  EXPECT_DOUBLE_EQ(w.min(), 2.0);
  EXPECT_DOUBLE_EQ(w.max(), 9.0);
}

TEST(Stats, MedianAndPercentile) {
  const std::vector<double> odd = {5, 1, 3};
  const std::vector<double> even = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(median(odd), 3.0);
  EXPECT_DOUBLE_EQ(median(even), 2.5);
  EXPECT_DOUBLE_EQ(percentile(even, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(even, 1.0), 4.0);
  EXPECT_TRUE(std::isnan(median(std::vector<double>{})));
}

TEST(Stats, GeometricMean) {
  const std::vector<double> xs = {1, 4, 16};
  EXPECT_NEAR(geometric_mean(xs), 4.0, 1e-12);
  const std::vector<double> bad = {1, 0};
  EXPECT_TRUE(std::isnan(geometric_mean(bad)));
}

}  // namespace
}  // namespace tunekit
