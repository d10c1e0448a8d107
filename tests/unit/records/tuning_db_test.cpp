// Unit tests for the tuning database: results with provenance and candidates' times, queries,
// best-per-problem, merge, prune, refusing foreign files, the system and user layers, and
// AutoTVM / Kernel Tuner trials with a byte-identical AutoTVM round trip.
#include "tunekit/records/tuning_db.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "../test_files.hpp"
#include "tunekit/records/db_layers.hpp"
#include "tunekit/records/db_trials.hpp"

namespace tunekit {
namespace {

using testing::slurp;
using testing::TempDir;

const DbEnvironment kHere = {{"TUNEKIT_VERSION", "0.1.0"},
                             {"CPU_MODEL", "Test CPU"},
                             {"CPU_ISA", "avx2+fma"},
                             {"THREADS", "2"},
                             {"OPENBLAS_VERSION", "0.3.21"}};
const DbEnvironment kOtherLibrary = {{"TUNEKIT_VERSION", "0.1.0"},
                                     {"CPU_MODEL", "Test CPU"},
                                     {"CPU_ISA", "avx2+fma"},
                                     {"THREADS", "2"},
                                     {"OPENBLAS_VERSION", "0.3.26"}};

DbResult result(const std::string& params, const std::string& solution, double ms) {
  return DbResult{"GemmTunableOp_float_NN", params, solution, ms, std::to_string(ms), ""};
}

std::unique_ptr<TuningDb> open_rw(const std::string& path) {
  auto db = TuningDb::open(path, TuningDb::Access::kReadWrite);
  EXPECT_TRUE(db.has_value()) << db.status().to_string();
  return db ? std::move(*db) : nullptr;
}

TEST(TuningDb, StoresResultsWithProvenanceAndCandidateTimes) {
  TempDir dir;
  auto db = open_rw(dir.file("sub/dir/t.db"));  // the folder is created
  ASSERT_TRUE(db);
  const DbCandidateTime times[] = {{"Default", "measured", 2.0},
                                   {"blis[arch=haswell]", "measured", 1.0},
                                   {"eigen", "rejected-screen1", std::nan("")}};
  auto added = db->add_result(kHere, result("nn_8_8_8_ld_8_8_8", "blis[arch=haswell]", 1.0),
                              DbProvenance{"node7", "tuned", "2026-12-05T10:00:00Z"}, times);
  ASSERT_TRUE(added && *added) << added.status().to_string();
  // The identical row once; another time of the same problem is a second row.
  EXPECT_FALSE(*db->add_result(kHere, result("nn_8_8_8_ld_8_8_8", "blis[arch=haswell]", 1.0), {}));
  EXPECT_TRUE(*db->add_result(kHere, result("nn_8_8_8_ld_8_8_8", "Default", 0.5), {}));
  auto rows = db->results();
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].provenance.host, "node7");
  EXPECT_EQ((*rows)[0].provenance.created, "2026-12-05T10:00:00Z");
  EXPECT_EQ((*rows)[1].provenance.created.size(), 20u);  // stamped now
  auto stored = db->candidates((*rows)[0].id);
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->size(), 3u);
  EXPECT_EQ((*stored)[0].name, "Default");
  EXPECT_DOUBLE_EQ((*stored)[0].time_ms, 2.0);
  EXPECT_TRUE(std::isnan((*stored)[2].time_ms));
  auto envs = db->environments();
  ASSERT_TRUE(envs.has_value());
  ASSERT_EQ(envs->size(), 1u);
  EXPECT_EQ(envs->front().validators, kHere);
  // Dispatch takes the fastest valid row per problem.
  auto best = db->best_results();
  ASSERT_TRUE(best.has_value());
  ASSERT_EQ(best->size(), 1u);
  EXPECT_EQ(best->front().result.solution, "Default");
}

TEST(TuningDb, QueriesByProblemOpAndMachine) {
  TempDir dir;
  auto db = open_rw(dir.file("t.db"));
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->add_result(kHere, result("nn_1_1_1_ld_1_1_1", "Default", 1), {"alpha", "", ""}));
  ASSERT_TRUE(db->add_result(kHere, result("nn_2_2_2_ld_2_2_2", "Default", 1), {"beta", "", ""}));
  DbResultQuery q;
  q.params_signature = "nn_2_2_2_ld_2_2_2";
  EXPECT_EQ(db->results(q)->size(), 1u);
  q = {};
  q.machine = "alp";
  EXPECT_EQ(db->results(q)->size(), 1u);
  q.machine = "Test CPU";
  EXPECT_EQ(db->results(q)->size(), 2u);
  q = {};
  q.op_signature = "GemmTunableOp_double_NN";
  EXPECT_TRUE(db->results(q)->empty());
}

TEST(TuningDb, PruneKeepsTheBestValidEntryPerProblemAndWorkload) {
  TempDir dir;
  auto db = open_rw(dir.file("t.db"));
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->add_result(kHere, result("p", "slow", 3.0), {}));
  ASSERT_TRUE(db->add_result(kHere, result("p", "fast", 1.0), {}));
  ASSERT_TRUE(db->add_result(kHere, result("p", "zero", 0.0), {}));  // a 3-field line: invalid
  ASSERT_TRUE(db->add_result(kOtherLibrary, result("p", "other", 0.1), {}));
  DbTrial ok, better, failed;
  ok.line = "a";
  ok.cost_s = 2.0;
  better.line = "b";
  better.cost_s = 1.0;
  failed.line = "c";
  failed.error_no = 4;
  ASSERT_TRUE(db->add_trials(std::vector<DbTrial>{ok, better, failed}));
  auto removed = db->prune();
  ASSERT_TRUE(removed.has_value()) << removed.status().to_string();
  EXPECT_EQ(removed->results, 2u);
  EXPECT_EQ(removed->trials, 2u);
  auto rows = db->results();
  ASSERT_EQ(rows->size(), 2u);  // one per environment
  EXPECT_EQ((*rows)[0].result.solution, "fast");
  EXPECT_EQ((*rows)[1].result.solution, "other");
  ASSERT_EQ(db->trials()->size(), 1u);
  EXPECT_EQ(db->trials()->front().line, "b");
}

TEST(TuningDb, MergeBringsEveryRowOnce) {
  TempDir dir;
  auto a = open_rw(dir.file("a.db"));
  auto b = open_rw(dir.file("b.db"));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->add_result(kHere, result("p1", "Default", 1.0), {"rank0", "tuned", ""}));
  const DbCandidateTime times[] = {{"Default", "measured", 2.0}};
  ASSERT_TRUE(
      b->add_result(kOtherLibrary, result("p2", "blis", 1.0), {"rank1", "tuned", ""}, times));
  ASSERT_TRUE(b->add_result(kHere, result("p3", "eigen", 1.0), {"rank1", "tuned", ""}));
  DbTrial t;
  t.line = "x";
  ASSERT_TRUE(b->add_trials(std::vector<DbTrial>{t}));
  auto merged = a->merge_from(*b);
  ASSERT_TRUE(merged.has_value()) << merged.status().to_string();
  EXPECT_EQ(merged->results, 2u);
  EXPECT_EQ(merged->trials, 1u);
  auto again = a->merge_from(*b);
  EXPECT_EQ(again->results, 0u);
  EXPECT_EQ(again->trials, 0u);
  EXPECT_EQ(a->environments()->size(), 2u);
  DbResultQuery q;
  q.params_signature = "p2";
  auto rows = a->results(q);
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().provenance.host, "rank1");
  EXPECT_EQ(a->candidates(rows->front().id)->size(), 1u);
}

DbComparison comparison(const std::string& run, const std::string& params,
                        const std::string& contender, double ms) {
  DbComparison c;
  c.run = run;
  c.tool = "compare";
  c.op_signature = "GemmTunableOp_float_NN";
  c.params_signature = params;
  c.contender = contender;
  c.kind = contender == "tuned" ? "tuned" : "library";
  c.time_ms = ms;
  c.provenance = DbProvenance{"host", "compare", "2026-01-01T00:00:00Z"};
  return c;
}

TEST(TuningDb, MergeBringsEveryComparisonRowOnce) {
  TempDir dir;
  auto a = open_rw(dir.file("a.db"));
  auto b = open_rw(dir.file("b.db"));
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->add_comparisons(kHere, std::vector{comparison("r1", "p", "tuned", 1.0)}));
  const std::vector rows = {comparison("r1", "p", "tuned", 1.0),  // a holds it already
                            comparison("r2", "p", "tuned", 1.1),
                            comparison("r2", "p", "eigen", NAN)};  // failed: NULL time
  ASSERT_TRUE(b->add_comparisons(kOtherLibrary, rows));
  auto merged = a->merge_from(*b);
  ASSERT_TRUE(merged.has_value()) << merged.status().to_string();
  // r1 of b is another environment's row: not identical to a's.
  EXPECT_EQ(merged->comparisons, 3u);
  auto again = a->merge_from(*b);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->comparisons, 0u);
  auto stored = a->comparisons();
  ASSERT_EQ(stored->size(), 4u);
  EXPECT_TRUE(std::isnan(stored->back().time_ms));
  EXPECT_EQ(stored->back().provenance.created, "2026-01-01T00:00:00Z");
  EXPECT_NE(stored->front().environment, stored->back().environment);
  auto self = a->merge_from(*a);  // every row identical
  ASSERT_TRUE(self.has_value());
  EXPECT_EQ(self->comparisons, 0u);
}

TEST(TuningDb, PruneKeepsTheLatestComparisonRunPerProblem) {
  TempDir dir;
  auto db = open_rw(dir.file("t.db"));
  ASSERT_TRUE(db);
  auto none = db->prune();  // no comparisons table yet
  ASSERT_TRUE(none.has_value()) << none.status().to_string();
  EXPECT_EQ(none->comparisons, 0u);
  ASSERT_TRUE(db->add_comparisons(
      kHere, std::vector{comparison("r1", "p", "tuned", 1.0), comparison("r1", "p", "eigen", 2.0),
                         comparison("r1", "q", "tuned", 1.0)}));
  ASSERT_TRUE(db->add_comparisons(kHere, std::vector{comparison("r2", "p", "tuned", 1.5),
                                                     comparison("r2", "p", "eigen", NAN)}));
  ASSERT_TRUE(db->add_comparisons(kOtherLibrary, std::vector{comparison("r0", "p", "tuned", 3.0)}));
  auto removed = db->prune();
  ASSERT_TRUE(removed.has_value()) << removed.status().to_string();
  EXPECT_EQ(removed->comparisons, 2u);  // r1's two rows of p
  std::vector<std::string> kept;
  auto rows = db->comparisons();
  ASSERT_TRUE(rows.has_value()) << rows.status().to_string();
  for (const DbComparison& c : *rows) {
    kept.push_back(c.run + ":" + c.params_signature + ":" + c.contender);
  }
  // q's only run stays; p keeps r2 (failed contender included); the other environment its own.
  EXPECT_EQ(kept,
            (std::vector<std::string>{"r1:q:tuned", "r2:p:tuned", "r2:p:eigen", "r0:p:tuned"}));
}

TEST(TuningDb, RefusesFilesThatAreNotTunekitDatabases) {
  TempDir dir;
  auto text = TuningDb::open(dir.write("t.db", "Validator,TUNEKIT_VERSION,0.1.0\n"),
                             TuningDb::Access::kReadWrite);
  ASSERT_FALSE(text.has_value());
  EXPECT_NE(text.status().message().find("not a tunekit database"), std::string::npos)
      << text.status().message();
  auto dir_db = TuningDb::open(dir.file(""), TuningDb::Access::kReadWrite);
  ASSERT_FALSE(dir_db.has_value());
  EXPECT_NE(dir_db.status().message().find("not a regular file"), std::string::npos);
  auto missing = TuningDb::open(dir.file("none.db"), TuningDb::Access::kReadOnly);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(TuningDb, AReadOnlyDatabaseIsNeverWritten) {
  TempDir dir;
  const std::string path = dir.file("sys.db");
  ASSERT_TRUE(open_rw(path));
  auto ro = TuningDb::open(path, TuningDb::Access::kReadOnly);
  ASSERT_TRUE(ro.has_value()) << ro.status().to_string();
  auto added = (*ro)->add_result(kHere, result("p", "Default", 1.0), {});
  ASSERT_FALSE(added.has_value());
  EXPECT_NE(added.status().message().find("read-only"), std::string::npos);
}

TEST(DbLayers, TheUserDatabaseWinsAndOtherEnvironmentsAreNeverDispatched) {
  TempDir dir;
  const DbPaths paths{dir.file("user.db"), dir.file("system.db")};
  {
    auto system = open_rw(paths.system);
    ASSERT_TRUE(system->add_result(kHere, result("shared", "system_choice", 1.0), {}));
    ASSERT_TRUE(system->add_result(kHere, result("system_only", "Default", 1.0), {}));
    ASSERT_TRUE(system->add_result(kOtherLibrary, result("foreign", "Default", 1.0), {}));
  }
  DbLayers layers(paths);
  EXPECT_EQ(layers.dispatch_results(kHere).size(), 2u);  // no user database yet: nothing created
  EXPECT_FALSE(std::filesystem::exists(paths.user));
  auto user = layers.user_for_writing();
  ASSERT_TRUE(user.has_value() && *user);
  ASSERT_TRUE((*user)->add_result(kHere, result("shared", "user_choice", 2.0), {}));
  // The environment matches in any order of its entries.
  DbEnvironment shuffled(kHere.rbegin(), kHere.rend());
  std::vector<Status> problems;
  const auto rows = layers.dispatch_results(shuffled, &problems);
  EXPECT_TRUE(problems.empty());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].result.solution, "user_choice");
  EXPECT_FALSE(rows[0].from_system);
  EXPECT_EQ(rows[1].result.params_signature, "system_only");
  EXPECT_TRUE(rows[1].from_system);
  // The foreign entry stays queryable.
  DbResultQuery q;
  q.params_signature = "foreign";
  EXPECT_EQ((*TuningDb::open(paths.system, TuningDb::Access::kReadOnly))->results(q)->size(), 1u);
}

TEST(DbTrials, AnAutoTvmLogComesBackByteForByte) {
  TempDir dir;
  std::ifstream in(TUNEKIT_TEST_DATA_DIR "/autotvm/tophub_lines.log");
  std::string line, records;
  while (std::getline(in, line)) {
    if (line.rfind("{\"input\"", 0) == 0) records += line + "\n";  // the v0.2 lines
  }
  ASSERT_FALSE(records.empty());
  const std::string log = dir.write("in.log", records);
  auto db = open_rw(dir.file("t.db"));
  std::size_t skipped = 0;
  auto added = import_autotvm_log(*db, log, &skipped);
  ASSERT_TRUE(added.has_value()) << added.status().to_string();
  EXPECT_EQ(*added, 2u);
  EXPECT_EQ(skipped, 0u);
  EXPECT_EQ(*import_autotvm_log(*db, log), 0u);  // importing again adds nothing
  auto text = export_autotvm_log(*db);
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, records);
  const auto trials = *db->trials();
  EXPECT_EQ(trials[0].target, "cuda -model=titanx");
  EXPECT_EQ(trials[0].provenance.source, log);
}

TEST(DbTrials, AMalformedLogLineImportsNothing) {
  TempDir dir;
  auto db = open_rw(dir.file("t.db"));
  const std::string log = dir.write("bad.log", "{\"input\": 1}\n");
  auto added = import_autotvm_log(*db, log);
  ASSERT_FALSE(added.has_value());
  EXPECT_NE(added.status().message().find("bad.log:1:"), std::string::npos);
  EXPECT_TRUE(db->trials()->empty());
}

TEST(DbTrials, AKernelTunerCacheBecomesTrials) {
  TempDir dir;
  auto db = open_rw(dir.file("t.db"));
  auto added =
      import_kernel_tuner_cache(*db, TUNEKIT_TEST_DATA_DIR "/autotvm/convolution_subset.json.gz");
  ASSERT_TRUE(added.has_value()) << added.status().to_string();
  ASSERT_GT(*added, 0u);
  const auto trials = *db->trials("kernel_tuner");
  ASSERT_EQ(trials.size(), *added);
  std::size_t ok = 0;
  for (const DbTrial& t : trials) ok += t.error_no == 0 && t.cost_s > 0 ? 1 : 0;
  EXPECT_GT(ok, 0u);
  EXPECT_EQ(trials[0].target.rfind("kernel_tuner -device=", 0), 0u);
  EXPECT_FALSE(trials[0].space_hash.empty());
}

}  // namespace
}  // namespace tunekit
