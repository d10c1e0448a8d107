// parse_json: the nesting limit checked before parsing, NUL bytes, and messages without
// nlohmann's "[json.exception.*]" prefixes.
#include "tunekit/core/json.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tunekit {
namespace {

std::string nested(std::size_t levels, const std::string& inner = "1") {
  return std::string(levels, '[') + inner + std::string(levels, ']');
}

std::string message_of(std::string_view text) {
  auto j = parse_json(text);
  return j ? std::string() : j.status().message();
}

TEST(ParseJson, AcceptsNestingUpToTheLimit) {
  auto j = parse_json(nested(kMaxJsonDepth));
  ASSERT_TRUE(j) << j.status().to_string();
  EXPECT_EQ(j->dump().size(), 2 * kMaxJsonDepth + 1);
  // Brackets inside strings (escaped quotes included) are not nesting.
  std::string in_string = "[\"";
  in_string.append(1000, '[').append("\\\"").append(1000, '{').append("\"]");
  EXPECT_TRUE(parse_json(in_string));
  EXPECT_TRUE(parse_json<nlohmann::json>(R"({"a": [{"b": []}]})"));
}

TEST(ParseJson, RefusesDeeperNestingBeforeParsing) {
  // 100,000 levels parse with nlohmann, but dump() and copies of the result overflow the stack.
  for (const std::string& text :
       {nested(kMaxJsonDepth + 1), nested(100'000), std::string(100'000, '{'),
        std::string("{\"a\": ").append(nested(100'000, "{}")).append("}")}) {
    auto j = parse_json(text);
    ASSERT_FALSE(j);
    EXPECT_EQ(j.status().code(), StatusCode::kParseError);
    EXPECT_EQ(j.status().message(), "nested deeper than 256 levels");
  }
  EXPECT_FALSE(check_json_text(nested(5), 4));
  EXPECT_TRUE(check_json_text(nested(4), 4));
}

TEST(ParseJson, MessagesCarryNoExceptionPrefix) {
  EXPECT_EQ(message_of("[1,x]"),
            "not JSON (syntax error at column 4: invalid literal; last read: '1,x')");
  EXPECT_EQ(message_of("{\"a\": 1}\n{\"b\": 2}\n")
                .rfind("not JSON (syntax error at line 2, column 1: ", 0),
            0u)
      << message_of("{\"a\": 1}\n{\"b\": 2}\n");
  EXPECT_EQ(message_of("").rfind("not JSON (syntax error at column 1: unexpected end of input", 0),
            0u)
      << message_of("");
  EXPECT_EQ(message_of("[1e400]"), "a number is out of range (1e400)");
  EXPECT_EQ(message_of(std::string("[1,\0 2]", 7)), "not JSON (contains a NUL byte at column 4)");
  EXPECT_EQ(message_of(std::string("[1,\n\0]", 6)),
            "not JSON (contains a NUL byte at line 2, column 1)");
  for (const std::string text : {"[1,x]", "[1e400]", "{\"a\" 1}", "\"\xff\"", "[1] 2", "nul"}) {
    const std::string m = message_of(text);
    EXPECT_NE(m, "") << text;
    EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(ParseJson, DuplicateKeysAreRefusedOnlyWhenAsked) {
  const std::string text = R"({"a": 1, "b": {"c": 2, "c": 3}})";
  auto last = parse_json<nlohmann::json>(text);
  ASSERT_TRUE(last);
  EXPECT_EQ((*last)["b"]["c"], 3);
  auto refused = parse_json<nlohmann::json>(text, DuplicateKeys::kRefuse);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.status().message(), R"(the key "c" appears twice in one object)");
  // The same key in different objects, or as a value, is no repeat.
  EXPECT_TRUE(
      parse_json<nlohmann::json>(R"([{"a": 1}, {"a": {"a": "a"}}])", DuplicateKeys::kRefuse));
  auto escaped = parse_json<nlohmann::json>("{\"a\\nb\": 1, \"a\\nb\": 2}", DuplicateKeys::kRefuse);
  ASSERT_FALSE(escaped);
  EXPECT_EQ(escaped.status().message(), R"(the key "a\nb" appears twice in one object)");
}

TEST(ParseJson, ErrorMessageOfOtherExceptions) {
  try {
    (void)nlohmann::json(1).get<std::string>();
    FAIL();
  } catch (const nlohmann::json::exception& e) {
    EXPECT_EQ(json_error_message(e), "type must be string, but is number");
  }
}

}  // namespace
}  // namespace tunekit
