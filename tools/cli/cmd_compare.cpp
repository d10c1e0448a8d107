// `tunekit compare`: re-times, interleaved in one run, Default, every candidate alone and the
// tuned dispatch (tunekit::gemm's hit path) on each problem of a file, and prints the ratios.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "table.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/ops/gemm_problems.hpp"
#include "tunekit/ops/threading.hpp"
#include "tuning_setup.hpp"

namespace tunekit::cli {
namespace {

struct CompareArgs {
  std::string file;
  TuneFlags flags;
  int repeats = 5;
  int head_to_head = 10;
  double sample_ms = 20.0;
  bool all = false;
};

constexpr int kTuned = -1;

struct Contender {
  int index = 0;  // candidate index, or kTuned
  std::string name;
  int calls = 1;
  std::vector<double> samples;  // per repeat: median per-call ms
  double median_ms = NAN;
};

void run_compare(const CompareArgs& args) {
  ops::GemmProblemSet set;
  Status s = ops::read_gemm_problems(args.file, set);
  if (!s.is_ok()) throw CommandFailure{kExitFailure, s.message()};
  TuneFlags flags = args.flags;
  (void)setup_tuning(flags);  // settings, threads, results file
  TuningContext& ctx = tuning_context();
  ctx.enable_tuning(false);  // dispatch must hit stored results, never tune here
  ctx.enable_record_untuned(false);
  GemmTunableOp& op = gemm_op();
  const auto& cands = op.candidates();
  const bool flush = ctx.is_cache_flush_enabled();

  Table table({"problem", "Default ms", "best single", "best ms", "tuned", "tuned ms", "tuned/best",
               "speed-up"},
              {false, true, false, true, false, true, true, true});
  Table detail({"problem", "contender", "median ms", "GFLOP/s", "vs best"},
               {false, false, true, true, true});
  std::vector<double> tuned_over_best, speedups;
  std::set<std::string> compared;
  double worst = 0;
  std::string worst_problem;
  const std::int64_t start = now_ns();
  for (std::size_t pi = 0; pi < set.problems.size(); ++pi) {
    const auto& prob = set.problems[pi];
    const ops::GemmParams& shape = prob.params;
    auto stored = ctx.results_manager().lookup(shape.op_signature(), shape.signature());
    const std::string label = prob.op_signature + "," + prob.params_signature;
    progress(pi, set.problems.size(), label);
    // The same problem written twice (e.g. with and without its leading dimensions) is one problem.
    if (!compared.insert(shape.op_signature() + "," + shape.signature()).second) continue;
    if (!stored) {
      table.add_row({label, "-", "-", "-", "not tuned", "-", "-", "-"});
      continue;
    }
    const std::size_t copies = std::min<std::size_t>(
        64, measure::rotating_copies(ctx.rotating_buffer_size(), shape.c_bytes(),
                                     shape.a_bytes() + shape.b_bytes() + shape.bias_bytes()));
    auto ws = ops::GemmWorkspace::create(shape, copies, true, 7);
    if (!ws) throw CommandFailure{kExitFailure, ws.status().message()};
    std::vector<Contender> contenders;
    for (std::size_t i = 0; i < cands.size(); ++i) {
      const ops::GemmParams p0 = (*ws)->bind(0);
      if (!cands[i]->supports(p0).is_ok()) continue;
      if (!ctx.is_library_enabled(cands[i]->library()) && i != 0) continue;
      if (!cands[i]->prepare(p0).is_ok()) continue;
      Contender c;
      c.index = static_cast<int>(i);
      c.name = cands[i]->name();
      contenders.push_back(std::move(c));
    }
    Contender tuned_c;
    tuned_c.index = kTuned;
    tuned_c.name = "tuned (" + stored->solution + ")";
    contenders.push_back(std::move(tuned_c));
    std::size_t rot = 0;
    auto call = [&](const Contender& c, double* ms) -> Status {
      const ops::GemmParams p = (*ws)->bind(rot++ % copies);
      if (flush) {
        const measure::MemoryRange ranges[] = {{p.a, shape.a_bytes()},
                                               {p.b, shape.b_bytes()},
                                               {p.c, shape.c_bytes()},
                                               {p.bias, shape.bias_bytes()}};
        measure::flush_data_cache(ranges);
      }
      const std::int64_t t0 = now_ns();
      Status st = c.index == kTuned ? op(p) : cands[static_cast<std::size_t>(c.index)]->run(p);
      *ms = elapsed_ms(t0, now_ns());
      return st;
    };
    // Estimate each contender once to size its samples.
    for (auto& c : contenders) {
      double ms = 0;
      (void)ops::settle_threads();
      Status st = call(c, &ms);
      if (!st.is_ok()) {
        c.calls = 0;
        continue;
      }
      (void)call(c, &ms);
      // Bounded as a double (sample_ms / ms can exceed any int; NaN gives 1 call).
      const double want = std::ceil(args.sample_ms / std::max(ms, 1e-6));
      c.calls = want >= 200.0 ? 200 : want >= 1.0 ? static_cast<int>(want) : 1;
    }
    // One sample of a contender: its calls after the thread pools settled; the median per-call
    // ms, kept in its samples (NaN when its first call fails).
    auto sample = [&](Contender& c) {
      (void)ops::settle_threads();
      std::vector<double> per_call;
      for (int q = 0; q < c.calls; ++q) {
        double ms = 0;
        if (!call(c, &ms).is_ok()) break;
        per_call.push_back(ms);
      }
      if (per_call.empty()) return static_cast<double>(NAN);
      c.samples.push_back(median(per_call));
      return c.samples.back();
    };
    for (int r = 0; r < args.repeats; ++r) {
      for (std::size_t j = 0; j < contenders.size(); ++j) {
        Contender& c = contenders[(j + static_cast<std::size_t>(r)) % contenders.size()];
        if (c.calls > 0) (void)sample(c);
      }
    }
    for (auto& c : contenders) c.median_ms = c.samples.empty() ? NAN : median(c.samples);
    Contender* best = nullptr;
    Contender* tuned = &contenders.back();
    const Contender* deflt = contenders.front().index == 0 ? &contenders.front() : nullptr;
    for (auto& c : contenders) {
      if (c.index == kTuned || std::isnan(c.median_ms)) continue;
      if (best == nullptr || c.median_ms < best->median_ms) best = &c;
    }
    if (best == nullptr || std::isnan(tuned->median_ms)) {
      table.add_row({label, "-", "-", "-", tuned->name, "-", "-", "-"});
      continue;
    }
    // Head to head: the tuned dispatch and the best single contender alternate (order swapped
    // every round), and each round gives one paired ratio, so host drift cancels out and the
    // best single's lucky first-phase median (the minimum over all contenders) is re-measured.
    std::vector<double> paired;
    for (int r = 0; r < args.head_to_head; ++r) {
      double round_ms[2] = {NAN, NAN};
      for (int j = 0; j < 2; ++j) {
        const int which = (j + r) % 2;  // 0: tuned, 1: best
        round_ms[which] = sample(which == 0 ? *tuned : *best);
      }
      if (std::isfinite(round_ms[0]) && std::isfinite(round_ms[1]))
        paired.push_back(round_ms[0] / round_ms[1]);
    }
    tuned->median_ms = median(tuned->samples);
    best->median_ms = median(best->samples);
    const double ratio = paired.empty() ? tuned->median_ms / best->median_ms : median(paired);
    const double speedup = deflt ? deflt->median_ms / tuned->median_ms : NAN;
    tuned_over_best.push_back(ratio);
    if (std::isfinite(speedup)) speedups.push_back(speedup);
    if (ratio > worst) {
      worst = ratio;
      worst_problem = label;
    }
    table.add_row({label, deflt ? format_number(deflt->median_ms) : "-", best->name,
                   format_number(best->median_ms), stored->solution,
                   format_number(tuned->median_ms), fmt::format("{:.3f}", ratio),
                   std::isfinite(speedup) ? fmt::format("{:.2f}x", speedup) : "-"});
    if (args.all) {
      for (const auto& c : contenders) {
        detail.add_row({label, c.name, format_number(c.median_ms),
                        format_number(gflops(shape.flops(), c.median_ms)),
                        fmt::format("{:.3f}", c.median_ms / best->median_ms)});
      }
    }
  }
  progress_done();
  if (tuned_over_best.empty()) {
    throw CommandFailure{
        kExitFailure,
        fmt::format("nothing to compare: none of the {} problem(s) of '{}' has a result in '{}'",
                    set.problems.size(), args.file, ctx.filename())};
  }
  std::fputs(table.render().c_str(), stdout);
  if (args.all) std::printf("\n%s", detail.render().c_str());
  std::printf(
      "\n%d interleaved repeats of every contender, median of per-repeat medians; then %d "
      "head-to-head rounds of the tuned dispatch and the best single contender (their times "
      "include those rounds; tuned/best is the median of the paired per-round ratios); "
      "threads %d; rotating copies and cache flush as in tuning; wall %.1f s\n",
      args.repeats, args.head_to_head, ops::num_threads(), elapsed_ms(start, now_ns()) / 1000.0);
  if (!tuned_over_best.empty()) {
    const double gm = geometric_mean(tuned_over_best);
    std::printf("tuned / best single: geometric mean %.4f, worst %.4f (%s)\n", gm, worst,
                worst_problem.c_str());
    std::printf("speed-up of tuned over Default: geometric mean %.3fx\n",
                speedups.empty() ? NAN : geometric_mean(speedups));
    std::printf("within 5%% of the best on every problem: %s; within 2%% in geometric mean: %s\n",
                worst <= 1.05 ? "yes" : "no", gm <= 1.02 ? "yes" : "no");
  }
}

}  // namespace
}  // namespace tunekit::cli

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
  c->add_option("--repeats", args->repeats,
                "interleaved repeats of every contender (median taken; at least 5)")
      ->check(CLI::Range(5, 1000));
  c->add_option("--head-to-head", args->head_to_head,
                "rounds alternating the tuned dispatch and the best single contender (0: none)")
      ->check(CLI::Range(0, 1000));
  c->add_option("--sample-ms", args->sample_ms,
                "time per contender per repeat, 0.001 to 60000 (calls sized to it, at most 200)")
      ->check(CLI::Range(0.001, 60000.0));
  c->add_flag("--all", args->all, "also print every contender's time");
  c->callback([args] { run_compare(*args); });
}
