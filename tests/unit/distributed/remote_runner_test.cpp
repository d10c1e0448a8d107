// RemoteRunner and serve_remote_trials over an in-memory transport whose worker ranks answer,
// refuse or stay silent.
#include "tunekit/distributed/remote_runner.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <map>

namespace tunekit::distributed {
namespace {

enum class Behaviour { kAnswer, kRefuse, kSilent };

// Rank 0's view: a trial sent to a worker rank is answered at once (result cost = index + 1
// seconds, as serve_remote_trials would send it), refused, or dropped.
class FakeTransport final : public Transport {
 public:
  explicit FakeTransport(std::vector<Behaviour> workers) : workers_(std::move(workers)) {}
  int rank() const override { return 0; }
  int size() const override { return static_cast<int>(workers_.size()) + 1; }
  int local_size() const override { return size(); }
  Status broadcast(std::string&) override { return Status::ok(); }
  Expected<std::vector<std::string>> gather(const std::string&) override {
    return std::vector<std::string>{};
  }
  Status send(int dest, int tag, const std::string& data) override {
    if (tag == kTagStop) {
      ++stops[dest];
      return Status::ok();
    }
    const auto trial = nlohmann::json::parse(data);
    trials_per_rank[dest].push_back(trial["index"].get<std::uint64_t>());
    switch (workers_[static_cast<std::size_t>(dest - 1)]) {
      case Behaviour::kAnswer: {
        MeasureResult result;
        result.costs_s = {static_cast<double>(trial["index"].get<std::uint64_t>() + 1)};
        const nlohmann::json reply = {
            {"batch", trial["batch"]}, {"slot", trial["slot"]}, {"result", result_to_json(result)}};
        inbox_.push_back({dest, kTagResult, reply.dump()});
        break;
      }
      case Behaviour::kRefuse:
        inbox_.push_back({dest, kTagRankFailed, R"({"reason": "no compiler here"})"});
        break;
      case Behaviour::kSilent:
        break;
    }
    return Status::ok();
  }
  Expected<std::optional<Message>> try_receive() override {
    if (inbox_.empty()) return std::optional<Message>{};
    Message message = inbox_.front();
    inbox_.pop_front();
    return std::optional<Message>(message);
  }
  Expected<Message> receive() override { return Status(StatusCode::kRuntimeError, "unused"); }
  [[noreturn]] void abort(int code) override { std::exit(code); }

  std::map<int, std::vector<std::uint64_t>> trials_per_rank;
  std::map<int, int> stops;

 private:
  std::vector<Behaviour> workers_;
  std::deque<Message> inbox_;
};

class RemoteRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<nlohmann::json> values;
    for (int i = 0; i < 10; ++i) values.emplace_back(i);
    ASSERT_TRUE(space_->define_knob("x", values).is_ok());
    auto task = std::make_shared<Task>();
    task->name = "remote";
    task->space = space_;
    for (std::uint64_t i = 0; i < 6; ++i) inputs_.push_back({task, space_->config_at(i)});
  }
  void expect_all_measured(const std::vector<MeasureResult>& results) {
    ASSERT_EQ(results.size(), inputs_.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].error_msg;
      EXPECT_EQ(results[i].costs_s.at(0), static_cast<double>(i + 1));
    }
  }
  std::shared_ptr<ConfigSpace> space_ = std::make_shared<ConfigSpace>();
  std::vector<MeasureInput> inputs_;
};

TEST_F(RemoteRunnerTest, SpreadsTrialsOverTheWorkerRanksAndKeepsTheirOrder) {
  FakeTransport transport({Behaviour::kAnswer, Behaviour::kAnswer});
  RemoteRunner runner(transport, 10.0);
  EXPECT_EQ(runner.n_parallel(), 2);
  expect_all_measured(runner.run(inputs_, {}));
  EXPECT_FALSE(transport.trials_per_rank[1].empty());
  EXPECT_FALSE(transport.trials_per_rank[2].empty());
  EXPECT_TRUE(runner.failures().empty());
  runner.stop();
  EXPECT_EQ(transport.stops[1], 1);
  EXPECT_EQ(transport.stops[2], 1);
}

TEST_F(RemoteRunnerTest, ARankThatCannotMeasureIsReportedAndItsTrialRequeued) {
  FakeTransport transport({Behaviour::kRefuse, Behaviour::kAnswer});
  RemoteRunner runner(transport, 10.0);
  expect_all_measured(runner.run(inputs_, {}));
  ASSERT_EQ(runner.failures().size(), 1U);
  EXPECT_EQ(runner.failures()[0].rank, 1);
  EXPECT_EQ(runner.failures()[0].reason, "no compiler here");
  EXPECT_EQ(transport.trials_per_rank[1].size(), 1U);  // never again after failing
  EXPECT_EQ(runner.n_parallel(), 1);
  EXPECT_FALSE(runner.has_silent_rank());
}

TEST_F(RemoteRunnerTest, ASilentRankTimesOutAndItsTrialGoesElsewhere) {
  FakeTransport transport({Behaviour::kSilent, Behaviour::kAnswer});
  RemoteRunner runner(transport, 0.05);
  expect_all_measured(runner.run(inputs_, {}));
  ASSERT_EQ(runner.failures().size(), 1U);
  EXPECT_NE(runner.failures()[0].reason.find("no answer within 0.05 s"), std::string::npos);
  EXPECT_TRUE(runner.has_silent_rank());
}

TEST_F(RemoteRunnerTest, WithoutALiveRankTrialsFailWithTheReason) {
  FakeTransport transport({Behaviour::kRefuse});
  RemoteRunner runner(transport, 10.0);
  const auto results = runner.run(inputs_, {});
  ASSERT_EQ(results.size(), inputs_.size());
  for (const auto& result : results) {
    EXPECT_EQ(result.error_no, MeasureErrorNo::kRuntimeDevice);
    EXPECT_EQ(result.error_msg, "no rank left to measure on");
  }
}

TEST_F(RemoteRunnerTest, AFailedBuildPassesThroughWithoutBeingSent) {
  FakeTransport transport({Behaviour::kAnswer});
  RemoteRunner runner(transport, 10.0);
  std::vector<BuildResult> builds(inputs_.size());
  builds[2].error_no = MeasureErrorNo::kCompileHost;
  builds[2].error_msg = "syntax error";
  const auto results = runner.run(inputs_, builds);
  EXPECT_EQ(results[2].error_no, MeasureErrorNo::kCompileHost);
  EXPECT_EQ(results[2].error_msg, "syntax error");
  EXPECT_EQ(transport.trials_per_rank[1].size(), inputs_.size() - 1);
}

TEST(RemoteResultJson, RoundTripsAndNamesABadKey) {
  MeasureResult result;
  result.costs_s = {0.5, 0.25};
  result.error_no = MeasureErrorNo::kWrongAnswer;
  result.error_msg = "output 'C' element 3";
  result.all_cost_s = 1.5;
  result.build_cost_s = 0.75;
  result.timestamp_s = 1700000000.0;
  const auto back = result_from_json(result_to_json(result));
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back->costs_s, result.costs_s);
  EXPECT_DOUBLE_EQ(back->build_cost_s, 0.75);
  EXPECT_EQ(back->error_no, result.error_no);
  EXPECT_EQ(back->error_msg, result.error_msg);
  auto broken = result_to_json(result);
  broken.erase("error_no");
  const auto refused = result_from_json(broken);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("'error_no'"), std::string::npos);
}

// A worker rank's view: rank 0 sent `trials` then a stop.
class WorkerSideTransport final : public Transport {
 public:
  explicit WorkerSideTransport(std::vector<std::uint64_t> trials) {
    std::uint64_t slot = 0;
    for (auto index : trials) {
      inbox_.push_back(
          {0, kTagTrial, nlohmann::json{{"batch", 1}, {"slot", slot++}, {"index", index}}.dump()});
    }
    inbox_.push_back({0, kTagStop, "{}"});
  }
  int rank() const override { return 1; }
  int size() const override { return 2; }
  int local_size() const override { return 2; }
  Status broadcast(std::string&) override { return Status::ok(); }
  Expected<std::vector<std::string>> gather(const std::string&) override {
    return std::vector<std::string>{};
  }
  Status send(int, int tag, const std::string& data) override {
    sent.push_back({1, tag, data});
    return Status::ok();
  }
  Expected<std::optional<Message>> try_receive() override { return std::optional<Message>{}; }
  [[noreturn]] void abort(int code) override { std::exit(code); }
  Expected<Message> receive() override {
    Message message = inbox_.front();
    inbox_.pop_front();
    return message;
  }
  std::vector<Message> sent;

 private:
  std::deque<Message> inbox_;
};

TEST(ServeRemoteTrials, AnswersEveryTrialUntilStop) {
  WorkerSideTransport transport({4, 7});
  RemoteMeasureFn measure = [](std::uint64_t index) {
    MeasureResult result;
    result.costs_s = {static_cast<double>(index)};
    return result;
  };
  ASSERT_TRUE(serve_remote_trials(transport, measure).is_ok());
  ASSERT_EQ(transport.sent.size(), 2U);
  const auto second = nlohmann::json::parse(transport.sent[1].data);
  EXPECT_EQ(transport.sent[1].tag, kTagResult);
  EXPECT_EQ(second["slot"], 1);
  EXPECT_EQ(second["result"]["costs"][0], 7.0);
}

TEST(ServeRemoteTrials, ARankThatCannotMeasureSaysSoOnceAndWaitsForStop) {
  WorkerSideTransport transport({4, 7});
  const Expected<RemoteMeasureFn> broken =
      Status(StatusCode::kNotFound, "tunekit-kernel-worker not found");
  ASSERT_TRUE(serve_remote_trials(transport, broken).is_ok());
  ASSERT_EQ(transport.sent.size(), 1U);
  EXPECT_EQ(transport.sent[0].tag, kTagRankFailed);
  EXPECT_NE(transport.sent[0].data.find("tunekit-kernel-worker not found"), std::string::npos);
}

}  // namespace
}  // namespace tunekit::distributed
