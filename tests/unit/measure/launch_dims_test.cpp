// Launch geometry evaluation: parameters, scalar arguments, rounding up and error messages.
#include "tunekit/measure/launch_dims.hpp"

#include <gtest/gtest.h>

namespace tunekit {
namespace {

KernelProblem problem_mn(double m, double n) {
  KernelProblem p;
  KernelArgument a;
  a.name = "M";
  a.dtype = ArgDtype::kInt32;
  a.is_scalar = true;
  a.scalar_value = m;
  p.arguments.push_back(a);
  KernelArgument b = a;  // (a fresh copy: GCC 12's -Wrestrict misfires on reassigning a.name)
  b.name = "N";
  b.scalar_value = n;
  p.arguments.push_back(b);
  KernelArgument c;
  c.name = "C";
  c.size = 16;
  p.arguments.push_back(c);
  return p;
}

TEST(LaunchDims, EvaluatesParametersAndScalars) {
  LaunchGeometry g{{"M", "N / WPT"}, {"TS", "TS / WPT"}};
  auto d = evaluate_launch(g, problem_mn(64, 32), {{"TS", 16}, {"WPT", 4}});
  ASSERT_TRUE(d) << d.status().message();
  EXPECT_EQ(d->dims, 2);
  EXPECT_TRUE(d->has_local);
  EXPECT_EQ(d->global[0], 64u);
  EXPECT_EQ(d->global[1], 8u);
  EXPECT_EQ(d->local[0], 16u);
  EXPECT_EQ(d->local[1], 4u);
  EXPECT_EQ(d->groups()[0], 4u);
  EXPECT_EQ(d->groups()[1], 2u);
}

TEST(LaunchDims, RoundsGlobalUpToAMultipleOfLocal) {
  LaunchGeometry g{{"M"}, {"B"}};
  auto d = evaluate_launch(g, problem_mn(17, 1), {{"B", 8}});
  ASSERT_TRUE(d) << d.status().message();
  EXPECT_EQ(d->global[0], 24u);
  EXPECT_EQ(d->groups()[0], 3u);
}

TEST(LaunchDims, BooleansAndSplitsAreVariables) {
  LaunchGeometry g{{"M * (1 + wide)", "tile_1"}, {}};
  auto d = evaluate_launch(g, problem_mn(4, 4), {{"wide", true}, {"tile", {-1, 8}}});
  ASSERT_TRUE(d) << d.status().message();
  EXPECT_FALSE(d->has_local);
  EXPECT_EQ(d->global[0], 8u);
  EXPECT_EQ(d->global[1], 8u);
}

TEST(LaunchDims, UnknownVariableNamesTheEntry) {
  LaunchGeometry g{{"M", "K"}, {}};
  auto d = evaluate_launch(g, problem_mn(4, 4), nlohmann::json::object());
  ASSERT_FALSE(d);
  EXPECT_EQ(d.status().message(),
            "launch global[1] 'K': 'K' is neither a parameter nor a scalar argument");
}

TEST(LaunchDims, FractionAndZeroAreRejected) {
  auto half = evaluate_launch({{"M / 3"}, {}}, problem_mn(4, 4), {});
  ASSERT_FALSE(half);
  EXPECT_NE(half.status().message().find("not a whole number >= 1"), std::string::npos);
  auto zero = evaluate_launch({{"M"}, {"0"}}, problem_mn(4, 4), {});
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.status().message().find("launch local[0] '0'"), std::string::npos);
}

TEST(LaunchDims, ShapeErrors) {
  EXPECT_FALSE(evaluate_launch({{}, {}}, problem_mn(4, 4), {}));
  EXPECT_FALSE(evaluate_launch({{"1", "1", "1", "1"}, {}}, problem_mn(4, 4), {}));
  EXPECT_FALSE(evaluate_launch({{"1", "1"}, {"1"}}, problem_mn(4, 4), {}));
}

}  // namespace
}  // namespace tunekit
