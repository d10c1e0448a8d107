// `tunekit tune-file` (offline tuning of TunableOp untuned/results files) and `tunekit gemm`
// (tune or look up one problem); both print winner, time, GFLOP/s, Default and the runner-up.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "commands.hpp"
#include "table.hpp"
#include "tuning_setup.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/ops/gemm_problems.hpp"

namespace tunekit::cli {
namespace {

struct RowData {
  std::string op;
  std::string params;
  std::string note;  // "cached", "tuned", or the failure
  const TuneReport* report = nullptr;
  std::optional<ResultEntry> stored;
  double flops = 0;
};

Table make_table() {
  return Table({"problem", "winner", "ms", "GFLOP/s", "Default ms", "speed-up", "runner-up", "note"},
               {false, false, true, true, true, true, false, false});
}

void add_row(Table& table, const RowData& r, std::vector<double>& speedups) {
  const std::string problem = r.op + "," + r.params;
  if (r.report != nullptr && r.report->winner) {
    const TuneReport& rep = *r.report;
    const CandidateReport* w = rep.winner_report();
    const CandidateReport* d = rep.default_report();
    const CandidateReport* ru = rep.runner_up();
    const double speedup = rep.speedup_over_default();
    if (std::isfinite(speedup) && speedup > 0) speedups.push_back(speedup);
    table.add_row({problem, w->name, format_number(rep.winner_time_ms),
                   format_number(gflops(r.flops, rep.winner_time_ms)),
                   d && d->measured() ? format_number(d->stats.mean_ms) : "-",
                   std::isfinite(speedup) ? fmt::format("{:.2f}x", speedup) : "-",
                   ru ? fmt::format("{} ({})", ru->name, format_number(ru->stats.mean_ms)) : "-",
                   r.note});
    return;
  }
  if (r.stored) {
    table.add_row({problem, r.stored->solution, format_number(r.stored->time_ms),
                   format_number(gflops(r.flops, r.stored->time_ms)), "-", "-", "-", r.note});
    return;
  }
  table.add_row({problem, "-", "-", "-", "-", "-", "-", r.note});
}

/// Tunes one problem unless it is already in the results; fills `row`.
void tune_one(GemmTunableOp& op, const std::string& op_sig, const std::string& params_sig,
              const ops::GemmParams& shape, std::vector<TuneReport>& reports, RowData& row) {
  row.op = op_sig;
  row.params = params_sig;
  row.flops = shape.flops();
  TuningContext& ctx = tuning_context();
  const std::string canonical = shape.signature();
  if (auto stored = ctx.results_manager().lookup(shape.op_signature(), canonical)) {
    row.stored = stored;
    row.note = "already tuned";
    return;
  }
  auto ws = ops::GemmWorkspace::create(shape, 1, /*random_fill=*/true, /*seed=*/1);
  if (!ws) {
    row.note = ws.status().to_string();
    return;
  }
  reports.push_back(op.tune((*ws)->bind(0)));
  const TuneReport& rep = reports.back();
  if (!rep.status.is_ok() || !rep.winner) {
    row.note = rep.status.to_string();
    reports.pop_back();
    return;
  }
  row.note = rep.persisted ? "tuned" : "tuned (not saved)";
  row.report = &rep;
}

void print_footer(const std::vector<double>& speedups, double wall_s, std::size_t tuned,
                  std::size_t cached) {
  std::printf("\n%zu tuned, %zu already tuned, wall time %.1f s", tuned, cached, wall_s);
  if (!speedups.empty()) {
    std::printf("; geometric-mean speed-up over Default %.3fx (%zu problems)",
                geometric_mean(speedups), speedups.size());
  }
  std::printf("\nresults: %s\n", tuning_context().filename().c_str());
}

struct TuneFileArgs {
  std::vector<std::string> files;
  TuneFlags flags;
};

void run_tune_file(const TuneFileArgs& args) {
  const ops::DType* override_ptr = nullptr;
  ops::DType dtype{};
  if (!args.flags.dtype.empty()) {
    auto d = ops::parse_dtype(args.flags.dtype);
    if (!d) throw CommandFailure{kExitFailure, d.status().message()};
    dtype = *d;
    override_ptr = &dtype;
  }
  ops::GemmProblemSet set;
  for (const auto& f : args.files) {
    Status s = ops::read_gemm_problems(f, set, override_ptr);
    if (!s.is_ok()) throw CommandFailure{kExitFailure, s.message()};
  }
  if (set.problems.empty() && set.skipped.empty()) {
    throw CommandFailure{kExitFailure, "no GEMM problems in " + args.files.front()};
  }
  auto op = setup_tuning(args.flags);
  std::vector<TuneReport> reports;
  reports.reserve(set.problems.size());
  std::vector<RowData> rows(set.problems.size());
  const std::int64_t start = now_ns();
  std::size_t tuned = 0, cached = 0;
  for (std::size_t i = 0; i < set.problems.size(); ++i) {
    const auto& p = set.problems[i];
    progress(i, set.problems.size(), p.op_signature + "," + p.params_signature);
    tune_one(*op, p.op_signature, p.params_signature, p.params, reports, rows[i]);
    if (rows[i].report) ++tuned;
    if (rows[i].stored) ++cached;
  }
  progress_done();
  Table table = make_table();
  std::vector<double> speedups;
  for (const auto& r : rows) add_row(table, r, speedups);
  std::fputs(table.render().c_str(), stdout);
  if (!set.skipped.empty()) {
    std::printf("\nskipped %zu problem(s):\n", set.skipped.size());
    for (const auto& s : set.skipped) std::printf("  %s\n", s.reason.message().c_str());
  }
  if (set.duplicates > 0) std::printf("%d duplicate line(s) ignored\n", set.duplicates);
  print_footer(speedups, elapsed_ms(start, now_ns()) / 1000.0, tuned, cached);
}

struct GemmArgs {
  long long m = 0, n = 0, k = 0, batch = 1;
  std::string trans = "nn";
  bool bias = false;
  TuneFlags flags;
};

void run_gemm(const GemmArgs& a) {
  if (a.trans.size() != 2) throw CommandFailure{kExitFailure, "--trans expects two letters, e.g. tn"};
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
    auto d = ops::parse_dtype(a.flags.dtype);
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
  {
    auto check = ops::GemmParams::from_signature(p.op_signature(), p.signature());
    if (!check) throw CommandFailure{kExitFailure, check.status().message()};
  }
  auto op = setup_tuning(a.flags);
  std::vector<TuneReport> reports;
  RowData row;
  tune_one(*op, p.op_signature(), p.signature(), p, reports, row);
  Table table = make_table();
  std::vector<double> speedups;
  add_row(table, row, speedups);
  std::fputs(table.render().c_str(), stdout);
  if (!row.report && !row.stored) throw CommandFailure{kExitFailure, row.note};
}

}  // namespace
}  // namespace tunekit::cli

void register_tune_commands(CLI::App& app) {
  using namespace tunekit::cli;
  auto args = std::make_shared<TuneFileArgs>();
  CLI::App* tf = app.add_subcommand(
      "tune-file",
      "tune every GEMM problem of TunableOp untuned or results files and append the winners");
  tf->add_option("files", args->files, "untuned or results CSV files")->required()
      ->check(CLI::ExistingFile);
  add_tune_flags(tf, args->flags);
  tf->add_option("--dtype", args->flags.dtype, "tune every problem in this dtype instead "
                                                "(float, double, bf16)");
  tf->callback([args] { run_tune_file(*args); });

  auto g = std::make_shared<GemmArgs>();
  CLI::App* gc = app.add_subcommand("gemm", "tune (or look up) one GEMM problem");
  gc->add_option("--m", g->m, "rows of op(A) and C")->required()->check(CLI::PositiveNumber);
  gc->add_option("--n", g->n, "columns of op(B) and C")->required()->check(CLI::PositiveNumber);
  gc->add_option("--k", g->k, "inner dimension")->required()->check(CLI::PositiveNumber);
  gc->add_option("--trans", g->trans, "transposes of A and B, BLAS frame (nn, nt, tn, tt)")
      ->check(CLI::IsMember({"nn", "nt", "tn", "tt", "NN", "NT", "TN", "TT"}));
  gc->add_option("--batch", g->batch, "strided-batched count")->check(CLI::PositiveNumber);
  gc->add_flag("--bias", g->bias, "GEMM with a bias vector (GemmAndBias)");
  gc->add_option("--dtype", g->flags.dtype, "float, double or bf16");
  add_tune_flags(gc, g->flags);
  gc->callback([g] { run_gemm(*g); });
}
