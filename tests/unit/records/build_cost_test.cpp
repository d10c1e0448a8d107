// The "build_cost" extension key: the build seconds measure_batch takes from the builder reach
// the record, are written next to "space_hash" and read back; upstream lines stay unchanged.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tunekit/records/record.hpp"

namespace tunekit {
namespace {

/// A builder whose every build "took" 0.25 s.
class FixedCostBuilder : public Builder {
 public:
  std::vector<BuildResult> build(std::span<const MeasureInput> inputs) override {
    std::vector<BuildResult> out(inputs.size());
    for (auto& b : out) b.time_cost_s = 0.25;
    return out;
  }
};

/// A runner that reports one cost of 1 ms and 0.5 s of run time per input.
class FixedCostRunner : public Runner {
 public:
  std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                 std::span<const BuildResult>) override {
    std::vector<MeasureResult> out(inputs.size());
    for (auto& r : out) {
      r.costs_s = {1e-3};
      r.all_cost_s = 0.5;
      r.timestamp_s = 1.0;
    }
    return out;
  }
};

MeasureInput one_input() {
  auto space = std::make_shared<ConfigSpace>();
  EXPECT_TRUE(space->define_knob("x", {1, 2}));
  auto task = std::make_shared<Task>();
  task->name = std::string(1, 'k');  // (moved in: GCC 12 -Wrestrict misfires on "k")
  task->target = std::string(3, '+');
  task->space = space;
  return MeasureInput{task, space->config_at(1)};
}

TEST(BuildCost, MeasuredBuildTimeRoundTripsThroughTheLog) {
  const MeasureInput input = one_input();
  MeasureOptions options{std::make_shared<FixedCostBuilder>(), std::make_shared<FixedCostRunner>()};
  const auto results = measure_batch(options, std::span(&input, 1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_DOUBLE_EQ(results[0].build_cost_s, 0.25);
  EXPECT_DOUBLE_EQ(results[0].all_cost_s, 0.75);

  const std::string line = encode_record(make_record(input, results[0]));
  EXPECT_NE(line.find("\"space_hash\": "), std::string::npos) << line;
  EXPECT_NE(line.find(", \"build_cost\": 0.25}"), std::string::npos) << line;
  auto decoded = decode_record_line(line);
  ASSERT_TRUE(decoded) << decoded.status().to_string();
  EXPECT_DOUBLE_EQ(decoded->second.build_cost_s, 0.25);
  EXPECT_EQ(encode_record(decoded->second), line);
}

TEST(BuildCost, AbsentWithoutABuilderAndReadAsZero) {
  const MeasureInput input = one_input();
  MeasureOptions options{nullptr, std::make_shared<FixedCostRunner>()};
  const auto results = measure_batch(options, std::span(&input, 1));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_DOUBLE_EQ(results[0].build_cost_s, 0.0);
  const std::string line = encode_record(make_record(input, results[0]));
  EXPECT_EQ(line.find("build_cost"), std::string::npos) << line;
  auto decoded = decode_record_line(line);
  ASSERT_TRUE(decoded) << decoded.status().to_string();
  EXPECT_DOUBLE_EQ(decoded->second.build_cost_s, 0.0);
}

TEST(BuildCost, ANonNumericBuildCostIsAParseError) {
  const MeasureInput input = one_input();
  MeasureResult result;
  result.costs_s = {1e-3};
  std::string line = encode_record(make_record(input, result));
  line.insert(line.size() - 1, ", \"build_cost\": \"0.25\"");
  auto decoded = decode_record_line(line);
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.status().message().find("build_cost"), std::string::npos)
      << decoded.status().message();
}

}  // namespace
}  // namespace tunekit
