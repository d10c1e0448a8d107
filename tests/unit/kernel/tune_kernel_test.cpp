// tune_kernel and load_best on a tiny C++ kernel measured in process: every configuration
// measured once, a wrong one reported, the log resumed, the trial budget counting the log, and
// the best configuration loaded and called.
#include "tunekit/kernel/tune_kernel.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "../child_process.hpp"
#include "../test_files.hpp"
#include "tunekit/kernel/kernel_task.hpp"
#include "tunekit/kernel/load_best.hpp"

namespace tunekit {
namespace {

using testing::TempDir;

/// y = 2 * x, unrolled by UNROLL; VARIANT 1 adds 1 to element 3 (a wrong answer).
constexpr const char* kKernel = R"(
#ifndef VARIANT
#define VARIANT 0
#endif
#define P(x) _Pragma(#x)
#define UNROLLED(n) P(GCC unroll n)
extern "C" void twice(int n, const float* x, float* y) {
  UNROLLED(UNROLL)
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
  if (VARIANT == 1) y[3] += 1.0f;
}
)";

class TuneKernelTest : public ::testing::Test {
 protected:
  TuneKernelTest() { dir_.write("twice.cpp", kKernel); }

  /// The spec with `space` and `extra` root members; in process, cache and log in the directory.
  KernelSpec spec(const std::string& space, const std::string& extra = "") {
    const std::string text = R"({"name": "twice", "source": "twice.cpp", "flags": ["-O2"],
      "arguments": [{"name": "n", "dtype": "int32", "value": 64},
                    {"name": "x", "dtype": "float32", "size": "n"},
                    {"name": "y", "dtype": "float32", "size": "n", "output": true}],
      "flop": "n", "isolation": "in-process", "strategy": "grid",
      "timing": {"number": 1, "repeat": 2, "warmup": 0},
      "build": {"cache_dir": "cache", "n_parallel": 2},
      "verify": {"reference": {"params": {"UNROLL": 1, "VARIANT": 0}}},
      "space": )" + space + extra +
                             "}";
    auto s = load_kernel_spec(dir_.write("twice.json", text));
    EXPECT_TRUE(s) << s.status().message();
    return *std::move(s);
  }

  static std::string space() { return R"({"params": {"UNROLL": [1, 2, 4], "VARIANT": [0, 1]}})"; }

  std::size_t log_lines() const {
    std::ifstream in(dir_.file("twice.log.json"));
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  TempDir dir_;
};

TEST_F(TuneKernelTest, MeasuresEveryConfigurationAndReportsTheWrongOnes) {
  auto result = tune_kernel(spec(space()), {});
  ASSERT_TRUE(result) << result.status().message();
  EXPECT_EQ(result->resumed, 0u);
  ASSERT_EQ(result->trials.size(), 6u);
  EXPECT_EQ(result->stop_reason, StopReason::kExhausted);
  std::size_t wrong = 0;
  for (const Trial& t : result->trials) {
    if (t.config.number("VARIANT") == 1) {
      ++wrong;
      EXPECT_EQ(t.result.error_no, MeasureErrorNo::kWrongAnswer) << t.result.error_msg;
      EXPECT_NE(t.result.error_msg.find("element 3"), std::string::npos) << t.result.error_msg;
    } else {
      EXPECT_TRUE(t.result.ok()) << t.result.error_msg;
    }
  }
  EXPECT_EQ(wrong, 3u);
  ASSERT_TRUE(result->best);
  EXPECT_EQ(result->best->config.number("VARIANT"), 0.0);
  EXPECT_EQ(result->task->target, "c -march=native");
  EXPECT_EQ(result->task->flop, 64.0);
  EXPECT_EQ(log_lines(), 6u);
}

TEST_F(TuneKernelTest, SecondRunResumesAndMeasuresNothing) {
  ASSERT_TRUE(tune_kernel(spec(space()), {}));
  auto again = tune_kernel(spec(space()), {});
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(again->resumed, 6u);
  EXPECT_EQ(again->trials.size(), 6u);
  ASSERT_TRUE(again->best);
  EXPECT_EQ(again->best->config.number("VARIANT"), 0.0);
  EXPECT_EQ(log_lines(), 6u);
}

TEST_F(TuneKernelTest, TrialBudgetCountsTheLog) {
  auto first = tune_kernel(spec(space(), R"(, "budget": 2)"), {});
  ASSERT_TRUE(first) << first.status().message();
  EXPECT_EQ(first->trials.size(), 2u);
  EXPECT_EQ(first->stop_reason, StopReason::kTrialCount);
  auto same = tune_kernel(spec(space(), R"(, "budget": 2)"), {});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->trials.size(), 2u);
  EXPECT_EQ(log_lines(), 2u);
  auto more = tune_kernel(spec(space(), R"(, "budget": 3)"), {});
  ASSERT_TRUE(more);
  EXPECT_EQ(more->resumed, 2u);
  EXPECT_EQ(more->trials.size(), 3u);
  EXPECT_EQ(log_lines(), 3u);
}

TEST_F(TuneKernelTest, NoResumeMeasuresAgain) {
  ASSERT_TRUE(tune_kernel(spec(space()), {}));
  KernelTuneOptions options;
  options.resume = false;
  auto again = tune_kernel(spec(space()), options);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->resumed, 0u);
  EXPECT_EQ(log_lines(), 12u);
}

/// Runs `body` in a child whose files cannot grow past 1 KiB: a log of six records does not fit.
int with_small_files(const std::function<int()>& body) {
  testing::ChildLimits limits;
  limits.file_bytes = 1024;
  limits.alarm_s = 120;
  return testing::run_in_child(body, limits);
}

TEST_F(TuneKernelTest, RecordsThatCannotBeSavedFailTheRun) {
  // Built first (the artefacts are larger than the limit), into another log.
  ASSERT_TRUE(tune_kernel(spec(space(), R"(, "log": "warm.log.json")"), {}));
  const KernelSpec s = spec(space());
  const int rc = with_small_files([&] {
    auto result = tune_kernel(s, {});
    if (result) return 1;
    if (result.status().code() != StatusCode::kIoError) return 2;
    const std::string m = result.status().message();
    const bool named = m.find("twice.log.json") != std::string::npos &&
                       m.find("record(s) of this run are not in the log") != std::string::npos;
    return named ? 0 : 3;
  });
  EXPECT_EQ(rc, 0) << "1: no error, 2: not kIoError, 3: the message does not name the log";
}

TEST_F(TuneKernelTest, UnsavedRecordsAreCountedWhenTheCallerReportsThem) {
  ASSERT_TRUE(tune_kernel(spec(space(), R"(, "log": "warm.log.json")"), {}));
  const KernelSpec s = spec(space());
  const int rc = with_small_files([&] {
    KernelTuneOptions options;
    options.fail_on_unsaved = false;
    auto result = tune_kernel(s, options);
    if (!result) return 1;
    const std::size_t lost = result->unsaved.count;
    return lost > 0 && lost <= 6 && result->trials.size() == 6 && result->best ? 0 : 2;
  });
  EXPECT_EQ(rc, 0) << "1: an error, 2: the lost records are not counted";
}

TEST_F(TuneKernelTest, ReferenceThatDoesNotBuildIsAnError) {
  dir_.write("twice.cpp", std::string(kKernel) + "\n#if UNROLL == 1\n#error no\n#endif\n");
  auto result = tune_kernel(spec(space()), {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.status().code(), StatusCode::kCompileError);
  EXPECT_NE(result.status().message().find("the reference configuration"), std::string::npos)
      << result.status().message();
}

TEST_F(TuneKernelTest, LoadBestCallsTheBestConfiguration) {
  const KernelSpec s = spec(space());
  ASSERT_TRUE(tune_kernel(s, {}));
  auto fn = load_best(s.log_path, s);
  ASSERT_TRUE(fn) << fn.status().message();
  EXPECT_EQ(fn->symbol(), "twice");
  EXPECT_NE(fn->config_text().find("VARIANT=0"), std::string::npos) << fn->config_text();
  EXPECT_GT(fn->mean_cost_s(), 0.0);
  std::vector<float> x(10), y(10, 0.0f);
  for (int i = 0; i < 10; ++i) x[i] = static_cast<float>(i);
  (*fn)(10, static_cast<const float*>(x.data()), y.data());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(y[i], 2.0f * i) << i;
}

TEST_F(TuneKernelTest, LoadBestErrorsNameTheLogAndTheTask) {
  const KernelSpec s = spec(space());
  auto missing = load_best(dir_.file("none.json"), s);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("none.json"), std::string::npos);
  ASSERT_TRUE(tune_kernel(s, {}));
  KernelSpec other = s;
  other.problem.arguments[0].scalar_value = 32;  // another workload
  auto none = load_best(s.log_path, other);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().message(),
            s.log_path +
                ": no successful record of task 'twice' with these arguments (0 "
                "record(s) of it, none successful)");
}

TEST(KernelTask, ArgumentsAreTheWorkload) {
  KernelSpec spec;
  spec.source.name = "k";
  spec.build.march = "znver3";
  KernelArgument n{"n", ArgDtype::kInt32, true, 5.0, 0, {}, false};
  KernelArgument x{"x", ArgDtype::kFloat32, false, 0.0, 5, {}, false};
  spec.problem.arguments = {n, x};
  const auto task = make_kernel_task(spec);
  EXPECT_EQ(task->args.dump(), R"([5,["TENSOR",[5],"float32"]])");
  EXPECT_EQ(task->target, "c -march=znver3");
  EXPECT_EQ(kernel_workload_key(*task), R"(["k", [5, ["TENSOR", [5], "float32"]]])");
}

}  // namespace
}  // namespace tunekit
