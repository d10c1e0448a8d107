// Unit tests for TunableOp results and the tuning database: PyTorch's files imported and exported
// byte for byte, tuned results stored with their candidates' times, dispatch reading the user and
// system databases of its own environment only, and unsaved results reported.
#include "tunekit/tunable/results_db.hpp"

#include <gtest/gtest.h>

#include "fake_op.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/tunable_op.hpp"

namespace tunekit {
namespace {

using testing::slurp;
using testing::TempDir;

const std::string kData = TUNEKIT_TEST_DATA_DIR "/tunableop/";

std::unique_ptr<TuningDb> open_rw(const std::string& path) {
  auto db = TuningDb::open(path, TuningDb::Access::kReadWrite);
  EXPECT_TRUE(db.has_value()) << db.status().to_string();
  return db ? std::move(*db) : nullptr;
}

class ResultsDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::clear_tunekit_env();
    ::unsetenv("TUNEKIT_DB");  // set_database() below decides
  }
  void TearDown() override { testing::clear_tunekit_env(); }
  TempDir dir_;
};

TEST_F(ResultsDbTest, PyTorchFilesComeBackByteForByte) {
  for (const char* name : {"readme_example_results.csv", "rocm_mid2024_results.csv"}) {
    auto db = open_rw(dir_.file(std::string(name) + ".db"));
    auto added = import_results_file(*db, kData + name);
    ASSERT_TRUE(added.has_value()) << added.status().to_string();
    EXPECT_GT(*added, 0u);
    EXPECT_EQ(*import_results_file(*db, kData + name), 0u) << "a second import adds nothing";
    auto envs = db->environments();
    ASSERT_EQ(envs->size(), 1u);
    auto text = export_results_file(*db, envs->front().id);
    ASSERT_TRUE(text.has_value()) << text.status().to_string();
    EXPECT_EQ(*text, slurp(kData + name)) << name;
  }
}

TEST_F(ResultsDbTest, AnUntunedFileIsNotImported) {
  auto db = open_rw(dir_.file("t.db"));
  auto added = import_results_file(*db, dir_.write("u.csv", "GemmTunableOp_float_NN,nn_8_8_8\n"));
  EXPECT_FALSE(added.has_value());
  EXPECT_TRUE(db->results()->empty());
}

TEST_F(ResultsDbTest, TunedResultsLandInTheDatabaseAndAnotherProcessDispatchesThem) {
  const std::string path = dir_.file("user.db");
  {
    TuningContext ctx;
    ctx.set_filename("");  // the database only
    ctx.set_database(path);
    ctx.set_rotating_buffer_size(0);
    ctx.set_max_tuning_iterations(3);
    testing::g_virtual_time = true;  // exact call times: "fast" wins on a loaded machine too
    ctx.hooks().set_clock(&testing::virtual_now_ns);
    testing::CandidateSet set;
    set.add("Default", "fake", 300);
    set.add("fast", "fake", 60);
    TunableOp<testing::AddParams> op(std::move(set.list), ctx);
    testing::AddProblem problem(64);
    const TuneReport report = op.tune(problem.params());
    ASSERT_TRUE(report.winner.has_value());
    EXPECT_TRUE(report.persisted);
    EXPECT_TRUE(report.not_saved.is_ok()) << report.not_saved.to_string();
    testing::g_virtual_time = false;
  }
  auto db = open_rw(path);
  auto rows = db->results();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().result.solution, "fast");
  EXPECT_EQ(rows->front().provenance.source, "tuned");
  auto times = db->candidates(rows->front().id);
  ASSERT_EQ(times->size(), 2u);
  EXPECT_EQ((*times)[0].name, "Default");
  // A new process with tuning off finds the result in the database.
  TuningContext later;
  later.set_filename("");
  later.set_database(path);
  later.enable_tuning(false);
  later.ensure_results_loaded();
  auto hit = later.results_manager().lookup(rows->front().result.op_signature,
                                            rows->front().result.params_signature);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->solution, "fast");
}

TEST_F(ResultsDbTest, ResultsOfOtherEnvironmentsAreQueryableButNeverDispatched) {
  const std::string path = dir_.file("user.db");
  {
    auto db = open_rw(path);
    TuningContext probe;
    DbEnvironment other = probe.get_validators();
    other.back().second += "-other";  // another thread count
    ASSERT_TRUE(db->add_result(other, DbResult{"Op", "p", "foreign", 1, "1", ""}, {}));
    ASSERT_TRUE(
        db->add_result(probe.get_validators(), DbResult{"Op", "q", "mine", 1, "1", ""}, {}));
  }
  TuningContext ctx;
  ctx.set_filename("");
  ctx.set_database(path);
  ctx.ensure_results_loaded();
  EXPECT_FALSE(ctx.results_manager().lookup("Op", "p").has_value());
  EXPECT_TRUE(ctx.results_manager().lookup("Op", "q").has_value());
}

TEST_F(ResultsDbTest, TheResultsFileWinsOverTheUserDatabaseWhichWinsOverTheSystemOne) {
  TuningContext probe;
  const DbEnvironment here = probe.get_validators();
  const std::string user = dir_.file("user.db"), system = dir_.file("system.db");
  ASSERT_TRUE(open_rw(user)->add_result(here, DbResult{"Op", "p", "user", 1, "1", ""}, {}));
  auto sys = open_rw(system);
  ASSERT_TRUE(sys->add_result(here, DbResult{"Op", "p", "system", 1, "1", ""}, {}));
  ASSERT_TRUE(sys->add_result(here, DbResult{"Op", "s", "system", 1, "1", ""}, {}));
  ::setenv("TUNEKIT_SYSTEM_DB", system.c_str(), 1);
  TuningContext ctx;
  ctx.set_filename("");
  ctx.set_database(user);
  ctx.ensure_results_loaded();
  EXPECT_EQ(ctx.results_manager().lookup("Op", "p")->solution, "user");
  EXPECT_EQ(ctx.results_manager().lookup("Op", "s")->solution, "system");
}

TEST_F(ResultsDbTest, AResultTheDatabaseCannotTakeIsReportedNotSaved) {
  // The database's folder cannot be made: a regular file is in its place (root included).
  const std::string blocker = dir_.write("blocker", "x");
  TuningContext ctx;
  ctx.set_filename("");
  ctx.set_database(blocker + "/user.db");
  Status not_saved;
  auto added = ctx.add_result(ResultLine{"Op", "p", "Default", 1.0, ""}, {}, &not_saved);
  EXPECT_FALSE(added.has_value());
  EXPECT_FALSE(not_saved.is_ok());
  EXPECT_NE(not_saved.message().find("blocker/user.db"), std::string::npos) << not_saved.message();
  EXPECT_EQ(ctx.results_manager().unsaved().count, 1u);
  EXPECT_TRUE(ctx.results_manager().lookup("Op", "p").has_value());  // kept in memory
}

}  // namespace
}  // namespace tunekit
