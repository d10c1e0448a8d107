// Tuner tests: AutoTVM loop semantics (trial count, batching, early stopping, strict best,
// error counting and warning), the measurement cache, time budgets and the progress bar.
#include "tunekit/search/tuner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include "tunekit/core/log.hpp"

namespace tunekit {
namespace {

/// Runner with a cost per index (seconds; <= 0 means the configuration fails) and a fake clock.
class TableRunner : public Runner {
 public:
  explicit TableRunner(std::vector<double> cost_s, int n_parallel = 1)
      : cost_s_(std::move(cost_s)), n_parallel_(n_parallel) {}
  std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                 std::span<const BuildResult>) override {
    std::vector<MeasureResult> out;
    for (const auto& in : inputs) {
      ++calls;
      MeasureResult r;
      const double c = cost_s_.at(in.config.index());
      clock_ += 1.0;
      if (c > 0) {
        r.costs_s = {c};
      } else {
        r.error_no = MeasureErrorNo::kRuntimeDevice;
      }
      r.timestamp_s = clock_;
      out.push_back(r);
    }
    return out;
  }
  int n_parallel() const override { return n_parallel_; }
  double clock_s() const override { return clock_; }
  int calls = 0;

 private:
  std::vector<double> cost_s_;
  int n_parallel_;
  double clock_ = 0.0;
};

/// Strategy replaying a fixed list of index batches.
class ScriptStrategy : public SearchStrategy {
 public:
  explicit ScriptStrategy(std::vector<std::vector<std::uint64_t>> batches)
      : batches_(std::move(batches)) {}
  std::string name() const override { return "script"; }
  Status initialize(const ConfigSpace& space, std::uint64_t) override {
    space_ = &space;
    return Status::ok();
  }
  std::vector<Config> next_batch(std::size_t n) override {
    std::vector<Config> out;
    if (next_ >= batches_.size()) return out;
    for (auto i : batches_[next_++]) {
      if (out.size() < n) out.push_back(space_->config_at(i));
    }
    return out;
  }
  void update(std::span<const Trial> trials) override { updates += trials.size(); }
  std::size_t updates = 0;

 private:
  const ConfigSpace* space_ = nullptr;
  std::vector<std::vector<std::uint64_t>> batches_;
  std::size_t next_ = 0;
};

std::shared_ptr<Task> task_of(std::size_t n) {
  auto space = std::make_shared<ConfigSpace>();
  EXPECT_TRUE(space->define_range("x", 0, static_cast<std::int64_t>(n)));
  auto task = std::make_shared<Task>();
  task->name = "toy";
  task->target = "llvm";
  task->space = space;
  return task;
}

TEST(Tuner, CacheServesRepeatsAndTrialsCountUniqueConfigs) {
  auto task = task_of(10);
  auto runner = std::make_shared<TableRunner>(std::vector<double>{5, 4, 3, 2, 1, 1, 1, 1, 1, 1});
  auto script = std::make_unique<ScriptStrategy>(
      std::vector<std::vector<std::uint64_t>>{{0, 0, 1}, {0, 2}, {3}});
  auto* s = script.get();
  Tuner tuner(task, std::move(script));
  TuneOptions opt;
  opt.n_trial = 100;
  opt.batch_size = 3;
  opt.measure.runner = runner;
  EXPECT_EQ(tuner.tune(opt), StopReason::kExhausted);
  EXPECT_EQ(runner->calls, 4);
  EXPECT_EQ(tuner.trials().size(), 4u);
  EXPECT_EQ(s->updates, 6u);  // every proposed config is reported back, cached ones included
  ASSERT_TRUE(tuner.has_best());
  EXPECT_EQ(tuner.best().config.index(), 3u);
  EXPECT_DOUBLE_EQ(tuner.best_score(), 0.5);
  EXPECT_EQ(tuner.best_iter(), 3u);
}

TEST(Tuner, TrialCountBatchingAndStrictBest) {
  auto task = task_of(20);
  auto runner = std::make_shared<TableRunner>(std::vector<double>(20, 1.0), 4);
  Tuner tuner(task, make_strategy("grid").value());
  TuneOptions opt;
  opt.n_trial = 10;
  opt.measure.runner = runner;
  EXPECT_EQ(tuner.tune(opt), StopReason::kTrialCount);
  EXPECT_EQ(tuner.trials().size(), 10u);
  EXPECT_EQ(tuner.best().config.index(), 0u);  // equal scores later never replace the best
  opt.n_trial = 15;
  EXPECT_EQ(tuner.tune(opt), StopReason::kExhausted);  // continues: 10 more, then nothing left
  EXPECT_EQ(tuner.trials().size(), 20u);
}

TEST(Tuner, EarlyStoppingCountsFromTheBest) {
  auto task = task_of(100);
  std::vector<double> cost(100, 10.0);
  cost[3] = 1.0;
  auto runner = std::make_shared<TableRunner>(cost);
  Tuner tuner(task, make_strategy("grid").value());
  TuneOptions opt;
  opt.n_trial = 100;
  opt.early_stopping = 5;
  opt.measure.runner = runner;
  EXPECT_EQ(tuner.tune(opt), StopReason::kEarlyStopping);
  EXPECT_EQ(tuner.best_iter(), 3u);
  EXPECT_EQ(tuner.trials().size(), 8u);  // stop once i >= best_iter + early_stopping
}

TEST(Tuner, FailuresAreResultsAndTheErrorWarningFiresOnce) {
  auto task = task_of(30);
  std::vector<double> cost(30, -1.0);
  cost[25] = 2.0;
  auto runner = std::make_shared<TableRunner>(cost);
  const std::string log_path = ::testing::TempDir() + "tuner_warn." + std::to_string(::getpid());
  ASSERT_TRUE(log::set_sink(log_path));
  Tuner tuner(task, make_strategy("grid").value());
  TuneOptions opt;
  opt.n_trial = 30;
  opt.error_threshold = 10;
  opt.measure.runner = runner;
  tuner.tune(opt);
  ASSERT_TRUE(log::set_sink("err"));
  EXPECT_EQ(tuner.best().config.index(), 25u);
  EXPECT_EQ(tuner.error_count(), 4u);  // consecutive failures after the success
  std::ifstream in(log_path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string warning = "Too many errors happen in the tuning. Switching to debug mode.";
  ASSERT_NE(text.find(warning), std::string::npos);
  EXPECT_EQ(text.find(warning), text.rfind(warning));
  std::remove(log_path.c_str());
}

/// What log::warn printed while `body` ran.
std::string warnings_of(const std::function<void()>& body) {
  const std::string path = ::testing::TempDir() + "tuner_warn2." + std::to_string(::getpid());
  EXPECT_TRUE(log::set_sink(path));
  body();
  EXPECT_TRUE(log::set_sink("err"));
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(path.c_str());
  return ss.str();
}

TEST(Tuner, NewTrialsThatAllFailDoNotHideTheBestFromHistory) {
  auto task = task_of(6);
  auto runner = std::make_shared<TableRunner>(std::vector<double>{-1, -1, -1, -1, -1, -1});
  TuneOptions opt;
  opt.n_trial = 3;
  opt.measure.runner = runner;
  Tuner fresh(task, make_strategy("grid").value());
  const std::string none = warnings_of([&] { fresh.tune(opt); });
  EXPECT_NE(none.find("Could not find any valid schedule for task toy (target llvm): all 3 "
                      "trials failed."),
            std::string::npos)
      << none;
  Tuner resumed(task, make_strategy("grid").value());
  MeasureResult good;
  good.costs_s = {1.0};
  const Trial earlier{task->space->config_at(5), good, 1.0};
  resumed.load_history(std::span(&earlier, 1));
  const std::string kept = warnings_of([&] { resumed.tune(opt); });
  EXPECT_EQ(kept.find("Could not find any valid schedule"), std::string::npos) << kept;
  EXPECT_NE(kept.find("all 3 new trial(s) of task toy (target llvm) failed; the best is still "
                      "one measured before them"),
            std::string::npos)
      << kept;
  ASSERT_TRUE(resumed.has_best());
  EXPECT_EQ(resumed.best().config.index(), 5u);
}

/// Runner that reports every run as a success with the given costs, whatever they are.
class RawCostRunner : public Runner {
 public:
  explicit RawCostRunner(std::vector<double> cost_s) : cost_s_(std::move(cost_s)) {}
  std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                 std::span<const BuildResult>) override {
    std::vector<MeasureResult> out;
    for (const auto& in : inputs) {
      MeasureResult r;
      r.costs_s = {cost_s_.at(in.config.index())};
      out.push_back(r);
    }
    return out;
  }

 private:
  std::vector<double> cost_s_;
};

TEST(MeasureBatch, ZeroNegativeOrNonFiniteCostsOfASuccessBecomeFailures) {
  auto task = task_of(5);
  const std::vector<double> cost{0.0, -1e-3, std::nan(""), HUGE_VAL, 2e-3};
  MeasureOptions options;
  options.runner = std::make_shared<RawCostRunner>(cost);
  std::vector<MeasureInput> inputs;
  for (std::uint64_t i = 0; i < cost.size(); ++i)
    inputs.push_back({task, task->space->config_at(i)});
  const auto results = measure_batch(options, inputs);
  ASSERT_EQ(results.size(), cost.size());
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(results[i].ok()) << i;
    EXPECT_EQ(results[i].error_no, MeasureErrorNo::kRuntimeDevice) << i;
    EXPECT_TRUE(results[i].costs_s.empty()) << i;
    EXPECT_NE(results[i].error_msg.find("must be finite and > 0"), std::string::npos) << i;
  }
  EXPECT_TRUE(results[4].ok());
  // The tuner never picks them: the only positive cost is the best.
  Tuner tuner(task, make_strategy("grid").value());
  TuneOptions opt;
  opt.n_trial = 5;
  opt.measure = options;
  tuner.tune(opt);
  EXPECT_EQ(tuner.best().config.index(), 4u);
}

TEST(Tuner, TimeBudgetUsesTheRunnerClock) {
  auto task = task_of(50);
  auto runner = std::make_shared<TableRunner>(std::vector<double>(50, 1.0));
  Tuner tuner(task, make_strategy("random").value(), 1);
  TuneOptions opt;
  opt.n_trial = 50;
  opt.time_budget_s = 7.0;  // each measurement advances the fake clock by 1 s
  opt.measure.runner = runner;
  EXPECT_EQ(tuner.tune(opt), StopReason::kTimeBudget);
  EXPECT_EQ(tuner.trials().size(), 7u);
}

TEST(Tuner, ZeroTrialsMeasureNothing) {
  auto task = task_of(5);
  auto runner = std::make_shared<TableRunner>(std::vector<double>(5, 1.0));
  Tuner tuner(task, make_strategy("grid").value());
  TuneOptions opt;
  opt.measure.runner = runner;
  tuner.tune(opt);
  EXPECT_EQ(runner->calls, 0);
  EXPECT_FALSE(tuner.has_best());
}

TEST(Tuner, RequestStopFromACallback) {
  auto task = task_of(50);
  auto runner = std::make_shared<TableRunner>(std::vector<double>(50, 1.0));
  Tuner tuner(task, make_strategy("grid").value());
  TuneOptions opt;
  opt.n_trial = 50;
  opt.measure.runner = runner;
  opt.callbacks.push_back([](const Tuner& t, auto, auto) {
    if (t.trials().size() >= 4) t.request_stop();
  });
  EXPECT_EQ(tuner.tune(opt), StopReason::kRequested);
  EXPECT_EQ(tuner.trials().size(), 4u);
}

TEST(ProgressBar, AutoTvmFormat) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    auto task = task_of(8);
    auto flops_task = std::make_shared<Task>(*task);
    flops_task->flop = 2e9;
    auto runner = std::make_shared<TableRunner>(std::vector<double>(8, 0.5));
    Tuner tuner(flops_task, make_strategy("grid").value());
    TuneOptions opt;
    opt.n_trial = 8;
    opt.measure.runner = runner;
    opt.callbacks.push_back(progress_bar(8, "[Task  1/1] ", "G", f));
    tuner.tune(opt);
  }
  std::rewind(f);
  std::string text;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) text += buf;
  std::fclose(f);
  EXPECT_NE(text.find("\r[Task  1/1]  Current/Best:    4.00/   4.00 GFLOPS | Progress: (8/8) | "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" s Done.\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace tunekit
