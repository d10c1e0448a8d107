// ConfigSpace tests: AutoTVM test vectors (split sizes, index mapping, multi_filter), laziness,
// sampling, neighbours, entity JSON and the definition hash.
#include "tunekit/space/config_space.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>

namespace tunekit {
namespace {

std::size_t split_count(std::int64_t length, const std::string& policy, int num_outputs) {
  SplitOptions o;
  o.policy = policy;
  o.num_outputs = num_outputs;
  auto e = enumerate_split(length, o);
  EXPECT_TRUE(e.has_value()) << e.status().to_string();
  return e ? e->size() : 0;
}

TEST(Split, UpstreamSizeVectors) {
  EXPECT_EQ(split_count(256, "factors", 3), 45u);
  EXPECT_EQ(split_count(256, "power2", 3), 45u);
  EXPECT_EQ(split_count(256, "verbose", 3), 45u);
  EXPECT_EQ(split_count(224, "factors", 3), 63u);
  EXPECT_EQ(split_count(224, "power2", 3), 36u);
  EXPECT_EQ(split_count(224, "verbose", 3), 84u);
  EXPECT_EQ(split_count(std::int64_t{1} << 25, "factors", 4), 3276u);
  EXPECT_EQ(split_count(128, "factors", 2), 8u);
}

TEST(Split, EntityOrderForLength8) {
  SplitOptions o;
  o.num_outputs = 3;
  auto e = enumerate_split(8, o);
  ASSERT_TRUE(e.has_value());
  const std::vector<std::vector<std::int64_t>> want = {
      {-1, 1, 1}, {-1, 2, 1}, {-1, 4, 1}, {-1, 8, 1}, {-1, 1, 2},
      {-1, 2, 2}, {-1, 4, 2}, {-1, 1, 4}, {-1, 2, 4}, {-1, 1, 8}};
  EXPECT_EQ(*e, want);
}

TEST(Split, VerboseCPythonSetOrder) {
  auto a = split_factor_list(224, "verbose", true);
  auto b = split_factor_list(256, "verbose", true);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, (std::vector<std::int64_t>{64, 1, 2, 128, 4, 7, 8, 14, 16, 28, 32, 224, 112, 56}));
  EXPECT_EQ(*b, (std::vector<std::int64_t>{32, 1, 2, 64, 4, 128, 256, 8, 16}));
  auto asc = split_factor_list(224, "verbose", false);
  ASSERT_TRUE(asc);
  EXPECT_TRUE(std::is_sorted(asc->begin(), asc->end()));
  EXPECT_EQ(asc->size(), 14u);
}

TEST(Split, CandidateMaxFactorFilterAndErrors) {
  SplitOptions o;
  o.policy = "candidate";
  o.num_outputs = 2;
  o.candidates = {{4, 8}, {2, 16}};
  auto e = enumerate_split(32, o);
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)[0], (std::vector<std::int64_t>{4, 8}));

  SplitOptions m;
  m.num_outputs = 2;
  m.max_factor = 16;
  EXPECT_EQ(enumerate_split(64, m)->size(), 5u);  // 1 2 4 8 16

  SplitOptions f;
  f.num_outputs = 2;
  f.filter = [](std::span<const std::int64_t> s) { return s[1] % 4 == 0; };
  EXPECT_EQ(enumerate_split(64, f)->size(), 5u);  // 4 8 16 32 64

  SplitOptions none;
  none.num_outputs = 2;
  none.filter = [](std::span<const std::int64_t>) { return false; };
  auto empty = enumerate_split(64, none);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  SplitOptions zero;
  zero.num_outputs = 0;
  EXPECT_FALSE(enumerate_split(64, zero));
}

TEST(Split, FallbackSplitVectors) {
  const std::vector<std::int64_t> limits{-1, 8, 4};
  EXPECT_EQ(*fallback_split(128, limits), (std::vector<std::int64_t>{4, 8, 4}));
  EXPECT_EQ(*fallback_split(49, limits), (std::vector<std::int64_t>{7, 7, 1}));
  const std::vector<std::int64_t> bad{-1, 0};
  EXPECT_FALSE(fallback_split(16, bad));
  ConfigSpace s;
  SplitOptions o;
  o.num_outputs = 3;
  ASSERT_TRUE(s.define_split("tile", 128, o));
  KnobVector knobs(1, 0);
  ASSERT_TRUE(s.fallback_split(knobs, "tile", limits));
  EXPECT_EQ(s.config_of(knobs)["tile"], nlohmann::json({-1, 8, 4}));
  EXPECT_EQ(s.fallback_split(knobs, "nope", limits).code(), StatusCode::kNotFound);
}

TEST(Reorder, Policies) {
  ReorderOptions all;
  EXPECT_EQ(enumerate_reorder(3, all)->size(), 6u);
  EXPECT_EQ(enumerate_reorder(3, all)->at(1), (std::vector<int>{0, 2, 1}));
  ReorderOptions id;
  id.policy = "identity";
  EXPECT_EQ(enumerate_reorder(4, id)->size(), 1u);
  ReorderOptions interval;
  interval.policy = "interval_all";
  interval.interval = {1, 3};
  auto iv = enumerate_reorder(4, interval);
  ASSERT_TRUE(iv);
  EXPECT_EQ(iv->size(), 2u);
  EXPECT_EQ(iv->at(1), (std::vector<int>{0, 2, 1, 3}));
  ReorderOptions cand;
  cand.policy = "candidate";
  cand.candidates = {{2, 0, 1}, {0, 1, 2}};
  EXPECT_EQ(enumerate_reorder(3, cand)->size(), 2u);
  cand.candidates = {{0, 0, 1}};
  EXPECT_FALSE(enumerate_reorder(3, cand));
}

TEST(Annotate, TryUnrollVecKeepsAtMostOneVec) {
  AnnotateOptions o;
  o.policy = "try_unroll_vec";
  auto e = enumerate_annotate(2, o);
  ASSERT_TRUE(e);
  // 3^2 = 9 tuples minus [vec, vec].
  EXPECT_EQ(e->size(), 8u);
  EXPECT_EQ((*e)[0], nlohmann::json({"none", "none"}));
  EXPECT_EQ((*e)[1], nlohmann::json({"none", "unroll"}));  // axis 0 is the slowest digit
  AnnotateOptions u;
  u.policy = "try_unroll";
  EXPECT_EQ(enumerate_annotate(3, u)->size(), 8u);
  AnnotateOptions lc;
  lc.policy = "locate_cache";
  lc.num_anchor = 2;
  auto c = enumerate_annotate(4, lc);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->size(), 6u);
  EXPECT_EQ((*c)[0], nlohmann::json({0, 1}));
  AnnotateOptions gpu;
  gpu.policy = "bind_gpu";
  EXPECT_FALSE(enumerate_annotate(2, gpu));
}

TEST(ConfigSpace, MixedRadixVectors) {
  ConfigSpace a;
  ASSERT_TRUE(a.define_range("x", 0, 8));
  ASSERT_TRUE(a.define_range("y", 0, 8));
  EXPECT_EQ(a.index_to_knobs(12), (KnobVector{4, 1}));
  EXPECT_EQ(a.knobs_to_index(KnobVector{4, 1}), 12u);

  ConfigSpace b;
  ASSERT_TRUE(b.define_range("a", 0, 3));
  ASSERT_TRUE(b.define_range("b", 0, 4));
  ASSERT_TRUE(b.define_range("c", 0, 2));
  EXPECT_EQ(b.index_to_knobs(17), (KnobVector{2, 1, 1}));
  for (std::uint64_t i = 0; i < b.range_length(); ++i)
    EXPECT_EQ(b.knobs_to_index(b.index_to_knobs(i)), i);

  ConfigSpace c;
  SplitOptions o;
  o.num_outputs = 3;
  ASSERT_TRUE(c.define_split("tile", 8, o));
  ASSERT_TRUE(c.define_knob("flag", {false, true}));
  EXPECT_EQ(c.range_length(), 20u);
  const Config cfg = c.config_at(13);
  EXPECT_EQ(cfg.knobs(), (KnobVector{3, 1}));
  EXPECT_EQ(cfg["tile"], nlohmann::json({-1, 8, 1}));
  EXPECT_EQ(cfg["flag"], nlohmann::json(true));
  EXPECT_THROW((void)cfg["missing"], Error);
}

ConfigSpace gemm128() {
  ConfigSpace s;
  SplitOptions o;
  o.num_outputs = 2;
  EXPECT_TRUE(s.define_split("tile_x", 128, o));
  EXPECT_TRUE(s.define_split("tile_y", 128, o));
  EXPECT_TRUE(s.add_constraint(
      "32 <= x.size[1]*y.size[1] < 1024", {"tile_x", "tile_y"}, [](const ConfigView& v) {
        const auto p = v["tile_x"][1].get<std::int64_t>() * v["tile_y"][1].get<std::int64_t>();
        return 32 <= p && p < 1024;
      }));
  return s;
}

TEST(ConfigSpace, MultiFilterVector) {
  const ConfigSpace s = gemm128();
  EXPECT_EQ(s.range_length(), 64u);
  EXPECT_EQ(s.valid_count(), 34u);
  EXPECT_EQ(s.get_next_index(0), std::optional<std::uint64_t>(5));
  EXPECT_EQ(s.subrange_length(0, 64), 34u);
  EXPECT_EQ(s.subrange_length(0, 5), 0u);
  auto bad = s.get(0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(s.get(64));
  EXPECT_TRUE(s.get(5));
  EXPECT_EQ(s.get_next_index(5, -1), std::nullopt);
  EXPECT_EQ(s.get_next_index(0, 2), s.get_next_index(*s.get_next_index(0), 1));
}

TEST(ConfigSpace, SamplingIsValidDistinctAndReproducible) {
  const ConfigSpace s = gemm128();
  Rng rng(7);
  auto all = s.sample_valid(34, rng);
  ASSERT_EQ(all.size(), 34u);
  std::set<std::uint64_t> idx;
  for (const auto& c : all) {
    EXPECT_TRUE(s.is_valid(c.index()));
    idx.insert(c.index());
  }
  EXPECT_EQ(idx.size(), 34u);
  EXPECT_EQ(s.sample_valid(50, rng).size(), 34u);  // never more than the valid points

  Rng r1(42), r2(42);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s.random_valid(r1)->index(), s.random_valid(r2)->index());

  // Uniform over valid points: each of the 34 is drawn about 1/34 of the time.
  std::map<std::uint64_t, int> counts;
  Rng r3(3);
  const int n = 34000;
  for (int i = 0; i < n; ++i) ++counts[s.random_valid(r3)->index()];
  EXPECT_EQ(counts.size(), 34u);
  for (const auto& [i, c] : counts) {
    EXPECT_NEAR(c, n / 34, 200) << "index " << i;
  }
}

TEST(ConfigSpace, RandomValidIndexExcludes) {
  const ConfigSpace s = gemm128();
  Rng rng(1);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 34; ++i) {
    auto x = s.random_valid_index(rng, 0, 64, [&](std::uint64_t j) { return seen.count(j) > 0; });
    ASSERT_TRUE(x);
    EXPECT_TRUE(seen.insert(*x).second);
  }
  EXPECT_FALSE(s.random_valid_index(
      rng, 0, 64, [&](std::uint64_t j) { return seen.count(j) > 0; }, 1000));
}

TEST(ConfigSpace, NeighboursAndRandomWalk) {
  const ConfigSpace s = gemm128();
  const Config c = *s.get(5);  // tile_x [-1,32], tile_y [-1,1]
  auto hamming = s.neighbours(c);
  for (const auto& n : hamming) {
    EXPECT_TRUE(s.is_valid(n.index()));
    int diff = 0;
    for (std::size_t k = 0; k < 2; ++k) diff += n.knobs()[k] != c.knobs()[k];
    EXPECT_EQ(diff, 1);
  }
  // tile_x: 32*1 needs tile_x >= 32 -> 64, 128 (2); tile_y: 32*y in [32,1024) -> y in 2..16 (4).
  EXPECT_EQ(hamming.size(), 6u);
  auto adjacent = s.neighbours(c, NeighbourKind::kAdjacent);
  EXPECT_EQ(adjacent.size(), 2u);  // tile_x 64, tile_y 2
  Rng rng(5);
  for (int i = 0; i < 100; ++i) {
    const Config w = s.random_walk(c, rng);
    EXPECT_NE(w.index(), c.index());
    EXPECT_TRUE(s.is_valid(w.index()));
  }
}

TEST(ConfigSpace, EntityJsonRoundTripAndOldSplits) {
  ConfigSpace s;
  SplitOptions o;
  o.num_outputs = 4;
  ASSERT_TRUE(s.define_split("tile_f", 192, o));
  ASSERT_TRUE(s.define_knob("auto_unroll_max_step", {0, 512, 1500}));
  ASSERT_TRUE(s.define_knob("unroll_explicit", {0, 1}));
  const auto upstream = nlohmann::json::parse(
      R"([["tile_f", "sp", [6, 1, 32, 1]], ["auto_unroll_max_step", "ot", 1500], ["unroll_explicit", "ot", 1]])");
  auto c = s.from_entity_json(upstream);
  ASSERT_TRUE(c) << c.status().to_string();
  EXPECT_EQ((*c)["tile_f"], nlohmann::json({-1, 1, 32, 1}));
  auto j = c->to_json();
  EXPECT_EQ(j["index"].get<std::uint64_t>(), c->index());
  EXPECT_TRUE(j["code_hash"].is_null());
  EXPECT_EQ(j["entity"][1], nlohmann::json({"auto_unroll_max_step", "ot", 1500}));
  auto back = s.from_entity_json(j["entity"]);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->index(), c->index());
  EXPECT_EQ(c->to_string(), "tile_f=[-1,1,32,1],auto_unroll_max_step=1500,unroll_explicit=1");

  auto renamed = s.from_entity_json(nlohmann::json::parse(R"([["tile_k", "sp", [6, 1, 32, 1]]])"));
  ASSERT_FALSE(renamed);
  EXPECT_EQ(renamed.status().code(), StatusCode::kNotFound);
  EXPECT_NE(renamed.status().message().find("tile_k"), std::string::npos);
  auto missing = s.from_entity_json(nlohmann::json::parse(R"([["tile_f", "sp", [-1, 1, 32, 1]]])"));
  EXPECT_FALSE(missing);
}

TEST(ConfigSpace, FeaturesHaveFixedLength) {
  ConfigSpace s;
  SplitOptions o;
  o.num_outputs = 3;
  ASSERT_TRUE(s.define_split("t", 16, o));
  ReorderOptions r;
  ASSERT_TRUE(s.define_reorder("r", 3, r));
  AnnotateOptions a;
  ASSERT_TRUE(s.define_annotate("a", 2, a));
  ASSERT_TRUE(s.define_knob("k", {"x", "y"}));
  ASSERT_TRUE(s.define_knob("b", {false, true}));
  EXPECT_EQ(s.feature_length(), 3u + 3u + 22u + 1u + 1u);
  const auto f = s.flatten_feature(s.index_to_knobs(s.range_length() - 1));
  ASSERT_EQ(f.size(), s.feature_length());
  EXPECT_EQ(f[0], -1.0f);
  EXPECT_EQ(f.back(), 1.0f);
}

TEST(ConfigSpace, DefinitionErrorsLeaveSpaceUnchanged) {
  ConfigSpace s;
  ASSERT_TRUE(s.define_range("x", 0, 4));
  EXPECT_EQ(s.define_range("x", 0, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.define_knob("e", {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.define_knob("obj", {nlohmann::json::object()}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.add_constraint("c", {"nope"}, [](const ConfigView&) { return true; }).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(s.knob_count(), 1u);
  EXPECT_EQ(s.range_length(), 4u);
  ASSERT_TRUE(s.define_power2("p", 2, 100));
  EXPECT_EQ(s.knob(1).size(), 6u);  // 2 4 8 16 32 64
}

TEST(ConfigSpace, HashTracksTheDefinition) {
  ConfigSpace a, b;
  ASSERT_TRUE(a.define_range("x", 0, 4));
  ASSERT_TRUE(b.define_range("x", 0, 4));
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(a.hash().size(), 16u);
  ASSERT_TRUE(b.add_restriction("x != 2"));
  EXPECT_NE(a.hash(), b.hash());
  ConfigSpace c;
  ASSERT_TRUE(c.define_range("x", 0, 5));
  EXPECT_NE(a.hash(), c.hash());
}

TEST(ConfigSpace, RestrictionsAndEmptySpace) {
  ConfigSpace s;
  ASSERT_TRUE(s.define_knob("bx", {16, 32, 64}));
  ASSERT_TRUE(s.define_knob("by", {8, 16, 32}));
  ASSERT_TRUE(s.add_restriction("bx*by <= 512"));
  EXPECT_EQ(s.valid_count(), 6u);
  EXPECT_EQ(s.add_restriction("bz > 1").code(), StatusCode::kNotFound);
  ASSERT_TRUE(s.add_restriction("bx > 100"));
  EXPECT_EQ(s.valid_count(), 0u);
  Rng rng(1);
  auto none = s.random_valid(rng, 1000);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

TEST(ConfigSpace, HugeSparseSpaceIsUsable) {
  // 10^12 points; the constraint keeps those whose first four digits sum to 0 mod 100... i.e. 1%.
  ConfigSpace s;
  for (int k = 0; k < 12; ++k) {
    std::string name = "k";
    name += std::to_string(k);
    ASSERT_TRUE(s.define_range(name, 0, 10));
  }
  ASSERT_TRUE(
      s.add_restriction("(k0*10 + k1 + k5*7 + k11*3) % 100 == 0 or (k2 + 10*k3) % 100 == 42"));
  EXPECT_EQ(s.range_length(), 1'000'000'000'000ULL);
  Rng rng(11);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 2000; ++i) {
    auto c = s.random_valid(rng);
    ASSERT_TRUE(c);
    ASSERT_TRUE(s.is_valid(c->index()));
    auto n = s.neighbours(*c);
    ASSERT_FALSE(n.empty());
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
#if defined(__SANITIZE_ADDRESS__)
  const double slowdown = 10.0;  // AddressSanitizer's instrumentation (2.7 s seen on 2 busy cores)
#else
  const double slowdown = 1.0;
#endif
  EXPECT_LT(ms, 2000.0 * slowdown);  // ~microseconds each (see bench/search_space_bench.cpp)
}

}  // namespace
}  // namespace tunekit
