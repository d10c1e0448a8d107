// Unit tests for results files through TuningContext: byte-identical dumps, appends, validator
// rejection (whole file, untouched, never appended), malformed files, merges and the lock-free
// table.
#include "tunekit/tunable/results_manager.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "fake_op.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/result_table.hpp"

namespace tunekit {
namespace {

using testing::lines_of;
using testing::result_lines_of;
using testing::slurp;

class ResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::clear_tunekit_env();
    ctx_ = std::make_unique<TuningContext>();
    ctx_->set_filename(dir_.file("results0.csv"));
  }
  void TearDown() override {
    testing::clear_tunekit_env();
    (void)log::set_sink("err");
  }
  // A header this machine accepts, with one key's value replaced when asked.
  std::string header(const std::string& key = "", const std::string& value = "") const {
    std::string h;
    for (const auto& [k, v] : ctx_->get_validators()) {
      h += "Validator," + k + "," + (k == key ? value : v) + "\n";
    }
    return h;
  }
  std::string capture_log_path() {
    const std::string path = dir_.file("log.txt");
    EXPECT_TRUE(log::set_sink(path).is_ok());
    return path;
  }

  testing::TempDir dir_;
  std::unique_ptr<TuningContext> ctx_;
};

TEST_F(ResultsTest, WriteFileIsByteIdenticalForTheSameState) {
  ASSERT_TRUE(ctx_->add_result({"GemmTunableOp_float_NN", "nn_8_8_8_ld_8_8_8", "Default", 0.01, ""})
                  .value());
  ASSERT_TRUE(
      ctx_->add_result({"GemmTunableOp_float_NT", "nt_4_4_4_ld_4_4_4", "blis[arch=skx]", 1.262, ""})
          .value());
  ASSERT_TRUE(ctx_->add_result({"AddTunableOp_float", "n_3_t_0", "fast", 0.0240676, ""}).value());
  const std::string appended = slurp(ctx_->filename());

  ASSERT_TRUE(ctx_->write_file().is_ok());
  const std::string dump1 = slurp(ctx_->filename());
  ASSERT_TRUE(ctx_->write_file(dir_.file("other.csv")).is_ok());
  ctx_->set_filename(dir_.file("renamed.csv"));
  ASSERT_TRUE(ctx_->write_file().is_ok());
  EXPECT_EQ(dump1, slurp(dir_.file("other.csv")));
  EXPECT_EQ(dump1, slurp(dir_.file("renamed.csv")));
  EXPECT_EQ(result_lines_of(dir_.file("other.csv")).size(), 3u);
  // The appended file holds the same lines (in tuning order).
  EXPECT_EQ(lines_of(dir_.file("results0.csv")).size(), lines_of(dir_.file("other.csv")).size());
  (void)appended;

  // Reading data already loaded succeeds and changes nothing.
  ASSERT_TRUE(ctx_->read_file(dir_.file("other.csv")).is_ok());
  EXPECT_EQ(ctx_->get_results().size(), 3u);
  ASSERT_TRUE(ctx_->write_file(dir_.file("again.csv")).is_ok());
  EXPECT_EQ(dump1, slurp(dir_.file("again.csv")));

  // A fresh process state loaded from the file dumps the same bytes.
  TuningContext fresh;
  ASSERT_TRUE(fresh.read_file(dir_.file("other.csv")).is_ok());
  ASSERT_TRUE(fresh.write_file(dir_.file("fresh.csv")).is_ok());
  EXPECT_EQ(dump1, slurp(dir_.file("fresh.csv")));
}

TEST_F(ResultsTest, AppendsOneLinePerNewResultWithHeaderOnlyOnce) {
  const std::string path = ctx_->filename();
  ASSERT_TRUE(ctx_->add_result({"Op", "p1", "Default", 1.0, ""}).value());
  EXPECT_EQ(lines_of(path).size(), 5u);  // 4 validators + 1 result
  ASSERT_TRUE(ctx_->add_result({"Op", "p2", "Default", 2.0, ""}).value());
  EXPECT_FALSE(ctx_->add_result({"Op", "p2", "Other", 3.0, ""}).value());  // first wins
  const auto results = result_lines_of(path);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1], "Op,p2,Default,2");

  // A seeded file (current validators + 1 line) gains lines.
  const std::string seeded = dir_.file("seeded.csv");
  {
    std::ofstream out(seeded);
    out << header() << "Op,seed,Default,0.5\n";
  }
  TuningContext ctx;
  ctx.set_filename(seeded);
  ctx.ensure_results_loaded();
  ASSERT_EQ(ctx.get_results().size(), 1u);
  ASSERT_TRUE(ctx.add_result({"Op", "new", "Default", 0.25, ""}).value());
  EXPECT_EQ(result_lines_of(seeded),
            (std::vector<std::string>{"Op,seed,Default,0.5", "Op,new,Default,0.25"}));
}

TEST_F(ResultsTest, ValidatorMismatchRejectsWholeFileLeavesItUntouchedAndNeverAppends) {
  const std::string path = ctx_->filename();
  const std::string content = header("CPU_ISA", "avx2+other_machine") + "Op,p1,Default,1\n";
  {
    std::ofstream out(path);
    out << content;
  }
  const std::string log_path = capture_log_path();
  Status s = ctx_->read_file();
  ASSERT_EQ(s.code(), StatusCode::kValidatorMismatch);
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_NE(s.message().find("CPU_ISA"), std::string::npos);
  EXPECT_NE(s.message().find("avx2+other_machine"), std::string::npos);
  EXPECT_NE(s.message().find(ctx_->get_validators()[2].second), std::string::npos);
  EXPECT_TRUE(ctx_->get_results().empty());

  // New results stay in memory, the rejected file is untouched; warned once.
  EXPECT_TRUE(ctx_->add_result({"Op", "p2", "Default", 2.0, ""}).value());
  EXPECT_TRUE(ctx_->add_result({"Op", "p3", "Default", 3.0, ""}).value());
  EXPECT_EQ(slurp(path), content);
  EXPECT_EQ(ctx_->get_results().size(), 2u);
  const std::string log = slurp(log_path);
  EXPECT_NE(log.find("not appending to results file"), std::string::npos);
  EXPECT_EQ(log.find("not appending", log.find("not appending") + 1), std::string::npos);

  // It cannot be overwritten, but the results can be saved elsewhere.
  EXPECT_EQ(ctx_->write_file().code(), StatusCode::kValidatorMismatch);
  EXPECT_EQ(slurp(path), content);
  ASSERT_TRUE(ctx_->write_file(dir_.file("elsewhere.csv")).is_ok());
  EXPECT_EQ(result_lines_of(dir_.file("elsewhere.csv")).size(), 2u);
}

TEST_F(ResultsTest, AppendTargetIsValidatedEvenWithoutAnExplicitRead) {
  const std::string foreign = dir_.file("foreign.csv");
  const std::string content = header("TUNEKIT_VERSION", "9.9.9") + "Op,p1,Default,1\n";
  {
    std::ofstream out(foreign);
    out << content;
  }
  ctx_->set_filename(foreign);
  EXPECT_TRUE(ctx_->add_result({"Op", "p2", "Default", 2.0, ""}).value());
  EXPECT_EQ(slurp(foreign), content);
  EXPECT_TRUE(ctx_->results_manager().is_rejected(foreign));
}

TEST_F(ResultsTest, MissingMandatoryKeyAndUnmatchedKeys) {
  const std::string path = dir_.file("noversion.csv");
  {
    std::ofstream out(path);
    out << "Op,p1,Default,1\n";
  }
  Status s = ctx_->read_file(path);
  ASSERT_EQ(s.code(), StatusCode::kValidatorMismatch);
  EXPECT_NE(s.message().find("key=\"TUNEKIT_VERSION\" is not provided for validation"),
            std::string::npos);
  EXPECT_NE(s.message().find(path), std::string::npos);

  const std::string extra = dir_.file("extra.csv");
  {
    std::ofstream out(extra);
    out << header() << "Validator,ROCBLAS_VERSION,4.3.0\nOp,p1,Default,1\n";
  }
  s = ctx_->read_file(extra);
  ASSERT_EQ(s.code(), StatusCode::kValidatorMismatch);
  EXPECT_NE(s.message().find("ROCBLAS_VERSION"), std::string::npos);

  // A backend key registered here but missing in the file.
  ASSERT_TRUE(ctx_->register_validator("OPENBLAS_VERSION", [] { return "0.3.21"; }).is_ok());
  const std::string old = dir_.file("old.csv");
  {
    std::ofstream out(old);
    out << "Validator,TUNEKIT_VERSION," << ctx_->get_validators()[0].second << "\nOp,p,Default,1\n";
  }
  s = ctx_->read_file(old);
  ASSERT_EQ(s.code(), StatusCode::kValidatorMismatch);
  EXPECT_NE(s.message().find("Unmatched validator"), std::string::npos);
  EXPECT_TRUE(ctx_->get_results().empty());
}

TEST_F(ResultsTest, MalformedFileIsRejectedWholeWithFileAndLine) {
  const std::string path = ctx_->filename();
  const std::string content = header() + "Op,p1,Default,1\nOp,p2\nOp,p3,Default,3\n";
  {
    std::ofstream out(path);
    out << content;
  }
  Status s = ctx_->read_file();
  ASSERT_EQ(s.code(), StatusCode::kParseError);
  EXPECT_NE(s.message().find(path + ":6:"), std::string::npos);
  EXPECT_TRUE(ctx_->get_results().empty());
  EXPECT_TRUE(ctx_->add_result({"Op", "p9", "Default", 9.0, ""}).value());
  EXPECT_EQ(slurp(path), content);
}

TEST_F(ResultsTest, EmptyFileIsAcceptedAndGetsAHeaderOnFirstAppend) {
  const std::string path = ctx_->filename();
  {
    std::ofstream out(path);
    out << "\n";
  }
  ctx_->ensure_results_loaded();
  EXPECT_FALSE(ctx_->results_manager().is_rejected(path));
  ASSERT_TRUE(ctx_->add_result({"Op", "p1", "Default", 1.0, ""}).value());
  TuningContext fresh;
  ASSERT_TRUE(fresh.read_file(path).is_ok());
  EXPECT_EQ(fresh.get_results().size(), 1u);
}

TEST_F(ResultsTest, DisjointMergeExistingWins) {
  ASSERT_TRUE(ctx_->add_result({"Op", "p1", "Mine", 1.0, ""}).value());
  const std::string other = dir_.file("other.csv");
  {
    std::ofstream out(other);
    out << header() << "Op,p1,Theirs,0.5\nOp,p2,Theirs,0.5\nOp,p2,Dup,0.1\n";
  }
  ASSERT_TRUE(ctx_->read_file(other).is_ok());
  auto r = ctx_->results_manager().lookup("Op", "p1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->solution, "Mine");
  EXPECT_EQ(ctx_->results_manager().lookup("Op", "p2")->solution, "Theirs");
  EXPECT_EQ(ctx_->get_results().size(), 2u);
}

TEST_F(ResultsTest, CrlfFileWithBlasParamsLoads) {
  const std::string path = dir_.file("crlf.csv");
  std::string h = header();
  std::string crlf;
  for (char c : h) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  {
    std::ofstream out(path, std::ios::binary);
    out << crlf
        << "\r\nOp,p1,Default,0.5,BLAS_PARAMS: - { function: add, N: 8 }\r\nOp,p2,Default\r\n";
  }
  ASSERT_TRUE(ctx_->read_file(path).is_ok());
  EXPECT_EQ(ctx_->get_results().size(), 2u);
  EXPECT_EQ(ctx_->results_manager().lookup("Op", "p2")->time_ms, 0.0);
}

std::uint64_t int_hash(const int& k) { return static_cast<std::uint64_t>(k); }

TEST(ResultTable, InsertReplaceGrowAndConcurrentReaders) {
  ResultTable<int, &int_hash> table;
  EXPECT_EQ(table.find(1), nullptr);
  table.publish({1, 10, CachedKind::kResult, 0});
  ASSERT_NE(table.find(1), nullptr);
  EXPECT_EQ(table.find(1)->candidate, 10u);
  table.publish({1, 11, CachedKind::kFallback, 5});
  EXPECT_EQ(table.find(1)->candidate, 11u);
  EXPECT_EQ(table.size(), 1u);

  std::atomic<bool> stop{false};
  std::atomic<long> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        for (int k = 0; k < 2000; k += 7) {
          const auto* e = table.find(k);
          if (e != nullptr && e->key != k) bad.fetch_add(1);
          if (e != nullptr && k > 1 && e->candidate != static_cast<std::uint32_t>(k * 2))
            bad.fetch_add(1);
        }
      }
    });
  }
  for (int k = 2; k < 2000; ++k)
    table.publish({k, static_cast<std::uint32_t>(k * 2), CachedKind::kResult, 0});
  stop.store(true);
  for (auto& t : readers) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(table.size(), 1999u);
  EXPECT_GE(table.capacity(), 2u * table.size());
  for (int k = 2; k < 2000; ++k)
    ASSERT_EQ(table.find(k)->candidate, static_cast<std::uint32_t>(k * 2));
}

}  // namespace
}  // namespace tunekit
