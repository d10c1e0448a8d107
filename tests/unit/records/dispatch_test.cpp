// ApplyHistoryBest tests: upstream lookup order (model, then target keys), nesting, update(),
// the fallback with its one-time warning, validation against the space, and the query log.
#include "tunekit/records/dispatch.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "tunekit/records/record_store.hpp"

namespace tunekit {
namespace {

std::vector<Record> tophub() {
  std::ifstream in(TUNEKIT_TEST_DATA_DIR "/autotvm/tophub_lines.log");
  std::vector<Record> out;
  std::string line;
  while (std::getline(in, line)) {
    auto d = decode_record_line(line);
    if (d && d->first == LineKind::kRecord) out.push_back(d->second);
  }
  return out;
}

const nlohmann::ordered_json& cuda_args(const std::vector<Record>& r) { return r[0].args; }

TEST(Dispatch, ModelThenKeys) {
  const auto records = tophub();
  ASSERT_EQ(records.size(), 2u);
  ApplyHistoryBest ctx(records);
  auto& cur = DispatchContext::current();
  EXPECT_EQ(&cur, &ctx);
  auto by_model = cur.query("cuda -model=titanx", "conv2d_nchw.cuda", cuda_args(records));
  EXPECT_EQ(by_model.kind, HitKind::kModel);
  EXPECT_EQ(by_model.matched, "titanx");
  auto by_key = cur.query("cuda -model=v100", "conv2d_nchw.cuda", cuda_args(records));
  EXPECT_EQ(by_key.kind, HitKind::kKey);
  EXPECT_EQ(by_key.matched, "cuda");
  // A record tuned for llvm -mcpu=skylake-avx512 serves any llvm target through key "cpu".
  auto cpu = cur.query("llvm -mcpu=znver3", "conv2d_NCHWc.x86", records[1].args);
  EXPECT_EQ(cpu.kind, HitKind::kKey);
  EXPECT_EQ(cpu.matched, "cpu");
  ASSERT_TRUE(cpu.record);
  EXPECT_EQ(cpu.record->config_index(), 193u);
  // Workloads compare exactly: another dtype misses.
  auto args = cuda_args(records);
  args.back() = "float16";
  EXPECT_EQ(cur.query("cuda -model=titanx", "conv2d_nchw.cuda", args).kind, HitKind::kMiss);
  EXPECT_EQ(cur.query("llvm", "conv2d_nchw.cuda", cuda_args(records)).kind, HitKind::kMiss);
  EXPECT_THROW(cur.query("", "conv2d_nchw.cuda", cuda_args(records)), Error);
  const auto log = ctx.queries();
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[0].result.kind, HitKind::kModel);
  EXPECT_EQ(log[4].result.kind, HitKind::kMiss);
}

TEST(Dispatch, UnknownModelNeverIndexed) {
  auto records = tophub();
  ApplyHistoryBest ctx(
      std::span<const Record>(records.data() + 1, 1));  // llvm record, model "unknown"
  // A cuda query with model "unknown" must not be served by the llvm record (PR #2671).
  EXPECT_EQ(DispatchContext::current().query("cuda", "conv2d_NCHWc.x86", records[1].args).kind,
            HitKind::kMiss);
}

TEST(Dispatch, NestingUpdateAndScope) {
  const auto records = tophub();
  {
    ApplyHistoryBest outer(records);
    {
      ApplyHistoryBest inner(std::span<const Record>{});
      auto r = DispatchContext::current().query("cuda -model=titanx", "conv2d_nchw.cuda",
                                                cuda_args(records));
      EXPECT_EQ(r.kind, HitKind::kModel);
      EXPECT_EQ(r.context, &outer);  // the inner context had nothing: the parent answered
      inner.update("cuda -model=titanx", "conv2d_nchw.cuda", cuda_args(records),
                   records[0].entity());
      auto u = DispatchContext::current().query("cuda -model=titanx", "conv2d_nchw.cuda",
                                                cuda_args(records));
      EXPECT_EQ(u.kind, HitKind::kUserModel);
      EXPECT_EQ(u.context, &inner);
      auto uk = DispatchContext::current().query("cuda", "conv2d_nchw.cuda", cuda_args(records));
      EXPECT_EQ(uk.kind, HitKind::kUserKey);
    }
    EXPECT_EQ(&DispatchContext::current(), &outer);
  }
  EXPECT_EQ(DispatchContext::current()
                .query("cuda -model=titanx", "conv2d_nchw.cuda", cuda_args(records))
                .kind,
            HitKind::kMiss);
}

TEST(Dispatch, ApplyValidatesAndFallsBack) {
  const auto records = tophub();
  ConfigSpace space;
  SplitOptions s4;
  s4.num_outputs = 4;
  SplitOptions s2;
  s2.num_outputs = 2;
  ASSERT_TRUE(space.define_split("tile_f", 192, s4));
  ASSERT_TRUE(space.define_split("tile_y", 8, s4));
  ASSERT_TRUE(space.define_split("tile_x", 8, s4));
  ASSERT_TRUE(space.define_split("tile_rc", 2048, s2));
  ASSERT_TRUE(space.define_split("tile_ry", 1, s2));
  ASSERT_TRUE(space.define_split("tile_rx", 1, s2));
  ASSERT_TRUE(space.define_knob("auto_unroll_max_step", {0, 512, 1500}));
  ASSERT_TRUE(space.define_knob("unroll_explicit", {0, 1}));
  ApplyHistoryBest ctx(records);
  auto [cfg, q] = ctx.apply("cuda -model=titanx", "conv2d_nchw.cuda", cuda_args(records), space);
  EXPECT_TRUE(q.hit());
  EXPECT_EQ(cfg["tile_f"], nlohmann::json({-1, 1, 32, 1}));  // explicit outer factor 6 ignored
  EXPECT_EQ(cfg["auto_unroll_max_step"], nlohmann::json(1500));
  // A miss uses entity 0 of every knob.
  auto [fb, miss] =
      ctx.apply("cuda -model=titanx", "dense.cuda", nlohmann::ordered_json::array(), space);
  EXPECT_FALSE(miss.hit());
  EXPECT_EQ(fb.knobs(), KnobVector(space.knob_count(), 0));
  // A record whose knobs do not fit the space (another template version) is not applied.
  ConfigSpace renamed;
  ASSERT_TRUE(renamed.define_knob("tile_k", {1, 2}));
  auto [other, bad] =
      ctx.apply("cuda -model=titanx", "conv2d_nchw.cuda", cuda_args(records), renamed);
  EXPECT_FALSE(bad.hit());
  EXPECT_EQ(other.knobs(), KnobVector{0});
}

TEST(Dispatch, OneSpaceDefinitionPerWorkloadAsInPickBest) {
  const auto records = tophub();
  Record old_fast = records[0];
  old_fast.space_hash = "aaaa";
  old_fast.costs_s = {1e-7};
  Record current = records[0];
  current.space_hash = "bbbb";
  current.config["index"] = 5;
  const std::vector<Record> mixed{old_fast, current};
  {
    ApplyHistoryBest ctx(mixed);
    auto q = ctx.query("cuda -model=titanx", "conv2d_nchw.cuda", cuda_args(records));
    ASSERT_TRUE(q.hit());
    EXPECT_EQ(q.record->config_index(),
              5u);  // the faster record of the other definition does not win
    EXPECT_EQ(q.record->config_index(), pick_best(mixed)[0].config_index());
  }
  {
    // Across loads: a later load whose records are of another definition replaces the earlier.
    ApplyHistoryBest ctx(std::span<const Record>(&old_fast, 1));
    ctx.load(std::span<const Record>(&current, 1));
    auto q = ctx.query("cuda -model=v100", "conv2d_nchw.cuda", cuda_args(records));
    ASSERT_TRUE(q.hit());
    EXPECT_EQ(q.record->space_hash, "bbbb");
    EXPECT_EQ(ctx.size(), 3u);  // model titanx, keys cuda and gpu: the earlier entries are gone
  }
}

}  // namespace
}  // namespace tunekit
