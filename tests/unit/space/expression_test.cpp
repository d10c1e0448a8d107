// Expression evaluator and JSON space spec tests: Python semantics of Kernel Tuner restrictions.
// The benchmark_hub restrictions of the replay data are evaluated on known points.
#include "tunekit/space/expression.hpp"
#include "tunekit/space/space_spec.hpp"

#include <gtest/gtest.h>

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
  auto unknown = space_from_spec(nlohmann::ordered_json::parse(
      R"({"parameters": {"a": [1]}, "restrictions": ["b > 1"]})"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(load_space_spec("/nonexistent/spec.json"));
}

}  // namespace
}  // namespace tunekit
