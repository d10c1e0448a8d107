// CPU-wait counters and the contention share.
#include "tunekit/measure/cpu_wait.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace tunekit::measure {
namespace {

CpuWait counters(std::int64_t run, std::int64_t delay) { return CpuWait{run, delay, true}; }

TEST(Contention, IsTheWaitOverTheTimeTheThreadsWantedACpu) {
  // Ran 8 ms and waited 2 ms in the region: 20%, whatever the CPU count.
  EXPECT_DOUBLE_EQ(contention(counters(10'000'000, 1'000'000), counters(18'000'000, 3'000'000)),
                   0.2);
  EXPECT_DOUBLE_EQ(contention(counters(0, 0), counters(5'000'000, 5'000'000)), 0.5);
  EXPECT_DOUBLE_EQ(contention(counters(0, 0), counters(5'000'000, 0)), 0.0);
}

TEST(Contention, UnavailableShrinkingOrEmptyRegionsReadZero) {
  EXPECT_EQ(contention(CpuWait{}, counters(5'000'000, 5'000'000)), 0.0);
  EXPECT_EQ(contention(counters(0, 0), CpuWait{}), 0.0);
  // A thread that ended between the readings takes its times out of the sums.
  EXPECT_EQ(contention(counters(9'000'000, 9'000'000), counters(4'000'000, 4'000'000)), 0.0);
  EXPECT_EQ(contention(counters(1, 1), counters(1, 1)), 0.0);
}

TEST(Contention, LinuxExposesTheTimesOfThisProcess) {
  const CpuWait first = read_cpu_wait();
  ASSERT_TRUE(first.available) << "/proc/self/task/*/schedstat unreadable";
  // The kernel brings a running thread's time up to date at scheduler events (ticks, switches),
  // so run until it moves, for at most 2 s of wall time.
  volatile double x = 0;
  CpuWait second = first;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (second.run_ns == first.run_ns && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 1'000'000; ++i) x = x + 1.0;
    second = read_cpu_wait();
  }
  EXPECT_GE(second.run_delay_ns, first.run_delay_ns);
  EXPECT_GT(second.run_ns, first.run_ns);
}

}  // namespace
}  // namespace tunekit::measure
