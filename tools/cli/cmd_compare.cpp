// `tunekit compare`: re-times, interleaved in one run, Default, every candidate alone and the
// tuned dispatch (tunekit::gemm's hit path) on each problem of a file, and prints the ratios.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "compare_problem.hpp"
#include "progress.hpp"
#include "table.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/offline/problem_files.hpp"
#include "tunekit/ops/threading.hpp"
#include "tunekit/records/tuning_db.hpp"
#include "tuning_setup.hpp"

namespace tunekit::cli {
namespace {

struct CompareArgs {
  std::string file;
  TuneFlags flags;
  CompareOptions options;
  bool all = false;
};

/// The workload-wide figures, gathered problem by problem.
class WorkloadSummary {
 public:
  void add(const std::string& label, const ProblemComparison& pc) {
    ++problems_;
    tuned_over_best_.push_back(pc.tuned_over_best);
    if (pc.tuned_over_best > worst_) {
      worst_ = pc.tuned_over_best;
      worst_problem_ = label;
    }
    const Contender& tuned = pc.tuned();
    if (const Contender* d = pc.default_contender(); d != nullptr && d->median_ms > 0) {
      speedups_.push_back(d->median_ms / tuned.median_ms);
    }
    for (const Contender& c : pc.contenders) {
      // tunekit's own kernels (their default configuration) are timed but are no library.
      if (c.index == Contender::kTuned || c.library == "native") continue;
      const double ratio = pc.paired_ratio_to_tuned(c);
      if (std::isfinite(ratio)) fixed_ratios_[c.name].push_back(ratio);
    }
  }

  bool empty() const { return problems_ == 0; }

  void print() const {
    const double gm = geometric_mean(tuned_over_best_);
    std::printf("tuned / best single: geometric mean %.4f, worst %.4f (%s)\n", gm, worst_,
                worst_problem_.c_str());
    std::printf("speed-up of tuned over Default: geometric mean %.3fx\n",
                speedups_.empty() ? NAN : geometric_mean(speedups_));
    print_best_fixed();
    std::printf("within 5%% of the best on every problem: %s; within 2%% in geometric mean: %s\n",
                worst_ <= 1.05 ? "yes" : "no", gm <= 1.02 ? "yes" : "no");
  }

 private:
  /// The one candidate that, used for every problem, comes closest to the tuned dispatch:
  /// the geometric mean over the problems of its time / the tuned time (each the median of the
  /// per-repeat ratios, ProblemComparison::paired_ratio_to_tuned). Only candidates that ran
  /// every problem qualify.
  void print_best_fixed() const {
    std::string best;
    double best_gm = NAN;
    std::vector<std::string> partial;
    for (const auto& [name, ratios] : fixed_ratios_) {
      if (ratios.size() != problems_) {
        partial.push_back(name);
        continue;
      }
      const double gm = geometric_mean(ratios);
      if (best.empty() || gm < best_gm) {
        best = name;
        best_gm = gm;
      }
    }
    if (best.empty()) {
      std::printf("best fixed library: none ran all %zu problems\n", problems_);
      return;
    }
    std::printf(
        "best fixed library: %s everywhere takes %.3fx the tuned dispatch's time (geometric mean "
        "over %zu problems)%s\n",
        best.c_str(), best_gm, problems_,
        partial.empty() ? ""
                        : fmt::format("; not ranked, as they cannot run every problem: {}",
                                      fmt::join(partial, ", "))
                              .c_str());
  }

  std::size_t problems_ = 0;
  std::vector<double> tuned_over_best_, speedups_;
  double worst_ = 0;
  std::string worst_problem_;
  std::map<std::string, std::vector<double>> fixed_ratios_;
};

/// The rows one compared problem adds to the tuning database: every contender's median time.
void add_db_rows(std::vector<DbComparison>& rows, const DbComparison& run,
                 const ops::GemmParams& shape, const ProblemComparison& pc) {
  for (const Contender& c : pc.contenders) {
    DbComparison row = run;
    row.op_signature = shape.op_signature();
    row.params_signature = shape.signature();
    const bool tuned = c.index == Contender::kTuned;
    row.contender = tuned ? "tuned" : c.name;
    row.kind =
        tuned ? "tuned"
              : (c.name == "Default" ? "default" : (c.library == "native" ? "native" : "library"));
    row.time_ms = c.median_ms;
    rows.push_back(std::move(row));
  }
}

/// Stores the run in the user tuning database (docs/database.md); a failure is a warning.
void store_comparison(TuningContext& ctx, const std::vector<DbComparison>& rows) {
  if (rows.empty()) return;
  auto db = ctx.databases().user_for_writing();
  if (db && !*db) return;  // no user database (TUNEKIT_DB=off)
  auto stored = db ? (*db)->add_comparisons(ctx.validators().values(), rows)
                   : Expected<std::size_t>(db.status());
  if (!stored) {
    std::fprintf(stderr, "tunekit warning: comparison not stored: %s\n",
                 stored.status().message().c_str());
    return;
  }
  std::printf("comparison stored in the tuning database %s\n", (*db)->path().c_str());
}

void add_rows(Table& table, Table& detail, const std::string& label, const ops::GemmParams& shape,
              const std::string& solution, const ProblemComparison& pc, bool all) {
  const Contender& tuned = pc.tuned();
  const Contender& best = pc.contenders[*pc.best];
  const Contender* d = pc.default_contender();
  const double speedup = d != nullptr ? d->median_ms / tuned.median_ms : NAN;
  table.add_row({label, d != nullptr ? format_number(d->median_ms) : "-", best.name,
                 format_number(best.median_ms), solution, format_number(tuned.median_ms),
                 fmt::format("{:.3f}", pc.tuned_over_best),
                 std::isfinite(speedup) ? fmt::format("{:.2f}x", speedup) : "-"});
  if (!all) return;
  for (const Contender& c : pc.contenders) {
    detail.add_row({label, c.name, format_number(c.median_ms),
                    format_number(gflops(shape.flops(), c.median_ms)),
                    fmt::format("{:.3f}", c.median_ms / best.median_ms)});
  }
}

/// One compared problem for the progress line: the winner and how it fared.
std::string progress_text(const std::string& solution, const ProblemComparison& pc) {
  const Contender* d = pc.default_contender();
  return fmt::format(
      "winner {}, tuned/best single {:.3f}{}", solution, pc.tuned_over_best,
      d != nullptr && d->median_ms > 0
          ? fmt::format(", {:.2f}x over Default", d->median_ms / pc.tuned().median_ms)
          : std::string());
}

void run_compare(const CompareArgs& args) {
  offline::GemmProblemSet set;
  Status s = offline::read_gemm_problems(args.file, set);
  if (!s.is_ok()) throw CommandFailure{kExitFailure, s.message()};
  TuneFlags flags = args.flags;
  (void)setup_tuning(flags);  // settings, threads, results file
  TuningContext& ctx = tuning_context();
  ctx.enable_tuning(false);  // dispatch must hit stored results, never tune here
  ctx.enable_record_untuned(false);
  GemmTunableOp& op = gemm_op();
  CompareOptions options = args.options;
  options.flush = ctx.is_cache_flush_enabled();
  options.rotating_bytes = ctx.rotating_buffer_size();

  Table table({"problem", "Default ms", "best single", "best ms", "tuned", "tuned ms", "tuned/best",
               "speed-up"},
              {false, true, false, true, false, true, true, true});
  Table detail({"problem", "contender", "median ms", "GFLOP/s", "vs best"},
               {false, false, true, true, true});
  WorkloadSummary summary;
  std::set<std::string> compared;
  const std::int64_t start = now_ns();
  DbComparison run;
  run.tool = "compare";
  run.provenance = DbProvenance{hw::host_name(), "compare", utc_now()};
  run.run =
      fmt::format("compare {} {} {}", run.provenance.created, run.provenance.host, ::getpid());
  std::vector<DbComparison> db_rows;
  Progress bar(set.problems.size());
  for (std::size_t pi = 0; pi < set.problems.size(); ++pi) {
    const auto& prob = set.problems[pi];
    const ops::GemmParams& shape = prob.params;
    const std::string label = prob.op_signature + "," + prob.params_signature;
    bar.begin(pi, label);
    // The same problem written twice (e.g. with and without its leading dimensions) is one.
    if (!compared.insert(shape.op_signature() + "," + shape.signature()).second) {
      bar.finished(pi, label, "compared above");
      continue;
    }
    auto stored = ctx.results_manager().lookup(shape.op_signature(), shape.signature());
    if (!stored) {
      table.add_row({label, "-", "-", "-", "not tuned", "-", "-", "-"});
      bar.finished(pi, label, "not tuned");
      continue;
    }
    auto pc = compare_problem(op, shape, stored->solution, options);
    if (!pc) throw CommandFailure{kExitFailure, pc.status().message()};
    if (!pc->best || std::isnan(pc->tuned().median_ms)) {
      table.add_row({label, "-", "-", "-", pc->tuned().name, "-", "-", "-"});
      bar.finished(pi, label, "could not be timed");
      continue;
    }
    add_rows(table, detail, label, shape, stored->solution, *pc, args.all);
    summary.add(label, *pc);
    add_db_rows(db_rows, run, shape, *pc);
    bar.finished(pi, label, progress_text(stored->solution, *pc));
  }
  bar.done();
  if (summary.empty()) {
    throw CommandFailure{
        kExitFailure,
        fmt::format("nothing to compare: none of the {} problem(s) of '{}' has a result in '{}'",
                    set.problems.size(), args.file, ctx.filename())};
  }
  std::fputs(table.render().c_str(), stdout);
  if (args.all) std::printf("\n%s", detail.render().c_str());
  std::printf(
      "\n%d interleaved repeats of every contender, median of per-repeat medians; then %d "
      "head-to-head rounds (up to %d while they take under %.0f ms) of the tuned dispatch and "
      "the best single contender (their times include those rounds; tuned/best is the median "
      "of the paired per-round ratios); threads %d; rotating copies and cache flush as in "
      "tuning; wall %.1f s\n",
      options.repeats, options.head_to_head, 4 * options.head_to_head, options.head_to_head_ms,
      ops::num_threads(), elapsed_ms(start, now_ns()) / 1000.0);
  summary.print();
  store_comparison(ctx, db_rows);
}

}  // namespace
}  // namespace tunekit::cli

namespace {
// CLI::Range lets NaN through (every comparison with it is false).
CLI::Validator finite_number() {
  return CLI::Validator(
      [](const std::string& text) {
        double value = 0;
        return CLI::detail::lexical_cast(text, value) && std::isfinite(value)
                   ? std::string()
                   : "expected a finite number, got '" + text + "'";
      },
      "FINITE");
}
}  // namespace

void register_compare_command(CLI::App& app) {
  using namespace tunekit::cli;
  auto args = std::make_shared<CompareArgs>();
  CLI::App* c = app.add_subcommand("compare",
                                   "re-time Default, every candidate alone and the tuned dispatch, "
                                   "interleaved, and print ratios");
  c->add_option("file", args->file, "untuned or results CSV listing the problems")
      ->required()
      ->check(CLI::ExistingFile);
  add_tune_flags(c, args->flags);
  c->add_option("--repeats", args->options.repeats,
                "interleaved repeats of every contender (median taken; at least 5)")
      ->check(CLI::Range(5, 1000));
  c->add_option("--head-to-head", args->options.head_to_head,
                "rounds alternating the tuned dispatch and the best single contender (0: none)")
      ->check(CLI::Range(0, 1000));
  c->add_option("--head-to-head-ms", args->options.head_to_head_ms,
                "more head-to-head rounds (up to 4x --head-to-head) while they took less than "
                "this, ms (0: exactly --head-to-head)")
      ->check(CLI::Range(0.0, 600000.0) & finite_number());
  c->add_option("--sample-ms", args->options.sample_ms,
                "time per contender per repeat, 0.001 to 60000 (calls sized to it, at most 200)")
      ->check(CLI::Range(0.001, 60000.0) & finite_number());
  c->add_flag("--all", args->all, "also print every contender's time");
  c->callback([args] { run_compare(*args); });
}
