// Unit tests for the timing policy: ScreenIters, warmup/tuning counts, rotating copies, per-call
// timing, timer overhead and the operand cache flush.
#include "tunekit/measure/timing.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "tunekit/measure/cache_flush.hpp"

namespace tunekit::measure {
namespace {

TEST(ScreenIters, WorkedExampleFromPytorch190433) {
  // 50 ms / 5 iterations budget, ~300 ms per call: screen 1 takes 1 call and screen 2 is skipped
  // because it would not take more calls than screen 1.
  const long long n1 = screen_iters(300.0, 3, 50, 5);
  const long long n2 = screen_iters(300.0, 10, 50, 5);
  EXPECT_EQ(n1, 1);
  EXPECT_EQ(n2, 1);
  EXPECT_FALSE(n2 > n1);
  EXPECT_EQ(tuning_iterations(300.0, 50, 5), 1);
}

TEST(ScreenIters, CapsByDurationAndIterations) {
  EXPECT_EQ(screen_iters(0.01, 3, 30, 100), 3);
  EXPECT_EQ(screen_iters(0.01, 10, 30, 100), 10);
  EXPECT_EQ(screen_iters(10.0, 10, 30, 100), 3);
  EXPECT_EQ(screen_iters(0.01, 10, 30, 4), 4);
  EXPECT_EQ(screen_iters(300.0, 3, 0, 0), 3);  // limits off
  EXPECT_EQ(screen_iters(300.0, 10, 0, 5), 5);
  EXPECT_EQ(screen_iters(0.0, 3, 30, 0), 3);    // unknown per-call time
  EXPECT_EQ(screen_iters(1000.0, 3, 1, 1), 1);  // never below 1
}

TEST(IterationCounts, TuningFollowsUpstreamTable) {
  EXPECT_EQ(tuning_iterations(0.1, 30, 100), 100);
  EXPECT_EQ(tuning_iterations(1.0, 30, 100), 30);
  EXPECT_EQ(tuning_iterations(1.0, 30, 0), 30);
  EXPECT_EQ(tuning_iterations(1.0, 0, 7), 7);
  EXPECT_EQ(tuning_iterations(1.0, 0, 0), 100);     // both limits off
  EXPECT_EQ(tuning_iterations(100.0, 30, 100), 1);  // at least 1
  EXPECT_LE(tuning_iterations(0.0, 30, 0), kMaxIterations);
}

TEST(IterationCounts, WarmupFollowsUpstreamTable) {
  EXPECT_EQ(warmup_iterations(1.0, 0, 0), 0);
  EXPECT_EQ(warmup_iterations(1.0, 10, 0), 10);
  EXPECT_EQ(warmup_iterations(1.0, 10, 3), 3);
  EXPECT_EQ(warmup_iterations(1.0, 0, 4), 4);
  EXPECT_EQ(warmup_iterations(30.0, 10, 0), 0);
}

TEST(RotatingCopies, FloorOfSizeOverProblemPlusOne) {
  EXPECT_EQ(rotating_copies(0, 100, 200), 1u);
  EXPECT_EQ(rotating_copies(1 << 20, 1 << 18, 1 << 18), 3u);  // 1 MiB / 512 KiB + 1
  EXPECT_EQ(rotating_copies(1 << 20, 1 << 20, 1 << 20), 1u);  // problem larger than R
  EXPECT_EQ(rotating_copies(1 << 20, 4, 8, 16), 16u);         // capped
  EXPECT_EQ(rotating_copies(1 << 20, 0, 0), 1u);
}

TEST(TimeCalls, TimesEachCallAndStopsAtTheFirstError) {
  Welford w;
  std::vector<double> samples;
  int before = 0;
  int calls = 0;
  Status s = time_calls(
      5,
      [&] {
        ++calls;
        return Status::ok();
      },
      [&] { ++before; }, w, &samples);
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(before, 5);
  EXPECT_EQ(w.count(), 5u);
  EXPECT_EQ(samples.size(), 5u);
  const TimingStats stats = TimingStats::from(w, samples);
  EXPECT_EQ(stats.count, 5u);
  EXPECT_LE(stats.min_ms, stats.median_ms);
  EXPECT_LE(stats.median_ms, stats.max_ms);

  Welford w2;
  calls = 0;
  s = time_calls(
      10, [&] { return ++calls == 3 ? Status(StatusCode::kRuntimeError, "boom") : Status::ok(); },
      [] {}, w2);
  EXPECT_EQ(s.code(), StatusCode::kRuntimeError);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(w2.count(), 2u);
}

TEST(TimerOverhead, IsSmallAndPositive) {
  const double overhead = timer_overhead_ms();
  EXPECT_GT(overhead, 0.0);
  EXPECT_LT(overhead, 0.01);  // below 10 us
}

TEST(CacheFlush, KeepsDataAndNamesItsMethod) {
  std::vector<float> data(1 << 16, 1.5f);
  const MemoryRange ranges[] = {
      {data.data(), data.size() * sizeof(float)}, {nullptr, 100}, {data.data() + 3, 0}};
  flush_data_cache(ranges);
  for (float v : data) ASSERT_EQ(v, 1.5f);
  EXPECT_FALSE(cache_flush_method().empty());
#if defined(__x86_64__)
  EXPECT_TRUE(cache_flush_method() == "clflushopt" || cache_flush_method() == "clflush");
#endif
}

}  // namespace
}  // namespace tunekit::measure
