// Unit tests for TunableOp and find_fastest with fake add candidates of known run times: dispatch
// rules, persistence, screening budgets, numerical check, failures, robust winner, threads.
#include "tunekit/tunable/tunable_op.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <thread>

#include "../counting_new.hpp"  // counts allocations: included once per test program
#include "fake_op.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit {
namespace {

using testing::AddParams;
using testing::AddProblem;
using testing::Behaviour;
using testing::CandidateSet;
using testing::FakeCandidate;
using testing::result_lines_of;
using testing::slurp;

class TunableOpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::clear_tunekit_env();
    ctx_ = std::make_unique<TuningContext>();
    ctx_->set_filename(dir_.file("results0.csv"));
    ctx_->set_untuned_filename(dir_.file("untuned0.csv"));
    ctx_->set_rotating_buffer_size(0);
    ctx_->set_max_tuning_duration_ms(2);
    ctx_->set_max_tuning_iterations(10);
    // Rankings are checked in virtual time (exact nominal call times), so the tests do not
    // depend on the load of the machine; ConcurrentHitsAndMisses uses real time.
    testing::g_virtual_time = true;
    ctx_->hooks().set_clock(&testing::virtual_now_ns);
  }
  void TearDown() override {
    testing::g_virtual_time = false;
    testing::clear_tunekit_env();
    (void)log::set_sink("err");
    log::set_level(0);
  }
  std::string capture_log() {
    const std::string path = dir_.file("log.txt");
    EXPECT_TRUE(log::set_sink(path).is_ok());
    return path;
  }
  std::size_t result_count() const { return ctx_->get_results().size(); }

  testing::TempDir dir_;
  std::unique_ptr<TuningContext> ctx_;
};

TEST_F(TunableOpTest, ConstructorChecksCandidateList) {
  EXPECT_THROW(TunableOp<AddParams>(CandidateList<AddParams>{}, *ctx_), Error);
  CandidateSet no_default;
  no_default.add("fast", "fake", 0);
  EXPECT_THROW(TunableOp<AddParams>(std::move(no_default.list), *ctx_), Error);
  CandidateSet duplicate;
  duplicate.add("Default", "fake", 0);
  duplicate.add("x", "fake", 0);
  duplicate.add("x", "fake", 0);
  EXPECT_THROW(TunableOp<AddParams>(std::move(duplicate.list), *ctx_), Error);
}

TEST_F(TunableOpTest, MissTunesPicksFastestPersistsAndHitsNeverRetune) {
  CandidateSet set;
  auto* def = set.add("Default", "fake", 300);
  auto* fast = set.add("fast", "fake", 60);
  auto* mid = set.add("mid", "other", 150);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);

  ASSERT_TRUE(op(problem.params()).is_ok());
  EXPECT_TRUE(problem.correct());  // the caller's output is computed by the winner
  EXPECT_EQ(op.tunings(), 1u);
  EXPECT_EQ(op.cached_solution(problem.params()), "fast");
  const auto results = ctx_->get_results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].op_signature, "AddTunableOp_float");
  EXPECT_EQ(results[0].params_signature, "n_64_t_0");
  EXPECT_EQ(results[0].solution, "fast");
  EXPECT_GT(results[0].time_ms, 0.04);
  EXPECT_LT(results[0].time_ms, 1.0);
  const auto lines = result_lines_of(ctx_->filename());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("AddTunableOp_float,n_64_t_0,fast,", 0), 0u);

  const long def_calls = def->calls(), fast_calls = fast->calls(), mid_calls = mid->calls();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(op(problem.params()).is_ok());
  EXPECT_EQ(op.tunings(), 1u);
  EXPECT_EQ(fast->calls(), fast_calls + 5);
  EXPECT_EQ(def->calls(), def_calls);
  EXPECT_EQ(mid->calls(), mid_calls);
  EXPECT_EQ(result_lines_of(ctx_->filename()).size(), 1u);
}

TEST_F(TunableOpTest, AWinnerRefusingACallHandsItToDefaultWithOneWarning) {
  CandidateSet set;
  auto* def = set.add("Default", "fake", 300);
  auto* fast = set.add("fast", "fake", 60);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);
  ASSERT_TRUE(op(problem.params()).is_ok());
  ASSERT_EQ(op.cached_solution(problem.params()), "fast");
  fast->set_fail_after(fast->calls(), /*refuse=*/true);
  const std::string log_path = capture_log();
  const long def_calls = def->calls();
  for (int i = 0; i < 3; ++i) {
    std::fill(problem.c.begin(), problem.c.end(), 0.0f);
    ASSERT_TRUE(op(problem.params()).is_ok());
    EXPECT_TRUE(problem.correct());
  }
  EXPECT_EQ(def->calls(), def_calls + 3);
  const std::string log = slurp(log_path);
  EXPECT_NE(log.find("fast cannot run this call (fake: failed on call"), std::string::npos) << log;
  EXPECT_EQ(log.find("cannot run this call"), log.rfind("cannot run this call")) << log;
}

TEST_F(TunableOpTest, MissesAndTuneValidateFirstHitsRunResolved) {
  CandidateSet set;
  auto* def = set.add("Default", "fake", 20);
  auto* fast = set.add("fast", "fake", 5);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(32);
  AddParams bad = problem.params();
  bad.invalid = true;

  // A miss with params that fail validate(): its error, before any tuning, run or caching.
  Status s = op(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "fake: invalid problem");
  TuneReport report = op.tune(bad);
  EXPECT_EQ(report.status.message(), "fake: invalid problem");
  EXPECT_FALSE(report.winner.has_value());
  EXPECT_EQ(op.tunings(), 0u);
  EXPECT_EQ(def->calls() + fast->calls(), 0);
  EXPECT_EQ(op.cached_solution(bad), std::nullopt);
  EXPECT_EQ(result_count(), 0u);
  ctx_->enable(false);  // disabled dispatch validates its first call of a key as well
  EXPECT_EQ(op(bad).message(), "fake: invalid problem");
  EXPECT_EQ(def->calls(), 0);
  ctx_->enable(true);

  // The miss of the valid problem tunes and runs the winner through run(); hits go through
  // run_resolved(), which leaves what varies between calls to the candidate.
  ASSERT_TRUE(op(problem.params()).is_ok());
  EXPECT_EQ(op.tunings(), 1u);
  const long resolved = fast->resolved_calls();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(op(problem.params()).is_ok());
  EXPECT_EQ(fast->resolved_calls(), resolved + 3);
  EXPECT_EQ(def->resolved_calls(), 0);
}

TEST_F(TunableOpTest, SixCallsWithOneRepeatAddFourEntriesThenTuningOffAddsNone) {
  CandidateSet set;
  set.add("Default", "fake", 20);
  set.add("fast", "fake", 5);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  std::vector<AddProblem> problems;
  for (int tag : {1, 2, 3, 4}) problems.emplace_back(16, tag);
  for (int i : {0, 1, 2, 3, 1, 1})
    ASSERT_TRUE(op(problems[static_cast<std::size_t>(i)].params()).is_ok());
  EXPECT_EQ(result_count(), 4u);
  EXPECT_EQ(result_lines_of(ctx_->filename()).size(), 4u);

  ctx_->enable_tuning(false);
  AddProblem untuned(16, 99);
  ASSERT_TRUE(op(untuned.params()).is_ok());
  EXPECT_TRUE(untuned.correct());
  EXPECT_EQ(result_count(), 4u);
  EXPECT_EQ(op.cached_solution(untuned.params()), "Default");
  ctx_->enable_tuning(true);  // a fallback decision is re-resolved after a switch change
  EXPECT_EQ(op.cached_solution(untuned.params()), std::nullopt);
  ASSERT_TRUE(op(untuned.params()).is_ok());
  EXPECT_EQ(result_count(), 5u);
}

TEST_F(TunableOpTest, ZeroDurationAndIterationsStillGiveOneResultWith100Calls) {
  ctx_->set_max_tuning_duration_ms(0);
  ctx_->set_max_tuning_iterations(0);
  CandidateSet set;
  set.add("Default", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok()) << report.status.to_string();
  EXPECT_EQ(report.candidates[0].iterations, 100);
  EXPECT_EQ(result_count(), 1u);
  EXPECT_EQ(result_lines_of(ctx_->filename()).size(), 1u);
}

TEST_F(TunableOpTest, ScreenItersBudgetForASlowCandidate) {
  // Scaled pytorch#190433: a ~30 ms call under a 5 ms / 5 iteration budget is probed once,
  // screened with 1 call (screen 2 skipped) and profiled with 1 call.
  ctx_->set_max_tuning_duration_ms(5);
  ctx_->set_max_tuning_iterations(5);
  ctx_->enable_numerical_check(false);
  CandidateSet set;
  auto* slow = set.add("Default", "fake", 30000);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(slow->calls(), 3);  // probe + screen 1 (1 call) + profile (1 call)
  EXPECT_EQ(report.candidates[0].iterations, 1);
  EXPECT_EQ(report.candidates[0].stats.count, 1u);
  EXPECT_DOUBLE_EQ(report.candidates[0].probe_ms, 30.0);
}

TEST_F(TunableOpTest, DisabledRunsDefaultWithoutTuningOrFiles) {
  ctx_->enable(false);
  CandidateSet set;
  auto* def = set.add("Default", "fake", 0);
  auto* fast = set.add("fast", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(op(problem.params()).is_ok());
  EXPECT_TRUE(problem.correct());
  EXPECT_EQ(def->calls(), 3);
  EXPECT_EQ(def->prepares(), 1);
  EXPECT_EQ(fast->calls(), 0);
  EXPECT_EQ(op.tunings(), 0u);
  EXPECT_EQ(result_count(), 0u);
  EXPECT_TRUE(slurp(ctx_->filename()).empty());
}

TEST_F(TunableOpTest, LoadedResultIsDispatchedAndUnknownSolutionWarnsThenRunsDefault) {
  {
    std::ofstream out(ctx_->filename());
    for (const auto& [k, v] : ctx_->get_validators()) out << "Validator," << k << "," << v << "\n";
    out << "AddTunableOp_float,n_8_t_0,mid,0.5\n";
    out << "AddTunableOp_float,n_8_t_1,Gemm_Rocblas_-61,0.5\n";
  }
  const std::string log_path = capture_log();
  CandidateSet set;
  auto* def = set.add("Default", "fake", 0);
  auto* fast = set.add("fast", "fake", 0);
  auto* mid = set.add("mid", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);

  AddProblem known(8, 0);
  ASSERT_TRUE(op(known.params()).is_ok());
  EXPECT_EQ(mid->calls(), 1);
  EXPECT_EQ(mid->prepares(), 1);

  AddProblem unknown(8, 1);
  ASSERT_TRUE(op(unknown.params()).is_ok());
  ASSERT_TRUE(op(unknown.params()).is_ok());
  EXPECT_TRUE(unknown.correct());
  EXPECT_EQ(def->calls(), 2);
  EXPECT_EQ(fast->calls(), 0);
  EXPECT_EQ(op.tunings(), 0u);
  const std::string log = slurp(log_path);
  const std::string warning =
      "missing candidate Gemm_Rocblas_-61 for AddTunableOp_float,n_8_t_1; using Default";
  ASSERT_NE(log.find(warning), std::string::npos) << log;
  EXPECT_EQ(log.find(warning, log.find(warning) + 1), std::string::npos);  // once
  EXPECT_EQ(result_lines_of(ctx_->filename()).size(), 2u);
}

TEST_F(TunableOpTest, NumericalCheckSkipsWrongNanFailingAndThrowingCandidates) {
  CandidateSet set;
  set.add("Default", "fake", 200);
  set.add("wrong", "fake", 10, Behaviour::kWrong);
  set.add("nan", "fake", 10, Behaviour::kNaN);
  set.add("error", "fake", 10, Behaviour::kError);
  set.add("throws", "fake", 10, Behaviour::kThrow);
  set.add("unsupported", "fake", 10, Behaviour::kUnsupported);
  set.add("good", "fake", 50);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(32);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  ASSERT_TRUE(report.winner_report() != nullptr);
  EXPECT_EQ(report.winner_report()->name, "good");
  ASSERT_TRUE(report.tolerance.has_value());
  EXPECT_EQ(*report.tolerance, dtype_tolerance("float"));
  EXPECT_EQ(report.candidates[1].outcome, CandidateOutcome::kWrongResult);
  EXPECT_EQ(report.candidates[1].status.code(), StatusCode::kWrongResult);
  EXPECT_NE(report.candidates[1].reason.find("wrong result"), std::string::npos);
  EXPECT_EQ(report.candidates[2].outcome, CandidateOutcome::kWrongResult);
  EXPECT_NE(report.candidates[2].reason.find("nan"), std::string::npos);
  EXPECT_EQ(report.candidates[3].outcome, CandidateOutcome::kFailed);
  EXPECT_NE(report.candidates[3].reason.find("probe: fake: kernel error"), std::string::npos);
  EXPECT_EQ(report.candidates[4].outcome, CandidateOutcome::kFailed);
  EXPECT_NE(report.candidates[4].reason.find("threw"), std::string::npos);
  EXPECT_EQ(report.candidates[5].outcome, CandidateOutcome::kUnsupported);
  EXPECT_TRUE(problem.c == std::vector<float>(32, 0.0f));  // tune() leaves the caller's C alone

  // With the check off the fast wrong candidate wins: the check is what protects correctness.
  ::setenv("TUNEKIT_NUMERICAL_CHECK", "0", 1);
  AddProblem other(32, 7);
  TuneReport unchecked = op.tune(other.params());
  ASSERT_TRUE(unchecked.winner_report() != nullptr);
  EXPECT_NE(unchecked.winner_report()->name, "good");
  EXPECT_FALSE(unchecked.tolerance.has_value());

  // Explicit tolerances from the environment are used as given.
  ::setenv("TUNEKIT_NUMERICAL_CHECK", "0.5_0.25", 1);
  AddProblem third(32, 8);
  TuneReport loose = op.tune(third.params());
  EXPECT_EQ(loose.tolerance, (Tolerance{0.5, 0.25}));

  // A malformed value is a hard error naming the variable.
  ::setenv("TUNEKIT_NUMERICAL_CHECK", "yes", 1);
  AddProblem fourth(32, 9);
  TuneReport bad = op.tune(fourth.params());
  EXPECT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("TUNEKIT_NUMERICAL_CHECK"), std::string::npos);
  Status dispatched = op(fourth.params());
  EXPECT_EQ(dispatched.code(), StatusCode::kInvalidArgument);
}

TEST_F(TunableOpTest, CandidateFailingInsideProfileIsSkippedWithItsReason) {
  ctx_->enable_numerical_check(false);
  CandidateSet set;
  set.add("Default", "fake", 100);
  auto* flaky = set.add("flaky", "fake", 10);
  flaky->set_fail_after(8);  // passes probe and screen 1, then fails
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(16);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(report.winner_report()->name, "Default");
  EXPECT_EQ(report.candidates[1].outcome, CandidateOutcome::kFailed);
  EXPECT_EQ(report.candidates[1].status.code(), StatusCode::kRuntimeError);
  EXPECT_NE(report.candidates[1].reason.find("failed on call 9"), std::string::npos);
}

TEST_F(TunableOpTest, NoCandidateSucceedingIsAnErrorAndNothingIsStored) {
  CandidateSet set;
  set.add("Default", "fake", 0, Behaviour::kError);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  EXPECT_EQ(report.status.code(), StatusCode::kRuntimeError);
  EXPECT_FALSE(report.winner.has_value());
  EXPECT_EQ(op(problem.params()).code(), StatusCode::kRuntimeError);  // Default's own status
  EXPECT_EQ(result_count(), 0u);
}

TEST_F(TunableOpTest, ScreensRejectClearlySlowerCandidates) {
  ctx_->set_max_tuning_duration_ms(0);
  ctx_->set_max_tuning_iterations(20);
  CandidateSet set;
  set.add("Default", "fake", 40);
  set.add("slow3x", "fake", 120);
  set.add("slow1.3x", "fake", 52);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(report.candidates[1].outcome, CandidateOutcome::kRejectedScreen1);
  EXPECT_NE(report.candidates[1].reason.find("screen 1"), std::string::npos);
  EXPECT_EQ(report.candidates[2].outcome, CandidateOutcome::kRejectedScreen2);
  EXPECT_EQ(report.winner_report()->name, "Default");
}

TEST_F(TunableOpTest, LibraryDisabledByEnvironmentIsSkippedAndMalformedIsAnError) {
  CandidateSet set;
  set.add("Default", "blis", 50);
  set.add("blis_fast", "blis", 5);
  set.add("eigen", "eigen", 20);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  ::setenv("TUNEKIT_BLIS_ENABLED", "0", 1);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(report.candidates[0].outcome, CandidateOutcome::kMeasured);  // Default always runs
  EXPECT_EQ(report.candidates[1].outcome, CandidateOutcome::kDisabled);
  EXPECT_EQ(report.candidates[1].reason, "TUNEKIT_BLIS_ENABLED=0");
  EXPECT_EQ(report.winner_report()->name, "eigen");

  ::setenv("TUNEKIT_BLIS_ENABLED", "nope", 1);
  AddProblem other(8, 1);
  TuneReport bad = op.tune(other.params());
  EXPECT_EQ(bad.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status.message().find("TUNEKIT_BLIS_ENABLED"), std::string::npos);
}

TEST_F(TunableOpTest, MalformedEnvironmentMakesMissesFailNamingTheVariable) {
  CandidateSet set;
  set.add("Default", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  ::setenv("TUNEKIT_MAX_TUNING_DURATION_MS", "fast", 1);
  ASSERT_FALSE(ctx_->reload_environment().is_ok());
  AddProblem problem(8);
  Status s = op(problem.params());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("TUNEKIT_MAX_TUNING_DURATION_MS"), std::string::npos);
}

TEST_F(TunableOpTest, RotatingBuffersUseFloorRPlusOneCopiesWithASharedOffset) {
  ctx_->set_rotating_buffer_size(1);  // 1 MiB
  ctx_->enable_numerical_check(false);
  CandidateSet set;
  auto* def = set.add("Default", "fake", 5);
  auto* other = set.add("other", "fake", 5);
  def->record_outputs(true);
  other->record_outputs(true);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(1024);  // P = 12 KiB -> 1 MiB / 12 KiB + 1 = 86 copies
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(report.rotating_copies, 86u);
  EXPECT_EQ(def->distinct_outputs(), static_cast<std::size_t>(std::min<long>(def->calls(), 86)));
  EXPECT_GT(other->distinct_outputs(), 1u);
  EXPECT_NE(report.cache_flush_method, "off");
}

TEST_F(TunableOpTest, InterleavedRemeasurementOverridesALuckyProfile) {
  // "lucky" is fast during its own profile (a quiet period) and slow afterwards; "steady" is
  // always 7% slower than lucky's lucky phase. The interleaved pass measures both side by side.
  ctx_->set_max_tuning_duration_ms(0);
  ctx_->set_max_tuning_iterations(20);
  ctx_->enable_numerical_check(false);
  CandidateSet set;
  set.add("Default", "fake", 400);
  auto* lucky = set.add("lucky", "fake", 0);
  set.add("steady", "fake", 86);
  // probe 1 + screen-1 lead 2 + screen 1 3 + screen 2 10 + profile lead 2 + profile 20 = 38.
  lucky->set_time_of_call([](long call) { return call <= 38 ? 80.0 : 140.0; });
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_TRUE(report.interleaved);
  EXPECT_TRUE(report.candidates[1].finalist);
  EXPECT_TRUE(report.candidates[2].finalist);
  EXPECT_FALSE(report.candidates[0].finalist);
  EXPECT_GT(report.candidates[1].interleaved_median_ms, 0.12);
  EXPECT_EQ(report.winner_report()->name, "steady");
  EXPECT_EQ(report.runner_up()->name, "lucky");
  EXPECT_EQ(report.candidates[2].score_ms, report.candidates[2].interleaved_median_ms);
  EXPECT_EQ(report.winner_time_ms, report.candidates[2].score_ms);
  EXPECT_GT(report.candidates[2].stats.count, 20u);  // profile + interleaved calls
  EXPECT_GT(report.speedup_over_default(), 3.0);
}

// "multi" stands for a multi-threaded library (50 us alone) that another process slows to
// 100 us while it holds a CPU, and "single" for a single-threaded one (70 us) that it does not
// slow. The other process runs during multi's screens and profile and its first interleaved
// block: those timings say "multi is 1.43x slower", which must neither reject it at screen 2
// (1.15x) nor keep it out of the finalists (25%), and the contended block must not be scored.
// Sets `ctx` to profiles of 20 calls without a time limit or numerical check, and returns
// Default (400 us) and "single" (70 us), to which a test adds its own candidates.
CandidateSet default_and_single(TuningContext& ctx) {
  ctx.set_max_tuning_duration_ms(0);
  ctx.set_max_tuning_iterations(20);
  ctx.enable_numerical_check(false);
  CandidateSet set;
  set.add("Default", "fake", 400);
  set.add("single", "fake", 70);
  return set;
}

// Tunes `set`'s candidates on an 8-element problem.
TuneReport tune_set(TuningContext& ctx, CandidateSet& set) {
  TunableOp<AddParams> op(std::move(set.list), ctx);
  AddProblem problem(8);
  return op.tune(problem.params());
}

// Tunes Default (400 us), "single" (70 us) and "multi", which takes 100 us and waits as long
// for a CPU (contention 50%) in calls up to `loaded_calls`, 50 us after.
TuneReport tune_under_load(TuningContext& ctx, long loaded_calls) {
  CandidateSet set = default_and_single(ctx);
  ctx.hooks().set_cpu_wait_source(&testing::virtual_cpu_wait);
  auto* multi = set.add("multi", "fake", 0);
  multi->set_time_of_call([loaded_calls](long call) {
    if (call > loaded_calls) return 50.0;
    testing::g_virtual_wait_ns.fetch_add(100'000);  // waited as long as it ran: 50%
    return 100.0;
  });
  return tune_set(ctx, set);
}

TEST_F(TunableOpTest, TimingsTakenUnderForeignLoadNeitherRejectNorRankACandidate) {
  // probe 1 + screen-1 lead 2 + screen 1 3 + screen 2 10 + profile lead 2 + profile 20 = 38
  // calls; the first interleaved block is 1 lead-in + 4 timed calls (20 calls / 5 rounds).
  TuneReport report = tune_under_load(*ctx_, 43);
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(report.candidates[2].outcome, CandidateOutcome::kMeasured);
  EXPECT_GT(report.candidates[2].contention, 0.4);
  EXPECT_TRUE(report.candidates[2].finalist);
  EXPECT_EQ(report.rounds_run, 6);  // one more round for the block that was contended
  EXPECT_EQ(report.min_clean_blocks, 5);
  EXPECT_FALSE(report.contended);
  EXPECT_EQ(report.contention, 0.0);
  EXPECT_EQ(report.winner_report()->name, "multi");
  EXPECT_NEAR(report.winner_time_ms, 0.05, 1e-9);
}

// The other process never stops: every block of "multi" is contended. The rounds are re-run up
// to 3x, the scores then use every block, and the report says the choice was made under load.
TEST_F(TunableOpTest, PersistentForeignLoadMarksTheChoiceContended) {
  TuneReport report = tune_under_load(*ctx_, std::numeric_limits<long>::max());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(report.rounds_run, 15);
  EXPECT_EQ(report.min_clean_blocks, 0);
  EXPECT_TRUE(report.contended);
  EXPECT_GT(report.contention, 0.2);
  EXPECT_EQ(report.winner_report()->name, "single");
  EXPECT_NE(format_report(report).find("CONTENDED"), std::string::npos) << format_report(report);
}

// A slow phase of the machine (memory bandwidth taken by other tenants shows as no CPU wait)
// during one candidate's screen: "phased" runs 160 us for its probe, lead-in and screen 1
// (calls 1-6), 2.3x "single"'s 70 us, and 60 us afterwards. Paired call by call with "single",
// it is 0.86x, so screen 1 keeps it, and it wins.
TEST_F(TunableOpTest, ASlowPhaseDuringAScreenIsCheckedPairedWithTheBest) {
  CandidateSet set = default_and_single(*ctx_);
  auto* phased = set.add("phased", "fake", 0);
  phased->set_time_of_call([](long call) { return call <= 6 ? 160.0 : 60.0; });
  // Within the swing of "phased" (60 us, the best by then), but 2.2x when paired too.
  long slow_calls = 0;  // counted here: the candidates die with the op inside tune_set
  set.add("slow", "fake", 0)->set_time_of_call([&slow_calls](long) {
    ++slow_calls;
    return 130.0;
  });
  const TuneReport report = tune_set(*ctx_, set);
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_EQ(report.candidates[2].outcome, CandidateOutcome::kMeasured);
  EXPECT_EQ(report.winner_report()->name, "phased");
  EXPECT_EQ(report.candidates[3].outcome, CandidateOutcome::kRejectedScreen1);
  EXPECT_GT(slow_calls, 6);  // its paired check ran
}

// A slow phase during one candidate's profile: "phased" runs 60 us through its screens (calls
// 1-18: probe 1, lead-in 2, screen 1 3, screen 2 10, profile lead-in 2) and 100 us in its
// profile (calls 19-38), 1.43x "single"'s 70 us and outside the 25% finalist margin, then 60 us
// again. Paired with "single" it is 0.86x: it joins the finalists and wins the interleaved pass.
TEST_F(TunableOpTest, ASlowPhaseDuringAProfileIsCheckedPairedWithTheBest) {
  CandidateSet set = default_and_single(*ctx_);
  auto* phased = set.add("phased", "fake", 0);
  phased->set_time_of_call([](long call) { return call > 18 && call <= 38 ? 100.0 : 60.0; });
  const TuneReport report = tune_set(*ctx_, set);
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_TRUE(report.candidates[2].finalist);
  EXPECT_EQ(report.winner_report()->name, "phased");
}

TEST_F(TunableOpTest, TheReportNeverShowsTheRunnerUpFasterThanTheWinner) {
  // "spiky" is the faster of the two in every call but one slow outlier at the start of its
  // profile, so its mean is above "steady"'s while its interleaved median wins: the written time
  // and every time on the summary line must be the ranked scores, not the means.
  ctx_->set_max_tuning_duration_ms(0);
  ctx_->set_max_tuning_iterations(20);
  ctx_->enable_numerical_check(false);
  CandidateSet set;
  set.add("Default", "fake", 400);
  auto* spiky = set.add("spiky", "fake", 0);
  set.add("steady", "fake", 90);
  // probe 1 + screen-1 lead 2 + screen 1 3 + screen 2 10 + profile lead 2 = 18 calls first;
  // one 600 us call in the profile keeps its mean (106 us) within the finalist margin of 90 us.
  spiky->set_time_of_call([](long call) { return call == 19 ? 600.0 : 80.0; });
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  ASSERT_EQ(report.winner_report()->name, "spiky");
  const CandidateReport& winner = *report.winner_report();
  const CandidateReport& runner_up = *report.runner_up();
  EXPECT_EQ(runner_up.name, "steady");
  EXPECT_GT(winner.stats.mean_ms, runner_up.stats.mean_ms);  // the case that misled
  EXPECT_EQ(report.winner_time_ms, winner.score_ms);
  EXPECT_GE(runner_up.score_ms, report.winner_time_ms);
  const std::string table = format_report(report);
  const std::string runner_up_text = fmt::format("runner-up steady {:.6g} ms", runner_up.score_ms);
  EXPECT_NE(table.find(runner_up_text), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format("winner spiky {:.6g} ms", winner.score_ms)), std::string::npos)
      << table;
}

TEST_F(TunableOpTest, FindFastestStepsCanBeRunOneByOne) {
  ctx_->set_max_tuning_duration_ms(0);
  ctx_->set_max_tuning_iterations(10);
  CandidateSet set;
  set.add("Default", "fake", 100);
  set.add("slow", "fake", 400);
  set.add("fast", "fake", 50);
  AddProblem problem(8);
  auto settings = ctx_->tuning_settings();
  ASSERT_TRUE(settings.has_value());
  const AddParams params = problem.params();
  FastestSearch<AddParams> search(params, set.list, *settings);
  ASSERT_TRUE(search.make_operands().is_ok());
  search.make_reference();
  EXPECT_EQ(search.best_mean_ms(), std::numeric_limits<double>::infinity());
  ASSERT_TRUE(search.measure(0).is_ok());
  EXPECT_NEAR(search.best_mean_ms(), 0.1, 1e-9);
  ASSERT_TRUE(search.measure(1).is_ok());
  EXPECT_EQ(search.report().candidates[1].outcome, CandidateOutcome::kRejectedScreen1);
  ASSERT_TRUE(search.measure(2).is_ok());
  EXPECT_NEAR(search.best_mean_ms(), 0.05, 1e-9);
  EXPECT_FALSE(search.report().winner.has_value());
  search.remeasure_finalists();
  EXPECT_FALSE(search.report().interleaved);  // 2x apart: no finalists but the best
  search.pick_winner();
  EXPECT_EQ(search.report().winner_report()->name, "fast");
}

TEST_F(TunableOpTest, SlowCloseCallsAreReMeasuredByTheTwoFastestEvenOverTheInterleavedBudget) {
  // Calls of about a second: the 30 ms budget allows one profile call each. "lucky" is 0.9 s
  // during its own pass and 1.2 s afterwards; "steady" is always 1.0 s and "third" 1.1 s. Three
  // rounds of all three finalists (9 s) exceed max_interleaved_ms (4 s): "third" is dropped,
  // while the two fastest are still re-measured side by side.
  ctx_->enable_numerical_check(false);
  CandidateSet set;
  set.add("Default", "fake", 5e6);
  auto* lucky = set.add("lucky", "fake", 0);
  auto* steady = set.add("steady", "fake", 1.0e6);
  set.add("third", "fake", 1.1e6);
  lucky->set_time_of_call([steady](long) { return steady->calls() == 0 ? 0.9e6 : 1.2e6; });
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_TRUE(report.interleaved);
  EXPECT_TRUE(report.candidates[1].finalist);
  EXPECT_TRUE(report.candidates[2].finalist);
  EXPECT_FALSE(report.candidates[3].finalist);
  EXPECT_EQ(report.winner_report()->name, "steady");
  EXPECT_GE(report.candidates[2].stats.count, 3u);
}

TEST_F(TunableOpTest, CandidatesOverTenPercentApartAreStillFinalists) {
  // 12.5% apart after the profile (within screen 2's 1.15x, beyond the old 10% margin).
  ctx_->set_max_tuning_duration_ms(0);
  ctx_->set_max_tuning_iterations(20);
  ctx_->enable_numerical_check(false);
  CandidateSet set;
  set.add("Default", "fake", 400);
  auto* lucky = set.add("lucky", "fake", 0);
  auto* steady = set.add("steady", "fake", 90);
  lucky->set_time_of_call([steady](long) { return steady->calls() == 0 ? 80.0 : 120.0; });
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_TRUE(report.interleaved);
  EXPECT_EQ(report.winner_report()->name, "steady");
}

TEST_F(TunableOpTest, TuneReportForTheCliTable) {
  CandidateSet set;
  set.add("Default", "fake", 200);
  set.add("fast", "fake", 50);
  set.add("wrong", "fake", 10, Behaviour::kWrong);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  EXPECT_TRUE(report.persisted);
  EXPECT_FALSE(report.previous.has_value());
  EXPECT_EQ(report.winner_report()->name, "fast");
  EXPECT_EQ(report.default_report()->name, "Default");
  EXPECT_EQ(report.runner_up()->name, "Default");
  EXPECT_NEAR(report.speedup_over_default(), 4.0, 1e-6);
  EXPECT_GT(report.timer_overhead_ms, 0.0);
  for (const CandidateReport& c : report.candidates) {
    if (c.measured()) {
      EXPECT_GT(c.stats.count, 0u);
      EXPECT_LE(c.stats.min_ms, c.stats.mean_ms);
      EXPECT_GE(c.stats.max_ms, c.stats.mean_ms);
      EXPECT_GE(c.stats.stddev_ms, 0.0);
      EXPECT_GE(c.iterations, 1);
    }
  }
  const std::string table = format_report(report);
  EXPECT_NE(table.find("AddTunableOp_float(n_8_t_0)"), std::string::npos);
  EXPECT_NE(table.find("wrong-result"), std::string::npos);
  EXPECT_NE(table.find("winner fast"), std::string::npos);
  EXPECT_NE(table.find("runner-up Default"), std::string::npos);

  TuneReport again = op.tune(problem.params());
  ASSERT_TRUE(again.previous.has_value());
  EXPECT_EQ(again.previous->solution, "fast");
  EXPECT_FALSE(again.persisted);
  EXPECT_EQ(result_count(), 1u);
}

TEST_F(TunableOpTest, ConcurrentHitsAndMissesFromThreads) {
  testing::g_virtual_time = false;
  ctx_->hooks().set_clock(&now_ns);
  CandidateSet set;
  set.add("Default", "fake", 30);
  set.add("fast", "fake", 5);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  constexpr int kThreads = 4;
  constexpr int kKeys = 6;
  std::vector<std::vector<AddProblem>> problems(kThreads);
  for (auto& per_thread : problems) {
    for (int k = 0; k < kKeys; ++k) per_thread.emplace_back(32, k);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 3000; ++i) {
        AddProblem& p =
            problems[static_cast<std::size_t>(t)][static_cast<std::size_t>((i + t) % kKeys)];
        if (!op(p.params()).is_ok()) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(op.tunings(), static_cast<std::size_t>(kKeys));  // each key tuned exactly once
  EXPECT_EQ(result_count(), static_cast<std::size_t>(kKeys));
  EXPECT_EQ(result_lines_of(ctx_->filename()).size(), static_cast<std::size_t>(kKeys));
  for (auto& per_thread : problems) {
    for (auto& p : per_thread) EXPECT_TRUE(p.correct());
  }
}

TEST_F(TunableOpTest, HitPathAllocatesNothing) {
  CandidateSet set;
  set.add("Default", "fake", 0);
  set.add("fast", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  std::vector<AddProblem> problems;
  for (int k = 0; k < 40; ++k) problems.emplace_back(4, k);  // forces table growth
  for (auto& p : problems) ASSERT_TRUE(op(p.params()).is_ok());
  testing::g_allocations = 0;
  testing::g_count_allocations = true;
  Status s;
  for (int i = 0; i < 1000; ++i) s = op(problems[static_cast<std::size_t>(i % 40)].params());
  testing::g_count_allocations = false;
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(testing::g_allocations, 0);
}

TEST_F(TunableOpTest, RecordUntunedWritesEachMissOnceAndReenablingRecordsAgain) {
  {
    std::ofstream out(ctx_->filename());
    for (const auto& [k, v] : ctx_->get_validators()) out << "Validator," << k << "," << v << "\n";
    out << "AddTunableOp_float,n_8_t_5,fast,0.5\n";
  }
  ctx_->enable_tuning(false);
  ctx_->enable_record_untuned(true);
  ctx_->enable_blas_log(true);
  CandidateSet set;
  set.add("Default", "fake", 0);
  set.add("fast", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem a(8, 1), b(8, 2), hit(8, 5);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(op(a.params()).is_ok());
    ASSERT_TRUE(op(b.params()).is_ok());
    ASSERT_TRUE(op(hit.params()).is_ok());
  }
  EXPECT_TRUE(a.correct());
  // The results file is not read while recording (upstream V25): every problem is recorded.
  const auto lines = testing::lines_of(ctx_->untuned_filename());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "AddTunableOp_float,n_8_t_1,BLAS_PARAMS: - { function: add, N: 8 }");
  EXPECT_EQ(lines[1], "AddTunableOp_float,n_8_t_2,BLAS_PARAMS: - { function: add, N: 8 }");
  EXPECT_EQ(result_count(), 0u);

  ctx_->enable_record_untuned(false);
  ctx_->enable_record_untuned(true);  // clears the dedup set
  ASSERT_TRUE(op(a.params()).is_ok());
  EXPECT_EQ(testing::lines_of(ctx_->untuned_filename()).size(), 4u);
}

TEST_F(TunableOpTest, HitsRecordNothingWhenTheResultsFileWasLoaded) {
  {
    std::ofstream out(ctx_->filename());
    for (const auto& [k, v] : ctx_->get_validators()) out << "Validator," << k << "," << v << "\n";
    out << "AddTunableOp_float,n_8_t_5,fast,0.5\n";
  }
  ctx_->enable_tuning(false);
  CandidateSet set;
  set.add("Default", "fake", 0);
  auto* fast = set.add("fast", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem hit(8, 5), miss(8, 6);
  ASSERT_TRUE(op(hit.params()).is_ok());  // loads the file
  ctx_->enable_record_untuned(true);
  ASSERT_TRUE(op(hit.params()).is_ok());
  ASSERT_TRUE(op(miss.params()).is_ok());
  EXPECT_EQ(fast->calls(), 2);
  const auto lines = testing::lines_of(ctx_->untuned_filename());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "AddTunableOp_float,n_8_t_6");
}

TEST_F(TunableOpTest, WildcardFallbackWithTuningOff) {
  ASSERT_TRUE(ctx_->add_result({"AddTunableOp_float", "n_*_t_3", "fast", 0.1, ""}).value());
  ctx_->enable_tuning(false);
  CandidateSet set;
  auto* def = set.add("Default", "fake", 0);
  auto* fast = set.add("fast", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem matching(17, 3), other(17, 4);
  ASSERT_TRUE(op(matching.params()).is_ok());
  EXPECT_EQ(def->calls(), 1);  // fallback off: Default
  ctx_->enable_wildcard_fallback(true);
  ASSERT_TRUE(op(matching.params()).is_ok());
  ASSERT_TRUE(op(other.params()).is_ok());
  EXPECT_EQ(fast->calls(), 1);
  EXPECT_EQ(def->calls(), 2);
  EXPECT_EQ(result_count(), 1u);  // no concrete entry is added
}

TEST_F(TunableOpTest, ProcessContextWorksEndToEnd) {
  TuningContext& ctx = tuning_context();
  ASSERT_TRUE(ctx.reset().is_ok());
  ctx.set_filename(dir_.file("global0.csv"));
  ctx.set_rotating_buffer_size(0);
  ctx.set_max_tuning_duration_ms(1);
  ctx.set_max_tuning_iterations(5);
  CandidateSet set;
  set.add("Default", "fake", 0);
  TunableOp<AddParams> op(std::move(set.list));
  AddProblem problem(8);
  ASSERT_TRUE(op(problem.params()).is_ok());
  EXPECT_EQ(result_lines_of(dir_.file("global0.csv")).size(), 1u);
  ASSERT_TRUE(ctx.reset().is_ok());
}

TEST_F(TunableOpTest, ManySmallProblemsAreCorrectAtOneMsOneIteration) {
  ctx_->set_max_tuning_duration_ms(1);
  ctx_->set_max_tuning_iterations(1);
  CandidateSet set;
  set.add("Default", "fake", 3);
  set.add("fast", "fake", 1);
  set.add("wrong", "fake", 0.5, Behaviour::kWrong);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  std::vector<AddProblem> problems;
  for (std::int64_t n : {1, 2, 3, 5, 7, 13, 31, 64, 127, 1000}) problems.emplace_back(n);
  for (auto& p : problems) {
    ASSERT_TRUE(op(p.params()).is_ok());
    EXPECT_TRUE(p.correct()) << p.a.size();
  }
  EXPECT_EQ(result_count(), problems.size());
  for (const ResultLine& r : ctx_->get_results()) EXPECT_EQ(r.solution, "fast");
}

TEST_F(TunableOpTest, ProcessThatTunesAndExitsLeavesANonEmptyFile) {
  const std::string path = dir_.file("child0.csv");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    TuningContext ctx;
    ctx.set_filename(path);
    ctx.set_rotating_buffer_size(0);
    ctx.set_max_tuning_duration_ms(1);
    ctx.set_max_tuning_iterations(2);
    CandidateSet set;
    set.add("Default", "fake", 0);
    TunableOp<AddParams> op(std::move(set.list), ctx);
    AddProblem problem(8);
    ::_exit(op(problem.params()).is_ok() ? 0 : 1);  // no destructors, no exit-time write
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(result_lines_of(path).size(), 1u);
  EXPECT_TRUE(ctx_->read_file(path).is_ok());
}

TEST_F(TunableOpTest, TuningFreesItsOperandCopies) {
  ctx_->set_rotating_buffer_size(1);
  CandidateSet set;
  set.add("Default", "fake", 2);
  set.add("fast", "fake", 1);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(256);
  const int before = testing::AddWorkspace::live().load();
  TuneReport report = op.tune(problem.params());
  ASSERT_TRUE(report.status.is_ok());
  ASSERT_TRUE(report.tolerance.has_value());  // the numerical check ran
  EXPECT_EQ(testing::AddWorkspace::live().load(), before);
}

TEST_F(TunableOpTest, BlasLogSuffixIsWrittenAndIgnoredOnRead) {
  ctx_->enable_blas_log(true);
  CandidateSet set;
  set.add("Default", "fake", 2);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  ASSERT_TRUE(op(problem.params()).is_ok());
  const auto lines = result_lines_of(ctx_->filename());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "AddTunableOp_float,n_8_t_0,Default,0.002,BLAS_PARAMS: - { function: add, N: 8 }");

  TuningContext fresh;
  fresh.set_filename(ctx_->filename());
  ASSERT_TRUE(fresh.read_file().is_ok());
  auto r = fresh.results_manager().lookup("AddTunableOp_float", "n_8_t_0");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->solution, "Default");
  EXPECT_DOUBLE_EQ(r->time_ms, 0.002);
}

TEST_F(TunableOpTest, VerboseTraceWithCustomFileNames) {
  ctx_->set_filename(dir_.file("matmul_result.csv"));
  ASSERT_TRUE(ctx_->set_verbose_filename(dir_.file("verbose.log")).is_ok());
  ctx_->set_verbose(3);
  CandidateSet set;
  set.add("Default", "fake", 20);
  set.add("fast", "fake", 5);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(8);
  ASSERT_TRUE(op(problem.params()).is_ok());
  ctx_->enable_tuning(false);
  AddProblem other(8, 1);
  ASSERT_TRUE(op(other.params()).is_ok());
  ctx_->set_verbose(0);
  const std::string log = slurp(dir_.file("verbose.log"));
  EXPECT_NE(log.find("AddTunableOp_float(n_8_t_0) -> fast,0.005"), std::string::npos) << log;
  EXPECT_NE(log.find("top 1 fast"), std::string::npos);
  EXPECT_NE(log.find("AddTunableOp_float(n_8_t_1) no result, using Default"), std::string::npos);
  EXPECT_EQ(result_lines_of(dir_.file("matmul_result.csv")).size(), 1u);
}

TEST_F(TunableOpTest, DynamicDimsStoreAWildcardUsedByFallback) {
  CandidateSet set;
  set.add("Default", "fake", 20);
  auto* fast = set.add("fast", "fake", 5);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem tuned(37, 2);
  AddParams dynamic = tuned.params();
  dynamic.dynamic_n = true;
  ASSERT_TRUE(op(dynamic).is_ok());
  ASSERT_TRUE(ctx_->results_manager().lookup("AddTunableOp_float", "n_37_t_2").has_value());
  auto wild = ctx_->results_manager().lookup("AddTunableOp_float", "n_*_t_2");
  ASSERT_TRUE(wild.has_value());
  EXPECT_EQ(wild->solution, "fast");
  EXPECT_EQ(result_count(), 2u);
  ASSERT_TRUE(op(dynamic).is_ok());
  EXPECT_EQ(result_count(), 2u);  // a repeat adds nothing

  ctx_->enable_tuning(false);
  ctx_->enable_wildcard_fallback(true);
  AddProblem other_n(53, 2);
  const long before = fast->calls();
  ASSERT_TRUE(op(other_n.params()).is_ok());
  EXPECT_EQ(fast->calls(), before + 1);
  EXPECT_TRUE(other_n.correct());
  EXPECT_EQ(result_count(), 2u);
}

}  // namespace
}  // namespace tunekit
