// Unit tests for confirming winners in place (TUNEKIT_CONFIRM_CALLS): fake add candidates in
// virtual time whose run time changes after tuning.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "fake_op.hpp"
#include "tunekit/tunable/tunable_op.hpp"
#include "virtual_time_fixture.hpp"

namespace tunekit {
namespace {

using testing::AddParams;
using testing::AddProblem;
using testing::CandidateSet;
using testing::result_lines_of;

class ConfirmationTest : public testing::VirtualTimeTest {
 protected:
  // Calls the op `n` times on `problem`, checking every result.
  static void call(TunableOp<AddParams>& op, AddProblem& problem, int n) {
    for (int i = 0; i < n; ++i) {
      std::fill(problem.c.begin(), problem.c.end(), 0.0f);
      ASSERT_TRUE(op(problem.params()).is_ok());
      ASSERT_TRUE(problem.correct());
    }
  }
};

TEST_F(ConfirmationTest, AWinnerSlowerInPlaceLosesToDefaultAndTheFileKeepsIt) {
  ctx_->set_confirm_calls(8);
  CandidateSet set;
  auto* def = set.add("Default", "fake", 300);
  auto* fast = set.add("fast", "fake", 60);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);
  call(op, problem, 1);                                // tunes; "fast" wins at 60 us against 300
  fast->set_time_of_call([](long) { return 400.0; });  // in place it takes 400 us
  const long def_calls = def->calls(), fast_calls = fast->calls();
  call(op, problem, 2 + 8);  // a warm-up pair, then 4 counted pairs
  EXPECT_EQ(def->calls() - def_calls, 5);
  EXPECT_EQ(fast->calls() - fast_calls, 5);
  EXPECT_EQ(op.cached_solution(problem.params()), "Default");
  call(op, problem, 5);
  EXPECT_EQ(def->calls() - def_calls, 10);
  EXPECT_EQ(fast->calls() - fast_calls, 5);

  const auto verdicts = op.confirmations();
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].params_signature, "n_64_t_0");
  EXPECT_EQ(verdicts[0].solution, "fast");
  EXPECT_EQ(verdicts[0].calls, 4u);
  EXPECT_FALSE(verdicts[0].kept);
  EXPECT_NEAR(verdicts[0].winner_ms, 0.4, 1e-9);
  EXPECT_NEAR(verdicts[0].default_ms, 0.3, 1e-9);
  // The verdict holds for this process only: the file keeps the tuned winner.
  const auto lines = result_lines_of(ctx_->filename());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("AddTunableOp_float,n_64_t_0,fast,", 0), 0u);
}

TEST_F(ConfirmationTest, AWinnerFasterInPlaceKeepsTheProblemAndHitsAreFastAgain) {
  ctx_->set_confirm_calls(6);
  CandidateSet set;
  auto* def = set.add("Default", "fake", 300);
  auto* fast = set.add("fast", "fake", 60);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);
  call(op, problem, 1);
  const long def_calls = def->calls();
  call(op, problem, 2 + 6 + 10);
  EXPECT_EQ(def->calls() - def_calls, 4);
  EXPECT_EQ(fast->resolved_calls(), 4 + 10);  // after the verdict, calls are lock-free hits
  ASSERT_EQ(op.confirmations().size(), 1u);
  EXPECT_TRUE(op.confirmations()[0].kept);
  EXPECT_EQ(op.cached_solution(problem.params()), "fast");
}

TEST_F(ConfirmationTest, AStoredResultIsConfirmedAndDefaultWinnersAreNot) {
  {
    CandidateSet set;
    set.add("Default", "fake", 300);
    set.add("fast", "fake", 60);
    TunableOp<AddParams> tuner(std::move(set.list), *ctx_);
    AddProblem problem(64);
    call(tuner, problem, 1);
  }
  ctx_->set_confirm_calls(4);
  CandidateSet set;
  auto* def = set.add("Default", "fake", 50);
  auto* fast = set.add("fast", "fake", 70);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);
  call(op, problem, 1 + 2 + 4 + 3);  // the stored "fast" serves the first call, then 3 pairs
  EXPECT_EQ(op.tunings(), 0u);
  ASSERT_EQ(op.confirmations().size(), 1u);
  EXPECT_FALSE(op.confirmations()[0].kept);
  EXPECT_EQ(fast->calls(), 1 + 3);
  EXPECT_EQ(def->calls(), 3 + 3);

  AddProblem other(32);  // Default wins its tuning: nothing to confirm
  call(op, other, 5);
  EXPECT_EQ(op.confirmations().size(), 1u);
}

TEST_F(ConfirmationTest, TheWarmUpPairIsNotCounted) {
  ctx_->set_confirm_calls(2);
  CandidateSet set;
  set.add("Default", "fake", 300);
  auto* fast = set.add("fast", "fake", 60);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);
  call(op, problem, 1);
  // The winner's first call in place is slow (its kernel is created), then it is fast again.
  const long first = fast->calls() + 1;
  fast->set_time_of_call([first](long call) { return call == first ? 5000.0 : 60.0; });
  call(op, problem, 4);
  ASSERT_EQ(op.confirmations().size(), 1u);
  EXPECT_TRUE(op.confirmations()[0].kept);
  EXPECT_NEAR(op.confirmations()[0].winner_ms, 0.06, 1e-9);
}

TEST_F(ConfirmationTest, ADefaultFailingInPlaceKeepsTheWinnerAndTheCallSucceeds) {
  ctx_->set_confirm_calls(4);
  CandidateSet set;
  auto* def = set.add("Default", "fake", 300);
  set.add("fast", "fake", 60);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);
  call(op, problem, 1);
  def->set_fail_after(def->calls());
  call(op, problem, 6);
  ASSERT_EQ(op.confirmations().size(), 1u);
  EXPECT_TRUE(op.confirmations()[0].kept);
  EXPECT_EQ(op.cached_solution(problem.params()), "fast");
}

TEST_F(ConfirmationTest, TurningItOffEndsAConfirmationUnderWayKeepingTheWinner) {
  ctx_->set_confirm_calls(8);
  CandidateSet set;
  set.add("Default", "fake", 300);
  set.add("fast", "fake", 60);
  TunableOp<AddParams> op(std::move(set.list), *ctx_);
  AddProblem problem(64);
  call(op, problem, 1 + 3);
  EXPECT_TRUE(op.confirmations().empty());
  ctx_->set_confirm_calls(0);
  call(op, problem, 1);
  ASSERT_EQ(op.confirmations().size(), 1u);
  EXPECT_TRUE(op.confirmations()[0].kept);
  EXPECT_EQ(op.cached_solution(problem.params()), "fast");
}

TEST_F(ConfirmationTest, CallsAreEvenTheEnvironmentWinsAndMalformedIsAnError) {
  ctx_->set_confirm_calls(5);
  EXPECT_EQ(ctx_->confirm_calls(), 6);
  ctx_->set_confirm_calls(-3);
  EXPECT_EQ(ctx_->confirm_calls(), 0);
  ::setenv("TUNEKIT_CONFIRM_CALLS", "3", 1);
  ASSERT_TRUE(ctx_->reload_environment().is_ok());
  ctx_->set_confirm_calls(100);
  EXPECT_EQ(ctx_->confirm_calls(), 4);
  ::setenv("TUNEKIT_CONFIRM_CALLS", "many", 1);
  const Status s = ctx_->reload_environment();
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("TUNEKIT_CONFIRM_CALLS"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tunekit
