// Expression evaluator and JSON space spec tests: Python semantics of Kernel Tuner restrictions.
// The benchmark_hub restrictions of the replay data are evaluated on known points.
#include "tunekit/space/expression.hpp"

#include <gtest/gtest.h>

#include "tunekit/space/space_spec.hpp"

namespace tunekit {
namespace {

double eval(const std::string& text, std::vector<ExprValue> slots = {}) {
  auto e = Expression::parse(text);
  EXPECT_TRUE(e) << e.status().to_string();
  if (!e) return -999;
  auto v = e->evaluate(slots);
  EXPECT_TRUE(v) << text << ": " << v.status().to_string();
  return v ? v->number : -999;
}

TEST(Expression, ArithmeticFollowsPython) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("7 / 2"), 3.5);
  EXPECT_EQ(eval("7 // 2"), 3);
  EXPECT_EQ(eval("-7 // 2"), -4);
  EXPECT_EQ(eval("-7 % 3"), 2);
  EXPECT_EQ(eval("7 % -3"), -2);
  EXPECT_EQ(eval("2 ** 3 ** 2"), 512);
  EXPECT_EQ(eval("-2 ** 2"), -4);
  EXPECT_EQ(eval("2 ** -1"), 0.5);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("0x10 + 1.5e1"), 31);
  EXPECT_EQ(eval("6 & 3 | 8 ^ 1"), 11);
  EXPECT_EQ(eval("1 << 4 >> 2"), 4);
  EXPECT_EQ(eval("min(4, 2, 9) + max(1, 3) + abs(-2)"), 7);
  EXPECT_EQ(eval("int(7.9) + round(2.5) + floor(-0.5) + ceil(0.2)"), 9);
  EXPECT_EQ(eval("log2(1024) + sqrt(16) + pow(2, 3)"), 22);
}

TEST(Expression, LogicAndChainedComparisons) {
  EXPECT_EQ(eval("1 < 2 < 3"), 1);
  EXPECT_EQ(eval("1 < 3 < 2"), 0);
  EXPECT_EQ(eval("32 <= 4 * 8 <= 1024"), 1);
  EXPECT_EQ(eval("True and not False"), 1);
  EXPECT_EQ(eval("0 or 5"), 5);  // Python returns the operand
  EXPECT_EQ(eval("1 && 0 || 1"), 1);
  EXPECT_EQ(eval("!1"), 0);
  EXPECT_EQ(eval("3 in (1, 2, 3)"), 1);
  EXPECT_EQ(eval("3 not in [1, 2]"), 1);
  EXPECT_EQ(eval("'a' == 'a' and 'a' != 'b'"), 1);
  EXPECT_EQ(eval("'a' == 1"), 0);
}

TEST(Expression, VariablesAreSlotsInOrderOfAppearance) {
  auto e = Expression::parse("block_size_x*block_size_y<=1024 and block_size_x >= 32");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->variables(), (std::vector<std::string>{"block_size_x", "block_size_y"}));
  const std::vector<ExprValue> ok{ExprValue::of(32.0), ExprValue::of(32.0)};
  const std::vector<ExprValue> big{ExprValue::of(64.0), ExprValue::of(32.0)};
  EXPECT_TRUE(e->test(ok));
  EXPECT_FALSE(e->test(big));
  auto s = Expression::parse("compiler == 'nvcc'");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->test(std::vector<ExprValue>{ExprValue::of(std::string_view("nvcc"))}));
}

TEST(Expression, ErrorsAreValues) {
  for (const char* bad : {"1 +", "(1", "1 2", "foo(1)", "'abc", "3 in 4", "min()", "1 $ 2"}) {
    auto e = Expression::parse(bad);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.status().code(), StatusCode::kParseError);
    EXPECT_NE(e.status().message().find("column"), std::string::npos);
  }
  auto div = Expression::parse("1 / x");
  ASSERT_TRUE(div);
  const std::vector<ExprValue> zero{ExprValue::of(0.0)};
  EXPECT_FALSE(div->evaluate(zero));
  EXPECT_FALSE(div->test(zero));  // a raising restriction rejects the point
  auto str = Expression::parse("x + 1");
  EXPECT_FALSE(str->evaluate(std::vector<ExprValue>{ExprValue::of(std::string_view("s"))}));
  EXPECT_FALSE(str->evaluate({}));
}

TEST(Expression, WhatRaisesInPythonRejectsThePoint) {
  // 0 ** -1 raises ZeroDivisionError, (-8) ** 0.5 is complex, int(inf) raises OverflowError.
  for (const char* text :
       {"x ** -1 > 0", "pow(x, -2) > 0", "(x - 8) ** 0.5 < 1", "int(1 / (x + 1e-320) * 1e300) > 0",
        "round(1e308 * 10 + x) > 0", "floor(1e308 * 10) > 0", "ceil(-1e308 * 10) < 0"}) {
    auto e = Expression::parse(text);
    ASSERT_TRUE(e) << text;
    EXPECT_FALSE(e->test(std::vector<ExprValue>{ExprValue::of(0.0)})) << text;
  }
  EXPECT_EQ(eval("x ** -1", {ExprValue::of(2.0)}), 0.5);
  EXPECT_EQ(eval("(x - 8) ** 2", {ExprValue::of(0.0)}), 64);
}

TEST(Expression, NestingIsBoundedWithAParseError) {
  // 1800 parentheses used to overflow the stack in the recursive-descent parser.
  const std::string deep = std::string(1800, '(') + "1" + std::string(1800, ')');
  auto e = Expression::parse(deep);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.status().code(), StatusCode::kParseError);
  EXPECT_NE(e.status().message().find("nested deeper than 200 levels at column 201"),
            std::string::npos)
      << e.status().to_string();
  // The same for the other recursive forms: unary operators, `not`, `**`, calls, `in` lists.
  for (const std::string& text : {std::string(5000, '-') + "1",
                                  [] {
                                    std::string s;
                                    for (int i = 0; i < 5000; ++i) s += "not ";
                                    return s + "1";
                                  }(),
                                  [] {
                                    std::string s = "2";
                                    for (int i = 0; i < 5000; ++i) s += "**2";
                                    return s;
                                  }(),
                                  [] {
                                    std::string s;
                                    for (int i = 0; i < 5000; ++i) s += "abs(";
                                    return s + "1" + std::string(5000, ')');
                                  }(),
                                  [] {
                                    std::string s;
                                    for (int i = 0; i < 5000; ++i) s += "1 in [(";
                                    std::string close;
                                    for (int i = 0; i < 5000; ++i) close += ")]";
                                    return s + "1" + close;
                                  }()}) {
    auto x = Expression::parse(text);
    ASSERT_FALSE(x) << text.substr(0, 20);
    EXPECT_NE(x.status().message().find("nested deeper than 200 levels"), std::string::npos)
        << x.status().to_string().substr(0, 200);
  }
  // 200 levels parse and evaluate.
  auto ok = Expression::parse(std::string(200, '(') + "1" + std::string(200, ')'));
  ASSERT_TRUE(ok) << ok.status().to_string();
  EXPECT_EQ(ok->evaluate({})->number, 1.0);
  // A long chain nests nothing but makes a deep tree, which the evaluator walks recursively.
  std::string chain = "1";
  for (int i = 0; i < 100000; ++i) chain += "+1";
  auto long_chain = Expression::parse(chain);
  ASSERT_FALSE(long_chain);
  EXPECT_NE(long_chain.status().message().find("more than 1000 operators on one path"),
            std::string::npos);
  std::string fits = "1";
  for (int i = 0; i < 999; ++i) fits += "+1";
  auto fitting = Expression::parse(fits);
  ASSERT_TRUE(fitting) << fitting.status().to_string().substr(0, 200);
  EXPECT_EQ(fitting->evaluate({})->number, 1000.0);
}

TEST(Expression, CheckTypesFindsOperationsThatAlwaysFail) {
  const ExprType s = ExprType::kString, n = ExprType::kNumber, any = ExprType::kAny;
  struct Case {
    const char* text;
    std::vector<ExprType> types;
    const char* what;  // nullptr: no error
  };
  const std::vector<Case> cases = {
      {"a + 1 > 2", {s}, "'+' on the string parameter 'a' always fails at column 3"},
      {"1 - a", {s}, "'-' on the string parameter 'a' always fails"},
      {"-a", {s}, "'unary -' on the string parameter 'a'"},
      {"'x' * 2", {}, "'*' on a string always fails at column 5"},
      {"min(a, 2)", {s}, "'min' of the string parameter 'a' always fails at column 1"},
      {"a < 3",
       {s},
       "an ordering comparison between a number and a string always fails at column 3"},
      {"1 <= b < a", {n, s}, "an ordering comparison"},
      {"(a or 'x') + 1", {s}, "'+' on a string"},
      {"a + 1 > 2", {any}, nullptr},  // mixed values: some points may pass
      {"a + 1 > 2", {n}, nullptr},
      {"a == 'x' or a != 3", {s}, nullptr},
      {"a in ('x', 1)", {s}, nullptr},
      {"a < 'b'", {s}, nullptr},
      {"(a or 1) + 1", {s}, nullptr},  // 'x' or 1 is either
      {"a + 1", {}, nullptr},          // unknown types assume nothing
  };
  for (const Case& c : cases) {
    auto e = Expression::parse(c.text);
    ASSERT_TRUE(e) << c.text;
    Status st = e->check_types(c.types);
    if (c.what == nullptr) {
      EXPECT_TRUE(st.is_ok()) << c.text << ": " << st.to_string();
    } else {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.text;
      EXPECT_NE(st.message().find(c.what), std::string::npos) << st.to_string();
      EXPECT_NE(st.message().find(std::string("expression '") + c.text + "'"), std::string::npos);
    }
  }
}

TEST(SpaceSpec, BenchmarkHubRestrictions) {
  // CLBlast GEMM restrictions (tuning-caches README) on one valid and one invalid point.
  const auto spec = nlohmann::ordered_json::parse(R"({
    "parameters": {"MWG": [16, 32, 64, 128], "NWG": [16, 32, 64, 128], "KWG": [32],
                   "MDIMC": [8, 16, 32], "NDIMC": [8, 16, 32], "MDIMA": [8, 16, 32],
                   "NDIMB": [8, 16, 32], "KWI": [2], "VWM": [1, 2, 4, 8], "VWN": [1, 2, 4, 8]},
    "restrictions": ["KWG % KWI == 0", "MWG % (MDIMC*VWM) == 0", "NWG % (NDIMC*VWN) == 0",
                     "MWG % (MDIMA*VWM) == 0", "NWG % (NDIMB*VWN) == 0",
                     "KWG % ((MDIMC*NDIMC)/MDIMA) == 0", "KWG % ((MDIMC*NDIMC)/NDIMB) == 0"]})");
  auto space = space_from_spec(spec);
  ASSERT_TRUE(space) << space.status().to_string();
  EXPECT_EQ(space->knob(0).name, "MWG");
  EXPECT_EQ(space->range_length(), 4u * 4 * 3 * 3 * 3 * 3 * 4 * 4);
  auto good = space->from_entity_json(nlohmann::json::parse(
      R"([["MWG","ot",64],["NWG","ot",64],["KWG","ot",32],["MDIMC","ot",16],["NDIMC","ot",16],
          ["MDIMA","ot",16],["NDIMB","ot",16],["KWI","ot",2],["VWM","ot",2],["VWN","ot",2]])"));
  ASSERT_TRUE(good);
  EXPECT_TRUE(space->is_valid(good->index()));
  auto bad = space->from_entity_json(nlohmann::json::parse(
      R"([["MWG","ot",16],["NWG","ot",64],["KWG","ot",32],["MDIMC","ot",16],["NDIMC","ot",16],
          ["MDIMA","ot",16],["NDIMB","ot",16],["KWI","ot",2],["VWM","ot",2],["VWN","ot",2]])"));
  ASSERT_TRUE(bad);
  EXPECT_FALSE(space->is_valid(bad->index()));
  // The full CLBlast space has 82944 points of which 17956 pass (with the SA/SB/STRM/STRN
  // knobs); this reduced space keeps the ratio per remaining knob.
  EXPECT_GT(space->valid_count(), 0u);
}

TEST(SpaceSpec, ConvolutionSpaceCountMatchesTheData) {
  // convolution_milo: cartesian 10240, 4362 entries (tuning-caches README).
  const auto spec = nlohmann::ordered_json::parse(R"({
    "parameters": {"block_size_x": {"range": [16, 257, 16]}, "block_size_y": {"power2": [1, 16]},
                   "tile_size_x": [1, 2, 3, 4], "tile_size_y": [1, 2, 3, 4], "read_only": [0, 1],
                   "use_padding": [0, 1], "use_shmem": [0, 1], "use_cmem": [1],
                   "filter_height": [15], "filter_width": [15]},
    "restrictions": ["use_padding==0 or block_size_x % 32 != 0", "block_size_x*block_size_y<=1024",
                     "use_padding==0 or use_shmem != 0",
                     "use_shmem == 0 or ((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*tile_size_y+(filter_height-1))) < 12*1024"]})");
  auto space = space_from_spec(spec);
  ASSERT_TRUE(space) << space.status().to_string();
  EXPECT_EQ(space->range_length(), 10240u);
  EXPECT_EQ(space->valid_count(), 4362u);
}

TEST(SpaceSpec, ListFormKernelTunerKeysAndErrors) {
  auto list = space_from_spec(nlohmann::ordered_json::parse(
      R"({"parameters": [{"name": "b", "values": [1, 2]}, {"name": "a", "values": ["x", "y"]}],
          "restrictions": "a == 'y' or b == 1"})"));
  ASSERT_TRUE(list);
  EXPECT_EQ(list->knob(0).name, "b");
  EXPECT_EQ(list->valid_count(), 3u);
  auto kt = space_from_spec(nlohmann::ordered_json::parse(
      R"({"tune_params": {"a": [1, 2], "b": [3]}, "tune_params_keys": ["b", "a"]})"));
  ASSERT_TRUE(kt);
  EXPECT_EQ(kt->knob(0).name, "b");
  EXPECT_FALSE(space_from_spec(nlohmann::ordered_json::parse(R"({"parameters": {"a": []}})")));
  EXPECT_FALSE(space_from_spec(nlohmann::ordered_json::parse(R"({"params": {}})")));
  auto unknown = space_from_spec(
      nlohmann::ordered_json::parse(R"({"parameters": {"a": [1]}, "restrictions": ["b > 1"]})"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(load_space_spec("/nonexistent/spec.json"));
}

/// The message of a spec that must fail with kInvalidArgument ("" when it loads).
std::string spec_error(const char* json) {
  auto space = space_from_spec(nlohmann::ordered_json::parse(json));
  if (space) return "";
  EXPECT_EQ(space.status().code(), StatusCode::kInvalidArgument) << space.status().to_string();
  return space.status().message();
}

#define EXPECT_SPEC_ERROR(json, what)                                                       \
  do {                                                                                      \
    const std::string message = spec_error(json);                                           \
    EXPECT_NE(message.find(what), std::string::npos) << (json) << "\n  gives: " << message; \
  } while (0)

TEST(SpaceSpec, RangesAreCountedBeforeTheyAreBuilt) {
  // 10^15 values used to be built one by one (std::bad_alloc or tens of GB).
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [0, 1e15]}}})",
                    "parameter 'a': range [0, 1000000000000000) with step 1 has 1000000000000000 "
                    "values; a knob holds at most 1000000");
  EXPECT_SPEC_ERROR(
      R"({"parameters": {"a": {"range": [-9223372036854775808, 9223372036854775807]}}})",
      "has 18446744073709551615 values");
  EXPECT_SPEC_ERROR(
      R"({"parameters": {"a": {"range": [9223372036854775807, -9223372036854775808, -1]}}})",
      "has 18446744073709551615 values");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [0, 1000001]}}})", "has 1000001 values");
  auto limit = space_from_spec(
      nlohmann::ordered_json::parse(R"({"parameters": {"a": {"range": [0, 1000000]}}})"));
  ASSERT_TRUE(limit) << limit.status().to_string();
  EXPECT_EQ(limit->range_length(), 1000000u);
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [5, 5]}}})",
                    "parameter 'a': range [5, 5) with step 1 has no value");
  // Python range semantics, the last value just below the end, near the int64 limits too.
  auto space = space_from_spec(nlohmann::ordered_json::parse(
      R"({"parameters": {"a": {"range": [10, 0, -3]}, "b": {"range": [9223372036854775800, 9223372036854775807, 3]},
                         "c": {"power2": [3, 1e3]}}})"));
  ASSERT_TRUE(space) << space.status().to_string();
  EXPECT_EQ(space->knob(0).entities, (std::vector<nlohmann::json>{10, 7, 4, 1}));
  EXPECT_EQ(
      space->knob(1).entities,
      (std::vector<nlohmann::json>{9223372036854775800, 9223372036854775803, 9223372036854775806}));
  EXPECT_EQ(space->knob(2).entities,
            (std::vector<nlohmann::json>{4, 8, 16, 32, 64, 128, 256, 512}));
  auto big = space_from_spec(
      nlohmann::ordered_json::parse(R"({"parameters": {"a": {"power2": [1, 9.2e18]}}})"));
  ASSERT_TRUE(big) << big.status().to_string();
  EXPECT_EQ(big->knob(0).size(), 63u);
}

TEST(SpaceSpec, BoundsSayWhatIsWrongAndNameTheParameter) {
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [0, 1, 0.1]}}})",
                    "parameter 'a': range step is 0.1, not an integer");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [0, 1, 0]}}})",
                    "parameter 'a': range step is 0");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"power2": [1, 1e300]}}})",
                    "parameter 'a': power2 max is 1e+300, outside the 64-bit integer range");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": ["a", "b"]}}})",
                    "parameter 'a': range begin is \"a\", not an integer");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"power2": [1, null]}}})",
                    "parameter 'a': power2 max is null");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"power2": [9, 15]}}})",
                    "parameter 'a': power2 [9, 15] holds no power of two");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [1]}}})",
                    "parameter 'a': range is [begin, end]");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": [1, 2, 1.0]}})",
                    "parameter 'a': value 1.0 is listed twice");
  EXPECT_SPEC_ERROR(R"({"parameters": [{"name": 3, "values": [1]}]})",
                    "space spec: parameter entry 0: \"name\" must be a string");
  EXPECT_SPEC_ERROR(R"({"parameters": {}})", "space spec: no parameter");
}

TEST(SpaceSpec, UnknownKeysAreRejectedAtEveryLevel) {
  EXPECT_SPEC_ERROR(
      R"({"parameters": {"a": [1, 2]}, "restrictons": ["a > 1"]})",
      "space spec: unknown key \"restrictons\" (accepted: \"parameters\", \"tune_params\", "
      "\"tune_params_keys\", \"restrictions\")");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [0, 4], "step": 2}}})",
                    "parameter 'a': unknown key \"step\" (accepted: \"range\")");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"range": [0, 4], "power2": [1, 4]}}})",
                    "parameter 'a': unknown key \"power2\" (accepted: \"range\")");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": {"rnage": [0, 4]}}})",
                    "parameter 'a': an object needs \"range\" or \"power2\" (keys: \"rnage\")");
  EXPECT_SPEC_ERROR(
      R"({"parameters": [{"name": "a", "value": [1]}]})",
      "space spec: parameter entry 0: unknown key \"value\" (accepted: \"name\", \"values\")");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": [1]}, "tune_params": {"a": [1]}})",
                    "both \"parameters\" and \"tune_params\"");
  EXPECT_SPEC_ERROR(R"({"tune_params": {"a": [1], "b": [2]}, "tune_params_keys": ["a"]})",
                    "parameter 'b' is missing from tune_params_keys");
}

TEST(SpaceSpec, RestrictionsThatFailForEveryPointAreErrors) {
  // Small spaces are counted: restrictions that exclude every point are an error.
  EXPECT_SPEC_ERROR(
      R"({"parameters": {"a": [1, 2], "b": {"range": [0, 8]}}, "restrictions": ["a * b > 100"]})",
      "space spec: no configuration of the 16 points passes the restrictions");
  auto fine = space_from_spec(nlohmann::ordered_json::parse(
      R"({"parameters": {"a": [1, 2], "b": {"range": [0, 8]}}, "restrictions": ["a * b > 13"]})"));
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->valid_count(), 1u);
  // Larger ones are not enumerated (ConfigSpace::random_valid finds out).
  auto large = space_from_spec(nlohmann::ordered_json::parse(
      R"({"parameters": {"a": {"range": [0, 2000]}, "b": {"range": [0, 2000]}}, "restrictions": ["a + b < 0"]})"));
  EXPECT_TRUE(large) << large.status().to_string();
  // Arithmetic on a parameter that only holds strings fails for every point.
  EXPECT_SPEC_ERROR(
      R"({"parameters": {"a": ["x", "y"], "b": [1, 2]}, "restrictions": ["a + 1 > b"]})",
      "expression 'a + 1 > b': '+' on the string parameter 'a' always fails at column 3");
  EXPECT_SPEC_ERROR(R"({"parameters": {"a": ["x", "y"]}, "restrictions": ["a < 2"]})",
                    "an ordering comparison between a number and a string always fails");
  auto mixed = space_from_spec(nlohmann::ordered_json::parse(
      R"({"parameters": {"a": ["x", 1, 2]}, "restrictions": "a == 'x' or a + 1 > 2"})"));
  ASSERT_TRUE(mixed) << mixed.status().to_string();
  EXPECT_EQ(mixed->valid_count(), 2u);
}

}  // namespace
}  // namespace tunekit
