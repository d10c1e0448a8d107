// config_defines for every knob kind, and the C-identifier check of parameter names.
#include <gtest/gtest.h>

#include "tunekit/measure/kernel_build.hpp"

namespace tunekit {
namespace {

using Defines = std::vector<std::pair<std::string, std::string>>;

/// The config of `space` whose knob `k` sits at entity `positions[k]`.
Config at(const ConfigSpace& space, KnobVector positions) {
  return space.config_of(std::move(positions));
}

TEST(ConfigDefines, OtherKnobsGiveTheirValue) {
  ConfigSpace space;
  ASSERT_TRUE(space.define_knob("INT", {7, -3}));
  ASSERT_TRUE(space.define_knob("REAL", {0.5, 2.25}));
  ASSERT_TRUE(space.define_knob("FLAG", {true, false}));
  ASSERT_TRUE(space.define_knob("WORD", {"float4", "\"quoted"}));
  ASSERT_TRUE(space.define_range("RANGE", 2, 10, 3));  // 2 5 8
  ASSERT_TRUE(space.define_power2("POW", 4, 64));      // 4 8 16 32 64
  EXPECT_EQ(config_defines(at(space, {0, 0, 0, 0, 0, 0})), (Defines{{"INT", "7"},
                                                                    {"REAL", "0.5"},
                                                                    {"FLAG", "1"},
                                                                    {"WORD", "float4"},
                                                                    {"RANGE", "2"},
                                                                    {"POW", "4"}}));
  // An unmatched quote is passed as written.
  EXPECT_EQ(config_defines(at(space, {1, 1, 1, 1, 2, 4})), (Defines{{"INT", "-3"},
                                                                    {"REAL", "2.25"},
                                                                    {"FLAG", "0"},
                                                                    {"WORD", "\"quoted"},
                                                                    {"RANGE", "8"},
                                                                    {"POW", "64"}}));
}

TEST(ConfigDefines, SplitGivesIndexedSizesWithTheOuterExtent) {
  ConfigSpace space;
  SplitOptions options;
  options.policy = "candidate";
  options.no_tail = false;
  options.num_outputs = 2;
  options.candidates = {{-1, 3}, {-1, 5}};
  ASSERT_TRUE(space.define_split("tile", 10, options));
  // ceil(10 / 3) = 4 outer iterations of 3.
  EXPECT_EQ(config_defines(at(space, {0})), (Defines{{"tile_0", "4"}, {"tile_1", "3"}}));
  EXPECT_EQ(config_defines(at(space, {1})), (Defines{{"tile_0", "2"}, {"tile_1", "5"}}));
}

TEST(ConfigDefines, ReorderAndAnnotateGiveIndexedEntries) {
  ConfigSpace space;
  ReorderOptions reorder;
  reorder.policy = "candidate";
  reorder.candidates = {{2, 0, 1}};
  ASSERT_TRUE(space.define_reorder("order", 3, reorder));
  AnnotateOptions annotate;
  annotate.policy = "try_unroll";
  ASSERT_TRUE(space.define_annotate("ann", 2, annotate));
  const Knob& ann = space.knob(1);
  std::uint32_t unroll_none = 0;
  for (std::uint32_t e = 0; e < ann.entities.size(); ++e) {
    if (ann.entities[e] == nlohmann::json{"unroll", "none"}) unroll_none = e;
  }
  ASSERT_EQ(ann.entities[unroll_none], (nlohmann::json{"unroll", "none"}));
  EXPECT_EQ(config_defines(at(space, {0, unroll_none})), (Defines{{"order_0", "2"},
                                                                  {"order_1", "0"},
                                                                  {"order_2", "1"},
                                                                  {"ann_0", "unroll"},
                                                                  {"ann_1", "none"}}));
}

TEST(ConfigDefines, EmptyConfigHasNone) { EXPECT_TRUE(config_defines(Config()).empty()); }

TEST(DefineNames, OnlyCIdentifiers) {
  EXPECT_TRUE(is_c_identifier("block_size_x"));
  EXPECT_TRUE(is_c_identifier("_T2"));
  EXPECT_FALSE(is_c_identifier(""));
  EXPECT_FALSE(is_c_identifier("2x"));
  EXPECT_FALSE(is_c_identifier("tile-x"));
  EXPECT_FALSE(is_c_identifier("a b"));
  ConfigSpace good;
  ASSERT_TRUE(good.define_knob("TILE", {1, 2}));
  EXPECT_TRUE(check_define_names(good));
  ConfigSpace bad;
  ASSERT_TRUE(bad.define_knob("TILE", {1, 2}));
  ASSERT_TRUE(bad.define_knob("tile-x", {1, 2}));
  const Status st = check_define_names(bad);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'tile-x' is not a C identifier"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace tunekit
