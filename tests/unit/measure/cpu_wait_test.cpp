// CPU-wait counters and the contention share.
#include "tunekit/measure/cpu_wait.hpp"

#include <gtest/gtest.h>

namespace tunekit::measure {
namespace {

CpuWait waited(std::int64_t ns) { return CpuWait{ns, true}; }

TEST(Contention, IsTheRunDelayOverTheCpusTime) {
  // 2 ms waited over a 10 ms region of 2 CPUs: 10% of their time.
  EXPECT_DOUBLE_EQ(contention(waited(1'000'000), waited(3'000'000), 10'000'000, 2), 0.1);
  EXPECT_DOUBLE_EQ(contention(waited(0), waited(5'000'000), 10'000'000, 1), 0.5);
  // Never above 1 (a thread that waited the whole region on a busier machine than counted).
  EXPECT_DOUBLE_EQ(contention(waited(0), waited(50'000'000), 10'000'000, 2), 1.0);
}

TEST(Contention, UnavailableShrinkingOrEmptyRegionsReadZero) {
  EXPECT_EQ(contention(CpuWait{}, waited(5'000'000), 10'000'000, 2), 0.0);
  EXPECT_EQ(contention(waited(0), CpuWait{}, 10'000'000, 2), 0.0);
  // A thread that ended between the readings takes its delay out of the sum.
  EXPECT_EQ(contention(waited(9'000'000), waited(4'000'000), 10'000'000, 2), 0.0);
  EXPECT_EQ(contention(waited(0), waited(4'000'000), 0, 2), 0.0);
  EXPECT_EQ(contention(waited(0), waited(4'000'000), 10'000'000, 0), 0.4);  // at least 1 CPU
}

TEST(Contention, LinuxExposesTheRunDelayOfThisProcess) {
  const CpuWait first = read_cpu_wait();
  ASSERT_TRUE(first.available) << "/proc/self/task/*/schedstat unreadable";
  const CpuWait second = read_cpu_wait();
  EXPECT_GE(second.run_delay_ns, first.run_delay_ns);
  EXPECT_GE(usable_cpus(), 1);
}

}  // namespace
}  // namespace tunekit::measure
