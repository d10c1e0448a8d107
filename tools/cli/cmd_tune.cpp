// `tunekit tune-file` (offline tuning of TunableOp untuned/results files, alone, over MPI ranks
// or local processes, optionally bucketed) and `tunekit gemm` (tune or look up one problem).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "progress.hpp"
#include "table.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/distributed/offline.hpp"
#include "tunekit/distributed/transport.hpp"
#include "tunekit/offline/buckets.hpp"
#include "tunekit/offline/local_jobs.hpp"
#include "tunekit/offline/problem_files.hpp"
#include "tunekit/offline/tune_problems.hpp"
#include "tuning_setup.hpp"

namespace tunekit::cli {
namespace {

using offline::ProblemOutcome;
using offline::ProblemRef;
using offline::WorkerReport;

struct TuneFileArgs {
  std::vector<std::string> files;
  TuneFlags flags;
  bool distributed = false;
  int jobs = 0;
  std::string buckets;
  std::string bucket_dim = "n";
};

/// The problem list of a tune-file run (built by the coordinating process only), parsed once.
struct Prepared {
  std::vector<ops::GemmParams> problems;
  std::vector<offline::SkippedProblem> skipped;
  int duplicates = 0;
  std::vector<offline::BucketEntry> bucket_entries;
};

/// The problems' text form, as the wire and the gathering name them.
std::vector<ProblemRef> refs_of(const std::vector<ops::GemmParams>& problems) {
  std::vector<ProblemRef> refs;
  refs.reserve(problems.size());
  for (const ops::GemmParams& p : problems) refs.push_back(offline::problem_ref(p));
  return refs;
}

Prepared prepare(const TuneFileArgs& args) {
  const ops::DType* override_ptr = nullptr;
  ops::DType dtype{};
  if (!args.flags.dtype.empty()) {
    auto d = offline::parse_dtype(args.flags.dtype);
    if (!d) throw CommandFailure{kExitFailure, d.status().message()};
    dtype = *d;
    override_ptr = &dtype;
  }
  auto files = offline::expand_file_patterns(args.files);
  if (!files) throw CommandFailure{kExitFailure, files.status().message()};
  offline::GemmProblemSet set;
  for (const auto& f : *files) {
    Status s = offline::read_gemm_problems(f, set, override_ptr);
    if (!s.is_ok()) throw CommandFailure{kExitFailure, s.message()};
  }
  if (set.problems.empty() && set.skipped.empty()) {
    throw CommandFailure{kExitFailure, "no GEMM problems in " + files->front()};
  }
  Prepared prep;
  prep.skipped = std::move(set.skipped);
  prep.duplicates = set.duplicates;
  std::vector<offline::GemmProblem> problems = std::move(set.problems);
  if (!args.buckets.empty()) {
    auto buckets = offline::parse_buckets(args.buckets);
    if (!buckets) throw CommandFailure{kExitFailure, buckets.status().message()};
    auto dim = offline::parse_bucket_dim(args.bucket_dim);
    if (!dim) throw CommandFailure{kExitFailure, dim.status().message()};
    offline::BucketPlan plan = offline::plan_buckets(problems, *dim, *buckets);
    problems = std::move(plan.representatives);
    prep.bucket_entries = std::move(plan.entries);
    for (auto& s : plan.skipped) prep.skipped.push_back(std::move(s));
  }
  for (const auto& p : problems) prep.problems.push_back(p.params);
  return prep;
}

Table make_table(bool with_rank) {
  std::vector<std::string> header = {"problem",    "winner",   "ms",        "GFLOP/s",
                                     "Default ms", "speed-up", "runner-up", "note"};
  std::vector<bool> right = {false, false, true, true, true, true, false, false};
  if (with_rank) {
    header.push_back("rank");
    right.push_back(true);
  }
  return Table(std::move(header), std::move(right));
}

double flops_of(const ProblemOutcome& o) {
  if (o.flops > 0) return o.flops;
  auto p = ops::GemmParams::from_signature(o.op_signature, o.params_signature);
  return p ? p->flops() : 0.0;
}

/// Problems tuned whose result could not be written to the results file.
std::size_t unsaved_count(const std::vector<ProblemOutcome>& outcomes) {
  return static_cast<std::size_t>(std::count_if(
      outcomes.begin(), outcomes.end(),
      [](const auto& o) { return o.kind == ProblemOutcome::Kind::kTuned && !o.saved; }));
}

/// Problems that could not be tuned.
std::size_t failed_count(const std::vector<ProblemOutcome>& outcomes) {
  return static_cast<std::size_t>(
      std::count_if(outcomes.begin(), outcomes.end(),
                    [](const auto& o) { return o.kind == ProblemOutcome::Kind::kFailed; }));
}

/// The last line of a run whose results did not all reach their file: how many, why, and that
/// the run failed (they are gone when the process ends).
std::string unsaved_message(std::size_t count, const std::string& reason) {
  return fmt::format(
      "{} tuned result(s) could NOT be saved ({}); they are lost: fix the cause and run again "
      "(the results that were saved are kept)",
      count, reason);
}

/// The reason given for the first result that could not be saved.
std::string first_unsaved_reason(const std::vector<ProblemOutcome>& outcomes) {
  for (const ProblemOutcome& o : outcomes) {
    if (o.kind != ProblemOutcome::Kind::kTuned || o.saved) continue;
    const std::size_t at = o.note.find(": ");
    return at == std::string::npos ? o.note : o.note.substr(at + 2);
  }
  return "see the table";
}

/// Prints the table and the footer line (counts, wall time, geometric-mean speed-up over Default).
void print_outcomes(const std::vector<ProblemOutcome>& outcomes, bool with_rank, double wall_s) {
  Table table = make_table(with_rank);
  std::vector<double> speedups;
  std::size_t tuned = 0, cached = 0, failed = 0;
  for (const ProblemOutcome& o : outcomes) {
    std::vector<std::string> row;
    const std::string problem = o.op_signature + "," + o.params_signature;
    if (o.kind == ProblemOutcome::Kind::kFailed) {
      ++failed;
      row = {problem, "-", "-", "-", "-", "-", "-", o.note};
    } else {
      (o.kind == ProblemOutcome::Kind::kTuned ? tuned : cached) += 1;
      const bool has_default = std::isfinite(o.default_ms) && o.default_ms > 0;
      const double speedup = has_default && o.time_ms > 0 ? o.default_ms / o.time_ms : NAN;
      if (std::isfinite(speedup)) speedups.push_back(speedup);
      row = {problem,
             o.winner,
             format_number(o.time_ms),
             format_number(gflops(flops_of(o), o.time_ms)),
             has_default ? format_number(o.default_ms) : "-",
             std::isfinite(speedup) ? fmt::format("{:.2f}x", speedup) : "-",
             o.runner_up.empty()
                 ? "-"
                 : fmt::format("{} ({})", o.runner_up, format_number(o.runner_up_ms)),
             o.saved ? o.note : std::string("tuned, NOT SAVED (the last line says why)")};
    }
    if (with_rank) row.push_back(std::to_string(o.rank));
    table.add_row(std::move(row));
  }
  std::fputs(table.render().c_str(), stdout);
  std::printf("\n%zu tuned, %zu already tuned", tuned, cached);
  if (failed > 0) std::printf(", %zu not tuned", failed);
  if (const std::size_t lost = unsaved_count(outcomes); lost > 0) {
    std::printf(", %zu tuned but NOT SAVED", lost);
  }
  std::printf(", wall time %.1f s", wall_s);
  if (!speedups.empty()) {
    std::printf("; geometric-mean speed-up over Default %.3fx (%zu problems)",
                geometric_mean(speedups), speedups.size());
  }
  std::printf("\n");
}

void print_skipped(const Prepared& prep) {
  if (!prep.skipped.empty()) {
    std::printf("\nskipped %zu problem(s):\n", prep.skipped.size());
    for (const auto& s : prep.skipped) std::printf("  %s\n", s.reason.message().c_str());
  }
  if (prep.duplicates > 0) std::printf("%d duplicate line(s) ignored\n", prep.duplicates);
}

/// The bucket entries whose representative has a result (looked up with `find`).
std::vector<ResultLine> bucket_lines(
    const Prepared& prep,
    const std::function<std::optional<ResultEntry>(const std::string&, const std::string&)>& find) {
  std::vector<ResultLine> lines;
  for (const offline::BucketEntry& e : prep.bucket_entries) {
    if (auto r = find(e.op_signature, e.representative_signature)) {
      lines.push_back(
          {e.op_signature, e.bucket_params_signature, r->solution, r->time_ms, r->extra});
    }
  }
  return lines;
}

void print_buckets(const std::vector<ResultLine>& lines, std::size_t planned,
                   const std::string& where) {
  if (planned == 0) return;
  std::printf("\n%zu of %zu bucket entries written to %s:\n", lines.size(), planned, where.c_str());
  for (const ResultLine& l : lines) {
    std::printf("  %s,%s -> %s\n", l.op_signature.c_str(), l.params_signature.c_str(),
                l.solution.c_str());
  }
}

template <class Problem>
std::vector<Problem> share_of(const std::vector<Problem>& problems, int ranks, int rank) {
  std::vector<Problem> share;
  for (std::size_t i : distributed::round_robin_share(problems.size(), ranks, rank)) {
    share.push_back(problems[i]);
  }
  return share;
}

/// One finished problem for the progress line: "winner native_f32[...] 0.123 ms, 1.52x over
/// Default", "already tuned: <winner>", or the failure.
std::string outcome_text(const ProblemOutcome& o) {
  using Kind = ProblemOutcome::Kind;
  if (o.kind == Kind::kFailed) return "failed: " + o.note;
  if (o.kind == Kind::kCached) return "already tuned: " + o.winner;
  std::string text = fmt::format("winner {} {} ms", o.winner, format_number(o.time_ms));
  if (o.default_ms > 0 && o.time_ms > 0) {
    text += fmt::format(", {:.2f}x over Default", o.default_ms / o.time_ms);
  }
  return o.note == "tuned" ? text : text + " (" + o.note + ")";
}

/// Tunes `problems` showing progress in `mode` (progress.hpp).
WorkerReport tune_with_progress(GemmTunableOp& op, const std::vector<ops::GemmParams>& problems,
                                int rank, ProgressMode mode) {
  Progress bar(problems.size(), mode);
  return offline::tune_problems(
      op, problems, rank,
      [&bar](std::size_t i, std::size_t, const std::string& label) { bar.begin(i, label); },
      [&bar](std::size_t i, std::size_t, const ProblemOutcome& o) {
        bar.finished(i, o.op_signature + "," + o.params_signature, outcome_text(o));
      });
}

/// One worker: set up (its own results file and thread count), tune its share, report. Setup
/// failures become the report's status.
WorkerReport run_worker(const TuneFileArgs& args, const std::vector<ops::GemmParams>& problems,
                        int rank, int ranks, int workers_on_host, bool show_progress) {
  WorkerReport report;
  report.rank = rank;
  report.host = hw::host_name();
  const std::string base = results_base_name(args.flags);
  try {
    auto op = setup_worker_tuning(args.flags, WorkerSetup{rank, workers_on_host, base,
                                                          distributed::full_results_name(base, 0)});
    check_results_writable(op->context().filename());
    report = tune_with_progress(*op, share_of(problems, ranks, rank), rank,
                                show_progress ? detect_progress_mode() : ProgressMode::kOff);
  } catch (const CommandFailure& f) {
    report.status = Status(StatusCode::kRuntimeError, f.message);
  } catch (const tunekit::Error& e) {
    report.status = e.status();
  } catch (const std::exception& e) {
    report.status = Status(StatusCode::kRuntimeError, e.what());
  }
  return report;
}

/// Rank 0 / the parent: stores the gathered results in this process's user tuning database (the
/// ranks of other machines wrote only theirs), under the reference environment, in one
/// transaction; rows a local job stored already are not repeated. A failure is reported and
/// ends the run non-zero: the gathered file holds the results.
void gather_into_database(const distributed::GatherSummary& summary) {
  if (summary.results.empty() || summary.validators.empty()) return;
  auto db = tuning_context().databases().user_for_writing();
  if (db && !*db) return;  // TUNEKIT_DB=off
  std::vector<DbResult> rows;
  for (const ResultLine& r : summary.results) {
    rows.push_back(DbResult{r.op_signature, r.params_signature, r.solution, r.time_ms,
                            format_time_ms(r.time_ms), r.extra});
  }
  auto added = db ? (*db)->add_results(summary.validators, rows,
                                       DbProvenance{hw::host_name(), "gathered", ""})
                  : Expected<std::size_t>(db.status());
  if (!added) {
    throw CommandFailure{kExitFailure,
                         "the gathered results could not be stored in the tuning "
                         "database: " +
                             added.status().message()};
  }
  std::printf("tuning database: %s (%zu new result(s))\n", (*db)->path().c_str(), *added);
}

/// Rank 0 / the parent: merge the reports, write the _full files, print everything.
void finish_gathered(const TuneFileArgs& args, const Prepared& prep,
                     std::vector<WorkerReport> reports, int ranks, double wall_s) {
  const std::string base = results_base_name(args.flags);
  distributed::GatherSummary summary =
      distributed::gather_reports(std::move(reports), refs_of(prep.problems), ranks);
  std::map<std::pair<std::string, std::string>, ResultEntry> merged;
  for (const ResultLine& r : summary.results) {
    merged.emplace(std::pair{r.op_signature, r.params_signature},
                   ResultEntry{r.solution, r.time_ms, r.extra});
  }
  const std::vector<ResultLine> buckets =
      bucket_lines(prep, [&merged](const std::string& op, const std::string& params) {
        auto it = merged.find({op, params});
        return it == merged.end() ? std::nullopt : std::optional<ResultEntry>(it->second);
      });
  for (const ResultLine& b : buckets) summary.results.push_back(b);
  print_outcomes(summary.outcomes, /*with_rank=*/true, wall_s);
  print_skipped(prep);
  std::vector<std::string> written;
  const Status s = distributed::write_full_files(base, ranks, summary, &written);
  print_buckets(buckets, prep.bucket_entries.size(), distributed::full_results_name(base, 0));
  if (!summary.messages.empty()) {
    std::printf("\n");
    for (const std::string& m : summary.messages) std::printf("%s\n", m.c_str());
  }
  std::printf("\nper-rank results: %s", distributed::worker_results_name(base, 0).c_str());
  if (ranks > 1) std::printf(" ... %s", distributed::worker_results_name(base, ranks - 1).c_str());
  std::printf("\n");
  if (!s.is_ok()) throw CommandFailure{kExitFailure, s.message()};
  std::printf("gathered results (%zu, from %zu rank(s) with matching validators): %s",
              summary.results.size(), summary.merged_ranks.size(), written.front().c_str());
  if (written.size() > 1) std::printf(" and copies ... %s", written.back().c_str());
  std::printf("\n");
  gather_into_database(summary);
  if (const std::size_t lost = unsaved_count(summary.outcomes); lost > 0) {
    throw CommandFailure{
        kExitFailure,
        fmt::format("{} tuned result(s) could NOT be saved to their rank's results file ({}); "
                    "the gathered file {} holds them",
                    lost, first_unsaved_reason(summary.outcomes), written.front())};
  }
  if (!summary.failed_ranks.empty()) {
    throw CommandFailure{kExitFailure,
                         fmt::format("{} of {} rank(s) failed (see above); the others' "
                                     "results were written",
                                     summary.failed_ranks.size(), ranks)};
  }
}

/// Bucket entries of a single-process run as added: the lines, and why those that did not
/// reach the results file or the tuning database were not saved.
struct BucketWrite {
  std::vector<ResultLine> lines;
  std::vector<Status> not_saved;
};

/// Appends the bucket entries of a single-process run.
BucketWrite write_bucket_entries(const Prepared& prep, TuningContext& ctx) {
  BucketWrite written;
  for (ResultLine& line : bucket_lines(prep, [&ctx](const std::string&o, const std::string&p) {
         return ctx.results_manager().lookup(o, p);
       })) {
    Status not_saved;
    auto added = ctx.add_result(line, {}, &not_saved);
    if (!added) log::warn(added.status().message());
    if (!not_saved.is_ok()) written.not_saved.push_back(not_saved);
    written.lines.push_back(std::move(line));
  }
  return written;
}

/// Ends a single-process run: results that could not be saved first (they are lost: each
/// problem's report says so, and each bucket entry's add), then problems that could not be tuned.
void finish_single(const WorkerReport& report, const BucketWrite& buckets) {
  std::fflush(stdout);
  if (const std::size_t lost = unsaved_count(report.outcomes) + buckets.not_saved.size();
      lost > 0) {
    const std::string reason = unsaved_count(report.outcomes) > 0
                                   ? first_unsaved_reason(report.outcomes)
                                   : buckets.not_saved.front().message();
    throw CommandFailure{kExitFailure, unsaved_message(lost, reason)};
  }
  const std::size_t failed = failed_count(report.outcomes);
  if (failed > 0 || report.outcomes.empty()) {
    throw CommandFailure{
        kExitFailure,
        report.outcomes.empty()
            ? std::string("no problem could be tuned (every line was skipped, see above)")
            : fmt::format("{} of {} problem(s) could not be tuned (see the table); the "
                          "others' results were written",
                          failed, report.outcomes.size())};
  }
}

/// Stops before any tuning when a TUNEKIT_* setting is malformed: one message, not one per problem.
void check_tuning_settings() {
  auto settings = tuning_context().tuning_settings();
  if (!settings) throw CommandFailure{kExitFailure, settings.status().message()};
}

void run_single(const TuneFileArgs& args) {
  const Prepared prep = prepare(args);
  auto op = setup_tuning(args.flags);
  check_tuning_settings();
  check_results_writable(tuning_context().filename());
  TuningContext& ctx = tuning_context();
  const std::int64_t start = now_ns();
  const WorkerReport report = tune_with_progress(*op, prep.problems, 0, detect_progress_mode());
  print_outcomes(report.outcomes, /*with_rank=*/false, elapsed_ms(start, now_ns()) / 1000.0);
  print_skipped(prep);
  const BucketWrite buckets = write_bucket_entries(prep, ctx);
  print_buckets(buckets.lines, prep.bucket_entries.size(), ctx.filename());
  std::printf("\nresults: %s\n", ctx.filename().c_str());
  if (const std::string db = ctx.database_paths().user; !db.empty()) {
    std::printf("tuning database: %s\n", db.c_str());
  }
  finish_single(report, buckets);
}

/// The files a run over `jobs` local processes writes: each job's own and the gathered copies.
/// They are checked before any job starts, so no tuning is lost to a file that cannot take it.
void check_job_files_writable(const std::string& base, int jobs) {
  for (int j = 0; j < jobs; ++j) {
    check_results_writable(distributed::worker_results_name(base, j));
    check_results_writable(distributed::full_results_name(base, j));
  }
}

void run_local_jobs(const TuneFileArgs& args) {
  const Prepared prep = prepare(args);
  check_tuning_settings();
  const int jobs = args.jobs;
  check_job_files_writable(results_base_name(args.flags), jobs);
  const std::int64_t start = now_ns();
  std::vector<WorkerReport> reports =
      distributed::decode_job_reports(offline::run_local_jobs(jobs, [&](int job) {
        return distributed::encode(
            run_worker(args, prep.problems, job, jobs, jobs, /*show_progress=*/false));
      }));
  const std::string base = results_base_name(args.flags);
  const std::vector<ProblemRef> refs = refs_of(prep.problems);
  for (WorkerReport& r : reports) {
    if (!r.status.is_ok() && r.outcomes.empty()) {
      offline::recover_results(r, distributed::worker_results_name(base, r.rank),
                               share_of(refs, jobs, r.rank));
    }
  }
  finish_gathered(args, prep, std::move(reports), jobs, elapsed_ms(start, now_ns()) / 1000.0);
}

void run_distributed(const TuneFileArgs& args) {
  auto transport = distributed::make_mpi_transport();
  if (!transport) throw CommandFailure{kExitFailure, transport.status().message()};
  distributed::Transport& t = **transport;
  const std::int64_t start = now_ns();
  Prepared prep;
  std::string wire;
  if (t.rank() == 0) {
    try {
      prep = prepare(args);
      wire = "OK\n" + distributed::encode_problems(refs_of(prep.problems));
    } catch (const CommandFailure& f) {
      wire = "ERROR\n" + f.message;
    }
  }
  if (Status s = t.broadcast(wire); !s.is_ok()) throw CommandFailure{kExitFailure, s.message()};
  if (wire.starts_with("ERROR\n")) {
    // Rank 0 reports the reason; the other ranks end quietly.
    if (t.rank() == 0) throw CommandFailure{kExitFailure, wire.substr(6)};
    return;
  }
  auto refs = distributed::decode_problems(std::string_view(wire).substr(3));
  if (!refs) throw CommandFailure{kExitFailure, refs.status().message()};
  auto problems = offline::parse_problems(*refs);
  if (!problems) throw CommandFailure{kExitFailure, problems.status().message()};
  const WorkerReport mine = run_worker(args, *problems, t.rank(), t.size(), t.local_size(),
                                       /*show_progress=*/t.rank() == 0);
  if (!mine.status.is_ok()) {
    std::fprintf(stderr, "tunekit: rank %d: %s\n", t.rank(), mine.status.message().c_str());
  }
  auto gathered = t.gather(distributed::encode(mine));
  if (!gathered) throw CommandFailure{kExitFailure, gathered.status().message()};
  // Only rank 0 decides the exit status: a rank ending non-zero makes mpirun abort the others,
  // possibly before rank 0 has written the gathered files.
  if (t.rank() != 0) return;
  std::vector<WorkerReport> reports;
  for (std::size_t i = 0; i < gathered->size(); ++i) {
    auto r = distributed::decode_report((*gathered)[i]);
    if (r) {
      reports.push_back(std::move(*r));
    } else {
      WorkerReport broken;
      broken.rank = static_cast<int>(i);
      broken.status = r.status();
      reports.push_back(std::move(broken));
    }
  }
  finish_gathered(args, prep, std::move(reports), t.size(), elapsed_ms(start, now_ns()) / 1000.0);
}

void run_tune_file(const TuneFileArgs& args) {
  if (args.distributed && args.jobs > 0) {
    throw CommandFailure{kExitFailure, "--distributed and --jobs cannot be combined"};
  }
  if (args.distributed) return run_distributed(args);
  if (args.jobs > 1) return run_local_jobs(args);
  run_single(args);
}

struct GemmArgs {
  long long m = 0, n = 0, k = 0, batch = 1;
  std::string trans = "nn";
  bool bias = false;
  TuneFlags flags;
};

void run_gemm(const GemmArgs& a) {
  if (a.trans.size() != 2)
    throw CommandFailure{kExitFailure, "--trans expects two letters, e.g. tn"};
  ops::GemmParams p;
  p.transa = static_cast<char>(std::tolower(static_cast<unsigned char>(a.trans[0])));
  p.transb = static_cast<char>(std::tolower(static_cast<unsigned char>(a.trans[1])));
  p.m = a.m;
  p.n = a.n;
  p.k = a.k;
  p.lda = p.transa == 'n' ? p.m : p.k;
  p.ldb = p.transb == 'n' ? p.k : p.n;
  p.ldc = p.m;
  if (!a.flags.dtype.empty()) {
    auto d = offline::parse_dtype(a.flags.dtype);
    if (!d) throw CommandFailure{kExitFailure, d.status().message()};
    p.dtype = *d;
  }
  if (a.batch > 1) {
    p.kind = ops::GemmKind::kStridedBatched;
    p.batch = a.batch;
    p.stride_a = p.lda * (p.transa == 'n' ? p.k : p.m);
    p.stride_b = p.ldb * (p.transb == 'n' ? p.n : p.k);
    p.stride_c = p.ldc * p.n;
  }
  if (a.bias) {
    if (a.batch > 1) throw CommandFailure{kExitFailure, "--bias and --batch cannot be combined"};
    p.kind = ops::GemmKind::kGemmAndBias;
  }
  // Validate shapes before anything is set up (pointers are filled by the workspace).
  auto problem = ops::GemmParams::from_signature(p.op_signature(), p.signature());
  if (!problem) throw CommandFailure{kExitFailure, problem.status().message()};
  auto op = setup_tuning(a.flags);
  check_results_writable(tuning_context().filename());
  const std::int64_t start = now_ns();
  const ProblemOutcome outcome = offline::tune_problem(*op, *problem, 0, nullptr);
  print_outcomes({outcome}, /*with_rank=*/false, elapsed_ms(start, now_ns()) / 1000.0);
  std::fflush(stdout);
  if (outcome.kind == ProblemOutcome::Kind::kFailed) {
    throw CommandFailure{kExitFailure, outcome.note};
  }
  if (!outcome.saved) {
    throw CommandFailure{kExitFailure, unsaved_message(1, first_unsaved_reason({outcome}))};
  }
}

}  // namespace
}  // namespace tunekit::cli

void register_tune_commands(CLI::App& app) {
  using namespace tunekit::cli;
  auto args = std::make_shared<TuneFileArgs>();
  CLI::App* tf = app.add_subcommand(
      "tune-file",
      "tune every GEMM problem of TunableOp untuned or results files and append the winners");
  tf->add_option("files", args->files,
                 "untuned or results CSV files (TunableOp's own too), or quoted patterns such as "
                 "'tunekit_untuned?.csv'")
      ->required();
  add_tune_flags(tf, args->flags);
  tf->add_option("--dtype", args->flags.dtype,
                 "tune every problem in this dtype instead "
                 "(float, double, bf16 = bf16 C, bf16_float = float C)");
  tf->add_flag("--distributed", args->distributed,
               "split the problems round-robin over MPI ranks (run under mpirun -n N); rank r "
               "writes <results>r.csv, rank 0 gathers them into <results>_full0.csv and one copy "
               "per rank");
  tf->add_option("--jobs", args->jobs,
                 "the same split over N local processes, without MPI (each gets cores/N threads "
                 "unless --threads)")
      ->check(CLI::Range(1, 1024));
  tf->add_option("--buckets", args->buckets,
                 "tune representative sizes of a dynamic dimension and write one bucket entry "
                 "per bucket: '1,16,128,512' (each size is its bucket's upper bound; the last "
                 "bucket is open), 'LO-HI:REP' items, or 'pow2:1-4096' (docs/offline.md)");
  tf->add_option("--bucket-dim", args->bucket_dim,
                 "the dynamic dimension for --buckets, BLAS frame: m, n (default: the token count "
                 "of torch.nn.Linear), k or batch")
      ->check(CLI::IsMember({"m", "n", "k", "batch", "M", "N", "K"}));
  tf->callback([args] { run_tune_file(*args); });

  auto g = std::make_shared<GemmArgs>();
  CLI::App* gc = app.add_subcommand("gemm", "tune (or look up) one GEMM problem");
  gc->add_option("--m", g->m, "rows of op(A) and C")
      ->required()
      ->check(tunekit::cli::positive_integer());
  gc->add_option("--n", g->n, "columns of op(B) and C")
      ->required()
      ->check(tunekit::cli::positive_integer());
  gc->add_option("--k", g->k, "inner dimension")
      ->required()
      ->check(tunekit::cli::positive_integer());
  gc->add_option("--trans", g->trans, "transposes of A and B, BLAS frame (nn, nt, tn, tt)")
      ->check(CLI::IsMember({"nn", "nt", "tn", "tt", "NN", "NT", "TN", "TT"}));
  gc->add_option("--batch", g->batch, "strided-batched count")
      ->check(tunekit::cli::positive_integer());
  gc->add_flag("--bias", g->bias, "GEMM with a bias vector (GemmAndBias)");
  gc->add_option("--dtype", g->flags.dtype, "float, double, bf16 (bf16 C) or bf16_float (float C)");
  add_tune_flags(gc, g->flags);
  gc->callback([g] { run_gemm(*g); });
}
