// Unit tests for typed environment reads and their error messages.
#include "tunekit/core/env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace tunekit {
namespace {

TEST(Env, ParsesBooleansIntsAndDoubles) {
  ::setenv("TUNEKIT_TEST_B", "TRUE", 1);
  ::setenv("TUNEKIT_TEST_I", "-42", 1);
  ::setenv("TUNEKIT_TEST_D", "1e-3", 1);
  EXPECT_EQ(env::get_bool("TUNEKIT_TEST_B").value(), std::optional<bool>(true));
  EXPECT_EQ(env::get_int("TUNEKIT_TEST_I").value(), std::optional<long long>(-42));
  EXPECT_DOUBLE_EQ(*env::get_double("TUNEKIT_TEST_D").value(), 1e-3);
  ::unsetenv("TUNEKIT_TEST_B");
  EXPECT_FALSE(env::get_bool("TUNEKIT_TEST_B").value().has_value());
}

TEST(Env, MalformedValueNamesTheVariable) {
  ::setenv("TUNEKIT_TEST_I", "12abc", 1);
  auto r = env::get_int("TUNEKIT_TEST_I");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("TUNEKIT_TEST_I"), std::string::npos);
  EXPECT_NE(r.status().message().find("12abc"), std::string::npos);
  ::unsetenv("TUNEKIT_TEST_I");
}

}  // namespace
}  // namespace tunekit
