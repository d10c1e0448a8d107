// Unit tests of the distributed layer: report wire form, file patterns, round-robin shares,
// _full file names, gathering (validator disagreement, failed ranks) and local jobs that crash.
#include "tunekit/distributed/offline.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "../test_files.hpp"
#include "tunekit/offline/local_jobs.hpp"

namespace tunekit::distributed {
namespace {

using testing::slurp;
using testing::TempDir;

WorkerReport sample_report(int rank, const std::string& threads) {
  WorkerReport r;
  r.rank = rank;
  r.host = "node" + std::to_string(rank);
  r.threads = 1;
  r.validators = {{"TUNEKIT_VERSION", "0.1.0"}, {"THREADS", threads}};
  return r;
}

ProblemOutcome tuned(const std::string& params, int rank, const std::string& winner) {
  ProblemOutcome o;
  o.op_signature = "GemmTunableOp_float_NN";
  o.params_signature = params;
  o.kind = ProblemOutcome::Kind::kTuned;
  o.winner = winner;
  o.time_ms = 0.5;
  o.rank = rank;
  o.note = "tuned";
  return o;
}

TEST(WireForm, ReportsRoundTripAnyBytes) {
  WorkerReport r = sample_report(3, "1");
  r.status = Status(StatusCode::kRuntimeError, "line one\nline\ttwo \\ three");
  r.results.push_back({"GemmTunableOp_float_NN", "nn_8_8_8_ld_8_8_8", "eigen", 0.0240676,
                       "BLAS_PARAMS: - { function: matmul, M: 8 }"});
  r.outcomes.push_back(tuned("nn_8_8_8_ld_8_8_8", 3, "eigen"));
  r.outcomes.back().runner_up = "Default";
  r.outcomes.back().runner_up_ms = 0.75;
  auto back = decode_report(encode(r));
  ASSERT_TRUE(back.has_value()) << back.status().to_string();
  EXPECT_EQ(back->rank, 3);
  EXPECT_EQ(back->host, "node3");
  EXPECT_EQ(back->status.code(), StatusCode::kRuntimeError);
  EXPECT_EQ(back->status.message(), r.status.message());
  EXPECT_EQ(back->validators, r.validators);
  ASSERT_EQ(back->results.size(), 1u);
  EXPECT_EQ(back->results[0], r.results[0]);
  ASSERT_EQ(back->outcomes.size(), 1u);
  EXPECT_EQ(back->outcomes[0].runner_up_ms, 0.75);
  EXPECT_TRUE(std::isnan(back->outcomes[0].default_ms));

  const std::string text = encode(r);
  EXPECT_FALSE(decode_report(text.substr(0, text.size() / 2)).has_value());  // cut short
  EXPECT_FALSE(decode_report("garbage\n").has_value());

  const std::vector<ProblemRef> problems = {{"GemmTunableOp_float_TN", "tn_1_2_3"},
                                            {"GemmTunableOp_float_NN", "nn_4_5_6_ld_4_6_4"}};
  EXPECT_EQ(decode_problems(encode_problems(problems)).value(), problems);
  EXPECT_FALSE(decode_problems("no comma\n").has_value());
}

TEST(Shares, RoundRobinAndFileNames) {
  EXPECT_EQ(round_robin_share(7, 3, 0), (std::vector<std::size_t>{0, 3, 6}));
  EXPECT_EQ(round_robin_share(7, 3, 2), (std::vector<std::size_t>{2, 5}));
  EXPECT_TRUE(round_robin_share(2, 3, 2).empty());
  EXPECT_EQ(worker_results_name("tunekit_results.csv", 1), "tunekit_results1.csv");
  EXPECT_EQ(full_results_name("tunekit_results.csv", 0), "tunekit_results_full0.csv");
  EXPECT_EQ(full_results_name("tunekit_results.csv", 10), "tunekit_results_full10.csv");
  EXPECT_EQ(full_results_name("out.v0/res_%d.csv", 2), "out.v0/res__full2.csv");
  EXPECT_EQ(full_results_name("out.d/results", 1), "out.d/results_full1");
}

TEST(Gather, ValidatorsMustAgreeAndFailedRanksAreReported) {
  const std::vector<ProblemRef> problems = {
      {"GemmTunableOp_float_NN", "p0"}, {"GemmTunableOp_float_NN", "p1"},
      {"GemmTunableOp_float_NN", "p2"}, {"GemmTunableOp_float_NN", "p3"},
      {"GemmTunableOp_float_NN", "p4"}, {"GemmTunableOp_float_NN", "p5"}};
  // Rank 0: ok. Rank 1: failed before tuning. Rank 2: another THREADS value.
  WorkerReport r0 = sample_report(0, "1");
  for (const char* p : {"p0", "p3"}) {
    r0.outcomes.push_back(tuned(p, 0, "eigen"));
    r0.results.push_back({"GemmTunableOp_float_NN", p, "eigen", 0.5, ""});
  }
  WorkerReport r1;
  r1.rank = 1;
  r1.status = Status(StatusCode::kRuntimeError, "TUNEKIT_MAX_TUNING_ITERATIONS: bad");
  WorkerReport r2 = sample_report(2, "2");
  for (const char* p : {"p2", "p5"}) {
    r2.outcomes.push_back(tuned(p, 2, "libxsmm"));
    r2.results.push_back({"GemmTunableOp_float_NN", p, "libxsmm", 0.5, ""});
  }
  const GatherSummary s = gather_reports({r2, r1, r0}, problems, 3);
  EXPECT_EQ(s.reference_rank, 0);
  EXPECT_EQ(s.failed_ranks, (std::vector<int>{1}));
  EXPECT_EQ(s.mismatched_ranks, (std::vector<int>{2}));
  EXPECT_EQ(s.merged_ranks, (std::vector<int>{0}));
  ASSERT_EQ(s.results.size(), 2u);
  ASSERT_EQ(s.outcomes.size(), 6u);
  EXPECT_EQ(s.outcomes[1].note, "not tuned: rank 1 failed");
  EXPECT_EQ(s.outcomes[4].rank, 1);
  EXPECT_NE(s.outcomes[2].note.find("kept apart"), std::string::npos);
  ASSERT_EQ(s.messages.size(), 2u);
  EXPECT_NE(s.messages[0].find("rank 1: failed: TUNEKIT_MAX_TUNING_ITERATIONS"), std::string::npos);
  EXPECT_NE(s.messages[1].find("THREADS is '2', rank 0 has '1'"), std::string::npos)
      << s.messages[1];

  // A rank that sent nothing at all.
  const GatherSummary lost = gather_reports({r0}, problems, 2);
  EXPECT_EQ(lost.failed_ranks, (std::vector<int>{1}));
  EXPECT_EQ(lost.outcomes[1].note, "not tuned: rank 1 reported nothing for it");
}

TEST(Gather, FullFilesAreIdenticalKeepExistingResultsAndRefuseAForeignOne) {
  TempDir dir;
  const std::string base = dir.file("tunekit_results.csv");
  WorkerReport r0 = sample_report(0, "1");
  r0.results.push_back({"GemmTunableOp_float_NN", "p1", "eigen", 0.5, ""});
  WorkerReport r1 = sample_report(1, "1");
  r1.results.push_back({"GemmTunableOp_float_NN", "p0", "Default", 0.25, ""});
  // An existing gathered file with the same environment: its results are kept (first wins).
  dir.write("tunekit_results_full0.csv",
            "Validator,THREADS,1\nValidator,TUNEKIT_VERSION,0.1.0\n"
            "GemmTunableOp_float_NN,p1,libxsmm,0.125\nGemmTunableOp_float_NN,old,Default,1\n");
  const GatherSummary s = gather_reports({r0, r1}, {}, 2);
  std::vector<std::string> written;
  ASSERT_TRUE(write_full_files(base, 3, s, &written).is_ok());
  ASSERT_EQ(written.size(), 3u);
  const std::string full0 = slurp(dir.file("tunekit_results_full0.csv"));
  EXPECT_EQ(full0,
            "Validator,TUNEKIT_VERSION,0.1.0\nValidator,THREADS,1\n"
            "GemmTunableOp_float_NN,old,Default,1\nGemmTunableOp_float_NN,p1,libxsmm,0.125\n"
            "GemmTunableOp_float_NN,p0,Default,0.25\n");
  EXPECT_EQ(slurp(dir.file("tunekit_results_full1.csv")), full0);
  EXPECT_EQ(slurp(dir.file("tunekit_results_full2.csv")), full0);

  const std::string foreign = "Validator,PT_VERSION,2.9.1\nGemmTunableOp_float_NN,x,Default,1\n";
  dir.write("tunekit_results_full0.csv", foreign);
  Status refused = write_full_files(base, 1, s);
  EXPECT_EQ(refused.code(), StatusCode::kValidatorMismatch);
  EXPECT_NE(refused.message().find("tunekit_results_full0.csv"), std::string::npos);
  EXPECT_EQ(slurp(dir.file("tunekit_results_full0.csv")), foreign);
}

TEST(LocalJobs, ReportsComeBackInOrderAndADeadJobIsNamedAndRecovered) {
  TempDir dir;
  const std::vector<WorkerReport> reports =
      decode_job_reports(offline::run_local_jobs(3, [&](int job) {
        if (job == 1) {
          // Completes one result in its file, then dies mid-tuning.
          std::ofstream(dir.file("res1.csv"))
              << "Validator,TUNEKIT_VERSION,0.1.0\nValidator,THREADS,1\n"
                 "GemmTunableOp_float_NN,p1,eigen,0.5\nGemmTunableOp_float_NN,p4,ei";
          std::raise(SIGKILL);
        }
        WorkerReport r = sample_report(job, "1");
        r.outcomes.push_back(tuned("p" + std::to_string(job), job, "Default"));
        return encode(r);
      }));
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_TRUE(reports[0].status.is_ok());
  EXPECT_EQ(reports[2].outcomes.at(0).params_signature, "p2");
  WorkerReport dead = reports[1];
  EXPECT_EQ(dead.rank, 1);
  EXPECT_EQ(dead.status.code(), StatusCode::kRuntimeError);
  EXPECT_NE(dead.status.message().find("killed by signal 9"), std::string::npos)
      << dead.status.message();

  const std::vector<ProblemRef> share = {{"GemmTunableOp_float_NN", "p1"},
                                         {"GemmTunableOp_float_NN", "p4"}};
  EXPECT_EQ(offline::recover_results(dead, dir.file("res1.csv"), share), 1u);
  ASSERT_EQ(dead.outcomes.size(), 1u);
  EXPECT_NE(dead.outcomes[0].note.find("recovered"), std::string::npos);
  EXPECT_EQ(dead.validators.size(), 2u);
  const GatherSummary s = gather_reports({reports[0], dead, reports[2]},
                                         {{"GemmTunableOp_float_NN", "p0"},
                                          {"GemmTunableOp_float_NN", "p1"},
                                          {"GemmTunableOp_float_NN", "p2"},
                                          {"GemmTunableOp_float_NN", "p3"},
                                          {"GemmTunableOp_float_NN", "p4"}},
                                         3);
  EXPECT_EQ(s.failed_ranks, (std::vector<int>{1}));
  ASSERT_EQ(s.results.size(), 1u);  // the dead job's complete result is merged
  EXPECT_EQ(s.results[0].params_signature, "p1");
  EXPECT_EQ(s.outcomes[4].note, "not tuned: rank 1 failed");
}

}  // namespace
}  // namespace tunekit::distributed
