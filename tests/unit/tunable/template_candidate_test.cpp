// Unit tests for template candidates inside find_fastest and TunableOp, with a fake add template
// whose configuration `speed` sets its call time: the search finds the fastest configuration
// within its share of the budget, the winner's name carries it into the results file, a new op
// rebuilds it from that name, bad names fall back to Default, and winners seed the next search.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "fake_op.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/records/record.hpp"
#include "tunekit/records/tuning_db.hpp"
#include "tunekit/tunable/template_search.hpp"
#include "tunekit/tunable/tunable_op.hpp"
#include "virtual_time_fixture.hpp"

namespace tunekit {
namespace {

using testing::AddParams;
using testing::AddProblem;
using testing::FakeCandidate;

// Time per call of configuration `speed`: fastest at 5 (10 us), 10 us more per step away.
double spin_of(int speed) { return 10.0 + 10.0 * std::abs(speed - 5); }

// "fake[speed=N]" for N in 1..8; `wrong` speeds compute a wrong sum.
class FakeTemplate final : public FakeCandidate, public SearchedTemplate<AddParams> {
 public:
  explicit FakeTemplate(std::set<int> wrong = {})
      : FakeCandidate("fake", "fake", spin_of(1)), wrong_(std::move(wrong)) {}

  const std::string& family() const override { return name(); }
  Expected<std::shared_ptr<const ConfigSpace>> space(const AddParams&) override {
    auto space = std::make_shared<ConfigSpace>();
    std::vector<nlohmann::json> speeds;
    for (int s = 1; s <= 8; ++s) speeds.emplace_back(s);
    EXPECT_TRUE(space->define_knob("speed", speeds));
    return std::shared_ptr<const ConfigSpace>(std::move(space));
  }
  Expected<std::unique_ptr<Candidate<AddParams>>> instantiate(const AddParams&,
                                                              const Config& config) override {
    const int speed = static_cast<int>(config.number("speed"));
    measured.push_back(speed);
    testing::g_virtual_ns.fetch_add(instantiate_ns);
    if (speed == lucky_once && !luck_used_) {  // fast in its first measurement only
      luck_used_ = true;
      return make(speed, 1.0);
    }
    auto made = make(speed);
    if (speed == slow_phase.speed && ++built_[speed] == slow_phase.instance) {
      const Phase phase = slow_phase;
      instances.back()->set_time_of_call(
          [phase](long call) { return call <= phase.calls ? phase.us : spin_of(phase.speed); });
    }
    return made;
  }
  Expected<std::unique_ptr<Candidate<AddParams>>> from_name(std::string_view name) override {
    if (name.rfind("fake[", 0) != 0) return Status(StatusCode::kNotFound, "not fake");
    const std::string digits(name.substr(11, name.size() - 12));  // fake[speed=N]
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
      return Status(StatusCode::kParseError, "'" + std::string(name) + "': speed is no number");
    }
    const int speed = std::stoi(digits);
    if (speed > 8) return Status(StatusCode::kUnsupported, "speed above 8");
    rebuilt.push_back(speed);
    return make(speed);
  }
  std::vector<Config> seeds(const AddParams&, const ConfigSpace& space, bool transfer) override {
    std::vector<Config> out;
    if (!transfer) return out;
    for (int speed : remembered) {
      out.push_back(space.config_at(static_cast<std::uint64_t>(speed - 1)));
    }
    return out;
  }
  void remember(const AddParams&, const Config& config, double) override {
    remembered.push_back(static_cast<int>(config.number("speed")));
  }
  void remember_solution(const AddParams& p, std::string_view solution) override {
    stored.push_back(std::to_string(p.tag) + ":" + std::string(solution));
    const std::string_view prefix = "fake[speed=";
    if (solution.size() == prefix.size() + 2 && solution.substr(0, prefix.size()) == prefix &&
        solution[prefix.size()] >= '1' && solution[prefix.size()] <= '8') {
      remembered.push_back(solution[prefix.size()] - '0');
    }
  }

  std::vector<int> measured, rebuilt, remembered;
  std::vector<std::string> stored;  // "tag:solution" of each remember_solution call
  std::vector<FakeCandidate*> instances;
  int lucky_once = 0;  // the speed whose first instance spins 1 us
  /// A slow phase of the machine: the `instance`-th instance of `speed` (1-based) spins `us`
  /// on its first `calls` calls.
  struct Phase {
    int speed = 0, instance = 0;
    long calls = 0;
    double us = 0;
  } slow_phase;
  std::int64_t instantiate_ns = 0;  // virtual time each instantiation takes (a build)

 private:
  std::unique_ptr<Candidate<AddParams>> make(int speed, double spin_us = 0) {
    auto c = std::make_unique<FakeCandidate>(
        "fake[speed=" + std::to_string(speed) + "]", "fake", spin_us > 0 ? spin_us : spin_of(speed),
        wrong_.count(speed) ? testing::Behaviour::kWrong : testing::Behaviour::kCorrect);
    instances.push_back(c.get());
    return c;
  }
  std::set<int> wrong_;
  bool luck_used_ = false;
  std::map<int, int> built_;  // instances made per speed
};

class TemplateCandidateTest : public testing::VirtualTimeTest {
 protected:
  // Default (200 us) and the fake template.
  CandidateList<AddParams> candidates(FakeTemplate*& tmpl, std::set<int> wrong = {}) {
    CandidateList<AddParams> list;
    list.push_back(std::make_unique<FakeCandidate>("Default", "default", 200.0));
    auto t = std::make_unique<FakeTemplate>(std::move(wrong));
    tmpl = t.get();
    list.push_back(std::move(t));
    return list;
  }

  // The context's settings with `trials` search trials per template.
  TuningSettings searched(std::size_t trials) {
    auto settings = ctx_->tuning_settings();
    EXPECT_TRUE(settings) << settings.status().to_string();
    TuningSettings out = settings ? *settings : TuningSettings{};
    out.max_search_trials = trials;
    return out;
  }
};

TEST_F(TemplateCandidateTest, FindFastestSearchesTheSpaceAndReportsTheConfiguration) {
  FakeTemplate* tmpl = nullptr;
  auto list = candidates(tmpl);
  AddProblem problem(64);
  const TuningSettings settings = searched(8);
  std::unique_ptr<Candidate<AddParams>> instance;
  const TuneReport report = find_fastest(problem.params(), list, settings, &instance);
  ASSERT_TRUE(report.status.is_ok()) << report.status.to_string();
  ASSERT_TRUE(report.winner);
  EXPECT_EQ(*report.winner, 1U);
  EXPECT_EQ(report.candidates[1].name, "fake[speed=5]");
  EXPECT_EQ(report.candidates[1].search_trials, 8U);  // the whole space within the trials
  ASSERT_TRUE(instance);
  EXPECT_EQ(instance->name(), "fake[speed=5]");
  EXPECT_EQ(tmpl->remembered, std::vector<int>{5});
  EXPECT_EQ(tmpl->calls(), 0);  // the template itself never ran: its configurations did
}

TEST_F(TemplateCandidateTest, TheSearchKeepsToItsTrialShare) {
  FakeTemplate* tmpl = nullptr;
  auto list = candidates(tmpl);
  AddProblem problem(64);
  const TuningSettings settings = searched(3);
  const TuneReport report = find_fastest(problem.params(), list, settings);
  EXPECT_EQ(report.candidates[1].search_trials, 3U);
  // Three configurations, then those three again as the finalists.
  ASSERT_EQ(tmpl->measured.size(), 3U + std::min<std::size_t>(3, kSearchFinalists));
  const std::set<int> searched(tmpl->measured.begin(), tmpl->measured.begin() + 3);
  const std::set<int> finalists(tmpl->measured.begin() + 3, tmpl->measured.end());
  EXPECT_EQ(searched.size(), 3U);
  EXPECT_EQ(finalists, searched);
}

// The seeds are measured while the search's time limit lasts (the first always): with 7 seeds
// that take 0.6 ms each to build and a 1 ms limit, two are measured and the strategy proposes
// nothing more.
TEST_F(TemplateCandidateTest, SeedsStopAtTheSearchTimeLimit) {
  FakeTemplate* tmpl = nullptr;
  auto list = candidates(tmpl);
  tmpl->remembered = {1, 2, 3, 4, 6, 7, 8};
  tmpl->instantiate_ns = 600'000;
  AddProblem problem(64);
  TuningSettings settings = searched(24);
  settings.max_search_duration_ms = 1;
  const TuneReport report = find_fastest(problem.params(), list, settings);
  EXPECT_EQ(report.candidates[1].search_trials, 2U);
  ASSERT_GE(tmpl->measured.size(), 2U);
  EXPECT_EQ(std::vector<int>(tmpl->measured.begin(), tmpl->measured.begin() + 2),
            (std::vector<int>{1, 2}));
}

// A configuration whose one timed call in the search was disturbed (it looked fastest) is
// measured again among the finalists and loses to the configuration that is really faster.
TEST_F(TemplateCandidateTest, TheFinalistsAreMeasuredAgainBeforeOneIsChosen) {
  FakeTemplate* tmpl = nullptr;
  auto list = candidates(tmpl);
  AddProblem problem(64);
  const TuningSettings settings = searched(8);
  tmpl->lucky_once = 2;  // speed 2 is fast on its first run only
  const TuneReport report = find_fastest(problem.params(), list, settings);
  ASSERT_TRUE(report.winner);
  EXPECT_NE(report.candidates[1].name, "fake[speed=2]");
}

// A slow phase of the machine over the start of the fastest configuration's second measurement
// (speed 5, 10 us a call, at 80 us for its check and its first three timed calls) would hand
// the choice to speed 4 or 6 (20 us) if the finalists were measured one after the other (mean
// 31 us over 10 calls). Interleaved in 5 rounds of 2 calls, the phase spoils two of its round
// means, and the median of the five still wins.
TEST_F(TemplateCandidateTest, ASlowPhaseDuringOneFinalistsMeasurementDoesNotChoose) {
  FakeTemplate* tmpl = nullptr;
  auto list = candidates(tmpl);
  AddProblem problem(64);
  TuningSettings settings = searched(8);
  settings.max_search_duration_ms = 8;  // 1 ms per configuration: 10 calls of the finalists
  tmpl->slow_phase = {5, 2, 4, 80.0};
  const TuneReport report = find_fastest(problem.params(), list, settings);
  ASSERT_TRUE(report.winner);
  EXPECT_EQ(report.candidates[1].name, "fake[speed=5]");
  EXPECT_EQ(std::count(tmpl->measured.begin(), tmpl->measured.end(), 5), 2);
}

TEST_F(TemplateCandidateTest, AWrongConfigurationFailsTheNumericalCheckInsideTheSearch) {
  FakeTemplate* tmpl = nullptr;
  auto list = candidates(tmpl, /*wrong=*/{5});
  AddProblem problem(64);
  const TuningSettings settings = searched(8);
  const TuneReport report = find_fastest(problem.params(), list, settings);
  ASSERT_TRUE(report.winner);
  EXPECT_EQ(*report.winner, 1U);
  EXPECT_EQ(report.candidates[1].outcome, CandidateOutcome::kMeasured);
  // The fastest configuration computes a wrong sum: the next fastest (4 or 6) wins.
  EXPECT_TRUE(report.candidates[1].name == "fake[speed=4]" ||
              report.candidates[1].name == "fake[speed=6]")
      << report.candidates[1].name;
}

TEST_F(TemplateCandidateTest, WithoutACorrectConfigurationTheTemplateIsSkippedWithTheReason) {
  FakeTemplate* tmpl = nullptr;
  auto list = candidates(tmpl, /*wrong=*/{1, 2, 3, 4, 5, 6, 7, 8});
  AddProblem problem(64);
  const TuningSettings settings = searched(8);
  const TuneReport report = find_fastest(problem.params(), list, settings);
  ASSERT_TRUE(report.winner);
  EXPECT_EQ(*report.winner, 0U);
  EXPECT_EQ(report.candidates[1].outcome, CandidateOutcome::kFailed);
  EXPECT_NE(report.candidates[1].reason.find("no configuration ran"), std::string::npos)
      << report.candidates[1].reason;
}

TEST_F(TemplateCandidateTest, TheWinnerIsStoredByItsConfigurationAndRebuiltOnLoad) {
  FakeTemplate* tmpl = nullptr;
  {
    TunableOp<AddParams> op(candidates(tmpl), *ctx_);
    AddProblem problem(64);
    ASSERT_TRUE(op(problem.params()));
    EXPECT_TRUE(problem.correct());
    EXPECT_EQ(op.cached_solution(problem.params()), "fake[speed=5]");
  }
  const auto lines = testing::result_lines_of(dir_.file("results0.csv"));
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_NE(lines[0].find(",fake[speed=5],"), std::string::npos) << lines[0];

  auto ctx = std::make_unique<TuningContext>();
  ctx->set_filename(dir_.file("results0.csv"));
  ctx->enable_tuning(false);
  TunableOp<AddParams> reloaded(candidates(tmpl), *ctx);
  AddProblem problem(64);
  ASSERT_TRUE(reloaded(problem.params()));
  EXPECT_TRUE(problem.correct());
  EXPECT_EQ(tmpl->rebuilt, std::vector<int>{5});
  ASSERT_EQ(tmpl->instances.size(), 1U);
  EXPECT_EQ(tmpl->instances[0]->calls(), 1);
  ASSERT_TRUE(reloaded(problem.params()));  // a hit: the same instance
  EXPECT_EQ(tmpl->instances[0]->resolved_calls(), 1);
}

TEST_F(TemplateCandidateTest, AMalformedOrUnrunnableConfigurationWarnsOnceAndRunsDefault) {
  FakeTemplate* first = nullptr;
  {
    TunableOp<AddParams> op(candidates(first), *ctx_);
    AddProblem problem(64);
    ASSERT_TRUE(op(problem.params()));
  }
  const std::string tuned = testing::slurp(dir_.file("results0.csv"));
  for (const char* solution : {"fake[speed=x]", "fake[speed=99]"}) {
    SCOPED_TRACE(solution);
    const std::string file = dir_.file(std::string("bad") + solution[11] + "0.csv");
    {
      std::string text = tuned;
      const std::string good = "fake[speed=5]";
      text.replace(text.find(good), good.size(), solution);
      std::ofstream(file) << text;
    }
    auto ctx = std::make_unique<TuningContext>();
    ctx->set_filename(file);
    ctx->enable_tuning(false);
    const std::string log_path = dir_.file("log.txt");
    ASSERT_TRUE(log::set_sink(log_path).is_ok());
    FakeTemplate* tmpl = nullptr;
    TunableOp<AddParams> op(candidates(tmpl), *ctx);
    AddProblem problem(64);
    ASSERT_TRUE(op(problem.params()));
    EXPECT_TRUE(problem.correct());
    EXPECT_EQ(op.cached_solution(problem.params()), "Default");
    (void)log::set_sink("err");
    const std::string text = testing::slurp(log_path);
    EXPECT_NE(text.find(std::string("cannot rebuild ") + solution), std::string::npos) << text;
  }
}

TEST_F(TemplateCandidateTest, WinnersOfEarlierProblemsAreMeasuredFirst) {
  FakeTemplate* tmpl = nullptr;
  TunableOp<AddParams> op(candidates(tmpl), *ctx_);
  AddProblem first(64, 1);
  ASSERT_TRUE(op(first.params()));
  ASSERT_EQ(tmpl->remembered, std::vector<int>{5});
  tmpl->measured.clear();
  AddProblem second(64, 2);
  ASSERT_TRUE(op(second.params()));
  ASSERT_FALSE(tmpl->measured.empty());
  EXPECT_EQ(tmpl->measured.front(), 5);
  // Transfer off: the search proposes what it would without any history.
  ::setenv("TUNEKIT_SEARCH_TRANSFER", "0", 1);
  tmpl->measured.clear();
  AddProblem third(64, 3);
  ASSERT_TRUE(op(third.params()));
  FakeTemplate* fresh = nullptr;
  TunableOp<AddParams> other(candidates(fresh), *ctx_);
  AddProblem fifth(64, 5);  // a problem of its own: the first op stored the third
  ASSERT_TRUE(other(fifth.params()));
  EXPECT_EQ(tmpl->measured, fresh->measured);
  ::setenv("TUNEKIT_SEARCH_TRANSFER", "x", 1);
  AddProblem fourth(64, 4);
  EXPECT_EQ(op(fourth.params()).code(), StatusCode::kInvalidArgument);
  ::setenv("TUNEKIT_SEARCH_TRANSFER", "1", 1);
  ::setenv("TUNEKIT_NATIVE_AMX", "maybe", 1);  // validated with the search's variables
  AddProblem sixth(64, 6);
  const Status amx = op(sixth.params());
  ::unsetenv("TUNEKIT_NATIVE_AMX");
  EXPECT_EQ(amx.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(amx.message().find("TUNEKIT_NATIVE_AMX"), std::string::npos) << amx.message();
}

// Transfer across processes: the template winners stored in the results file by an earlier
// process seed the search of a new problem; lines of other candidates, unparsable signatures and
// the process's own results are not handed over, and with transfer off nothing is.
TEST_F(TemplateCandidateTest, StoredWinnersOfEarlierProcessesAreMeasuredFirst) {
  {
    FakeTemplate* first = nullptr;
    TunableOp<AddParams> op(candidates(first), *ctx_);
    AddProblem problem(64, 1);
    ASSERT_TRUE(op(problem.params()));
  }
  std::string text = testing::slurp(dir_.file("results0.csv"));
  const std::string good = "fake[speed=5]";
  ASSERT_NE(text.find(good), std::string::npos) << text;
  text.replace(text.find(good), good.size(), "fake[speed=3]");  // not the fastest: no accident
  text += "AddTunableOp_float,n_64_t_7,Default,0.2\n";
  text += "AddTunableOp_float,n_64_oops,fake[speed=2],0.1\n";
  for (const char* transfer : {"1", "0"}) {
    SCOPED_TRACE(transfer);
    ::setenv("TUNEKIT_SEARCH_TRANSFER", transfer, 1);
    const std::string file = dir_.file(std::string("stored") + transfer + "0.csv");
    std::ofstream(file) << text;
    auto ctx = std::make_unique<TuningContext>();
    ctx->set_filename(file);
    ctx->set_rotating_buffer_size(0);
    ctx->set_max_tuning_duration_ms(2);
    ctx->set_max_tuning_iterations(10);
    ctx->hooks().set_clock(&testing::virtual_now_ns);
    FakeTemplate* fresh = nullptr;
    TunableOp<AddParams> op(candidates(fresh), *ctx);
    AddProblem second(64, 2);
    ASSERT_TRUE(op(second.params()));
    ASSERT_FALSE(fresh->measured.empty());
    if (std::string(transfer) == "1") {
      EXPECT_EQ(fresh->stored, std::vector<std::string>{"1:fake[speed=3]"});
      EXPECT_EQ(fresh->measured.front(), 3);
      // Its own winner is remembered by the search, not handed over again from the file.
      AddProblem third(64, 3);
      ASSERT_TRUE(op(third.params()));
      EXPECT_EQ(fresh->stored, std::vector<std::string>{"1:fake[speed=3]"});
    } else {
      EXPECT_TRUE(fresh->stored.empty());
    }
  }
}

TEST_F(TemplateCandidateTest, EverySearchedConfigurationIsATrialInTheUserDatabase) {
  ::unsetenv("TUNEKIT_DB");  // set_database() below decides
  ctx_->store().reload_environment();
  const std::string path = dir_.file("user.db");
  ctx_->set_database(path);
  FakeTemplate* tmpl = nullptr;
  TunableOp<AddParams> op(candidates(tmpl, /*wrong=*/{2}), *ctx_);
  AddProblem problem(64, 1);
  ASSERT_TRUE(op(problem.params()));
  auto db = TuningDb::open(path, TuningDb::Access::kReadOnly);
  ASSERT_TRUE(db) << db.status().to_string();
  auto trials = (*db)->trials();
  ASSERT_TRUE(trials) << trials.status().to_string();
  ASSERT_EQ(trials->size(), 8u);  // the whole space, each configuration once (not the finalists'
                                  // second measurement)
  std::set<std::int64_t> indices;
  std::size_t failed = 0;
  for (const DbTrial& t : *trials) {
    indices.insert(t.config_index);
    EXPECT_EQ(t.format, "autotvm");
    EXPECT_EQ(t.task, "fake");
    EXPECT_NE(t.workload.find("n_64_t_1"), std::string::npos) << t.workload;
    EXPECT_TRUE(t.environment.has_value());
    EXPECT_FALSE(t.space_hash.empty());
    EXPECT_TRUE(decode_record_line(t.line)) << t.line;  // an AutoTVM log line
    if (t.error_no == 0) continue;
    ++failed;
    EXPECT_EQ(t.error_no, static_cast<int>(MeasureErrorNo::kWrongAnswer));
    EXPECT_NE(t.line.find("\"error_msg\": "), std::string::npos) << t.line;
  }
  EXPECT_EQ(failed, 1u);  // speed 2
  EXPECT_EQ(indices.size(), 8u);
}

TEST_F(TemplateCandidateTest, WithoutAUserDatabaseNoTrialIsKept) {
  auto settings = ctx_->tuning_settings();  // TUNEKIT_DB=off (clear_tunekit_env)
  ASSERT_TRUE(settings);
  EXPECT_FALSE(settings->search_trials);
}

}  // namespace
}  // namespace tunekit
