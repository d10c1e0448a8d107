// `tunekit tune-kernel SPEC.json`: tunes a C/C++ (or OpenCL/CUDA) kernel described by a JSON
// spec, with AutoTVM's progress line, and prints the top configurations and the failed ones.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "table.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/distributed/remote_kernel.hpp"
#include "tunekit/kernel/kernel_spec.hpp"
#include "tunekit/kernel/tune_kernel.hpp"
#include "tunekit/measure/cpp_builder.hpp"
#include "tunekit/search/strategy.hpp"

namespace {

using tunekit::Trial;
using tunekit::cli::CommandFailure;

struct TuneKernelArgs {
  std::string spec;
  std::optional<std::size_t> budget;
  std::optional<double> seconds;
  std::optional<std::string> strategy;
  std::optional<std::string> log;
  std::optional<std::uint64_t> seed;
  std::optional<std::string> isolation;
  std::optional<double> timeout_s;
  std::optional<int> n_parallel;
  std::size_t top = 10;
  bool no_resume = false;
  bool quiet = false;
  bool distributed = false;
};

/// The spec with the command-line overrides applied.
tunekit::KernelSpec load_spec(const TuneKernelArgs& a) {
  auto spec = tunekit::load_kernel_spec(a.spec);
  if (!spec) throw CommandFailure{tunekit::cli::kExitFailure, spec.status().message()};
  if (a.budget) spec->budget.trials = *a.budget;
  if (a.seconds) spec->budget.seconds = *a.seconds;
  if (a.strategy) {
    spec->strategy = *a.strategy;
    spec->strategy_settings = nlohmann::json::object();
    auto probe = tunekit::make_strategy(spec->strategy, spec->strategy_settings);
    if (!probe) throw CommandFailure{tunekit::cli::kExitUsage, probe.status().message()};
  }
  if (a.log) spec->log_path = *a.log;
  if (a.seed) spec->seed = spec->problem.seed = *a.seed;
  if (a.isolation) spec->isolation = tunekit::isolation_from_string(*a.isolation).value();
  if (a.timeout_s) spec->timing.timeout_s = *a.timeout_s;
  if (a.n_parallel) spec->build.n_parallel = *a.n_parallel;
  return *std::move(spec);
}

/// A knob's value as a table cell: strings without quotes, other JSON as written.
std::string cell_of(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

/// Mean, median, min (ms) and dispersion (std/mean, %) of a trial's costs.
struct CostSummary {
  double mean_ms = 0, median_ms = 0, min_ms = 0, dispersion_pct = 0;
};

CostSummary summarize(const Trial& t) {
  tunekit::Welford w;
  for (double c : t.result.costs_s) w.add(c * 1e3);
  std::vector<double> ms;
  for (double c : t.result.costs_s) ms.push_back(c * 1e3);
  const double median = tunekit::median(ms);
  return {w.mean(), median, w.min(), w.mean() > 0 ? 100.0 * w.stddev() / w.mean() : 0.0};
}

void print_top(const tunekit::KernelTuneResult& r, std::size_t top) {
  std::vector<const Trial*> ok;
  for (const Trial& t : r.trials) {
    if (t.result.ok()) ok.push_back(&t);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const Trial* a, const Trial* b) {
    return a->result.mean_cost_s() < b->result.mean_cost_s();
  });
  if (ok.empty()) return;  // the failures and the error say it all
  if (ok.size() > top) ok.resize(top);
  const tunekit::ConfigSpace& space = *r.task->space;
  std::vector<std::string> header = {"rank"};
  std::vector<bool> right = {true};
  for (const tunekit::Knob& k : space.knobs()) {
    header.push_back(k.name);
    right.push_back(true);
  }
  for (const char* h : {"mean ms", "median ms", "min ms", "dispersion", "GFLOP/s"}) {
    header.emplace_back(h);
    right.push_back(true);
  }
  tunekit::cli::Table table(std::move(header), std::move(right));
  for (std::size_t i = 0; i < ok.size(); ++i) {
    std::vector<std::string> row = {std::to_string(i + 1)};
    for (const tunekit::Knob& k : space.knobs()) row.push_back(cell_of(ok[i]->config[k.name]));
    const CostSummary s = summarize(*ok[i]);
    row.push_back(fmt::format("{:.4f}", s.mean_ms));
    row.push_back(fmt::format("{:.4f}", s.median_ms));
    row.push_back(fmt::format("{:.4f}", s.min_ms));
    row.push_back(fmt::format("{:.1f}%", s.dispersion_pct));
    row.push_back(r.task->flop > 0 ? fmt::format("{:.2f}", r.task->flop / s.mean_ms / 1e6) : "-");
    table.add_row(std::move(row));
  }
  std::printf("\nTop %zu configuration(s) of %s (mean of %s):\n%s", ok.size(), r.task->name.c_str(),
              "the repeats", table.render().c_str());
}

void print_failed(const tunekit::KernelTuneResult& r) {
  std::vector<const Trial*> failed;
  for (std::size_t i = 0; i < r.trials.size(); ++i) {
    if (!r.trials[i].result.ok()) failed.push_back(&r.trials[i]);
  }
  if (failed.empty()) return;
  std::printf("\nFailed configurations (%zu):\n", failed.size());
  for (const Trial* t : failed) {
    const std::string why = t->result.error_msg.empty() ? "(read from the log; reason not logged)"
                                                        : t->result.error_msg;
    std::printf("  %s: %s: %s\n", t->config.to_string().c_str(),
                std::string(tunekit::to_string(t->result.error_no)).c_str(), why.c_str());
  }
}

/// Where trials run: C/C++ trials fork per trial under kProcess; OpenCL and CUDA ones always
/// run in a warm worker (device contexts do not survive fork).
const char* isolation_label(tunekit::Isolation isolation, tunekit::KernelLanguage language) {
  switch (isolation) {
    case tunekit::Isolation::kProcess:
      return language == tunekit::KernelLanguage::kCpp ? "isolated (a process per trial)"
                                                       : "isolated (warm worker)";
    case tunekit::Isolation::kWorker:
      return "isolated (warm worker)";
    case tunekit::Isolation::kInProcess:
      return "in-process";
  }
  return "?";
}

/// "60 configurations" (those the restrictions allow) or, where counting them would walk a
/// space of over a million points, "2000000 points before restrictions".
std::string space_size(const tunekit::ConfigSpace& space) {
  constexpr std::uint64_t kCountLimit = 1'000'000;
  if (space.range_length() > kCountLimit) {
    return fmt::format("{} points before restrictions", space.range_length());
  }
  return fmt::format("{} configurations", space.valid_count());
}

/// The language the source is compiled as: "c" or "c++" for C/C++ sources, else the spec's.
std::string language_label(const tunekit::KernelSource& source) {
  if (source.language != tunekit::KernelLanguage::kCpp) {
    return std::string(tunekit::to_string(source.language));
  }
  return tunekit::compiles_as_c(source) ? "c" : "c++";
}

void print_header(const tunekit::KernelSpec& spec) {
  std::printf("tune-kernel %s: %s (%s), %s, strategy %s, %s, log %s\n", spec.source.name.c_str(),
              spec.source.path.c_str(), language_label(spec.source).c_str(),
              space_size(*spec.space).c_str(), spec.strategy.c_str(),
              isolation_label(spec.isolation, spec.source.language), spec.log_path.c_str());
  std::fflush(stdout);
}

void print_summary(const tunekit::KernelTuneResult& r) {
  std::size_t failed = 0;
  for (const Trial& t : r.trials) failed += t.result.ok() ? 0 : 1;
  std::printf(
      "%zu trial(s): %zu measured now, %zu from the log; %zu failed; stopped: %s; "
      "%.1f s\n",
      r.trials.size(), r.trials.size() - r.resumed, r.resumed, failed,
      std::string(tunekit::to_string(r.stop_reason)).c_str(), r.wall_s);
}

/// Prints the ranks that failed during a distributed run.
void print_rank_failures(const tunekit::distributed::RemoteRunner& runner) {
  for (const auto& f : runner.failures()) {
    std::printf("rank %d failed: %s (its trials were measured by the other ranks)\n", f.rank,
                f.reason.c_str());
  }
}

/// The MPI transport of a distributed run, refusing a single rank.
std::unique_ptr<tunekit::distributed::Transport> open_transport() {
  auto transport = tunekit::distributed::make_mpi_transport();
  if (!transport) throw CommandFailure{tunekit::cli::kExitFailure, transport.status().message()};
  if ((*transport)->size() < 2) {
    throw CommandFailure{tunekit::cli::kExitUsage,
                         "tune-kernel --distributed needs at least 2 MPI ranks (rank 0 searches, "
                         "the others build and run): mpirun -n 3 tunekit tune-kernel ..."};
  }
  return std::move(transport).value();
}

/// Rank 0 of a distributed run: tunes with the other ranks measuring (`runner`).
tunekit::KernelTuneResult tune_remotely(
    const tunekit::KernelSpec& spec, tunekit::KernelTuneOptions options,
    const std::shared_ptr<tunekit::distributed::RemoteRunner>& runner) {
  options.runner = runner;
  auto result = tunekit::tune_kernel(spec, options);
  runner->stop();
  print_rank_failures(*runner);
  if (!result) throw CommandFailure{tunekit::cli::kExitFailure, result.status().message()};
  return *std::move(result);
}

/// The "best:" and "log:" lines of a run with a successful trial.
void print_best(const tunekit::KernelSpec& spec, const tunekit::KernelTuneResult& result) {
  const Trial& best = *result.best;
  std::printf("\nbest: %s  %.4f ms", best.config.to_string().c_str(),
              best.result.mean_cost_s() * 1e3);
  if (result.task->flop > 0) {
    std::printf("  %.2f GFLOP/s", result.task->flop / best.result.mean_cost_s() / 1e9);
  }
  std::printf("\nlog: %s\n", spec.log_path.c_str());
}

/// Prints what a finished run found; throws when records of the run could not be saved in the
/// log (they are lost, as tune-file's unsaved results) or when no configuration ran.
void report(const tunekit::KernelSpec& spec, const tunekit::KernelTuneResult& result,
            std::size_t top) {
  print_summary(result);
  if (top > 0) print_top(result, top);
  print_failed(result);
  if (result.best) print_best(spec, result);
  if (const tunekit::Status saved = tunekit::unsaved_records_status(result.unsaved);
      !saved.is_ok()) {
    throw CommandFailure{tunekit::cli::kExitFailure, saved.message()};
  }
  if (!result.best) {
    throw CommandFailure{tunekit::cli::kExitFailure,
                         fmt::format("{}: no configuration ran successfully ({} tried)",
                                     spec.source.name, result.trials.size())};
  }
}

/// `--distributed`: worker ranks serve trials until rank 0 stops them; rank 0 tunes and reports.
/// A rank that stopped answering never reaches MPI_Finalize, so then the job ends by MPI_Abort
/// after the report.
void run_distributed(const tunekit::KernelSpec& spec, const TuneKernelArgs& a,
                     const tunekit::KernelTuneOptions& options) {
  namespace td = tunekit::distributed;
  const auto transport = open_transport();
  if (transport->rank() != 0) {
    const auto served = td::serve_remote_trials(*transport, td::local_kernel_measure(spec));
    if (!served.is_ok()) throw CommandFailure{tunekit::cli::kExitFailure, served.message()};
    return;
  }
  if (!a.quiet) print_header(spec);
  auto runner = std::make_shared<td::RemoteRunner>(*transport, td::remote_reply_timeout_s(spec));
  int code = 0;
  try {
    report(spec, tune_remotely(spec, options, runner), a.top);
  } catch (const CommandFailure& failure) {
    if (!runner->has_silent_rank()) throw;
    std::fprintf(stderr, "%s\n", failure.message.c_str());
    code = failure.code;
  }
  if (runner->has_silent_rank()) {
    std::fflush(nullptr);
    transport->abort(code);
  }
}

void run(const TuneKernelArgs& a) {
  const tunekit::KernelSpec spec = load_spec(a);
  tunekit::KernelTuneOptions options;
  options.progress = a.quiet ? nullptr : stdout;
  options.resume = !a.no_resume;
  options.fail_on_unsaved = false;  // report() prints the run first, then fails
  if (a.distributed) {
    run_distributed(spec, a, options);
    return;
  }
  if (!a.quiet) print_header(spec);
  auto result = tunekit::tune_kernel(spec, options);
  if (!result) throw CommandFailure{tunekit::cli::kExitFailure, result.status().message()};
  report(spec, *result, a.top);
}

}  // namespace

void register_tune_kernel_command(CLI::App& app) {
  auto a = std::make_shared<TuneKernelArgs>();
  auto* cmd = app.add_subcommand(
      "tune-kernel", "Tune a kernel described by a JSON spec (docs/kernels.md); resumes its log");
  cmd->add_option("spec", a->spec, "Kernel spec (JSON)")->required();
  cmd->add_option("--budget", a->budget,
                  "Trials of this task in the log to reach (earlier runs count; overrides "
                  "budget.trials)")
      ->check(tunekit::cli::positive_integer());
  cmd->add_option("--seconds", a->seconds, "Wall-time budget of this run in seconds")
      ->check(tunekit::cli::positive_finite_number());
  cmd->add_option("--strategy", a->strategy,
                  "Search strategy (auto, grid, random, ga, sa, xgb, ...; drops the spec's "
                  "strategy_settings)");
  cmd->add_option("--log", a->log, "Tuning log (JSON lines) instead of the spec's");
  cmd->add_option("--seed", a->seed, "Seed of the strategy and of random fills")
      ->check(tunekit::cli::seed_number());
  cmd->add_option("--isolation", a->isolation,
                  "worker (the default: a warm worker, replaced after a failed trial), process "
                  "(a forked child per trial) or in-process")
      ->check(CLI::IsMember({"process", "worker", "in-process"}));
  cmd->add_option("--timeout", a->timeout_s, "Seconds a trial may run (timing.timeout)")
      ->check(tunekit::cli::positive_finite_number());
  cmd->add_option("--n-parallel", a->n_parallel, "Configurations built at once (0 = CPUs)")
      ->check(tunekit::cli::non_negative_integer());
  cmd->add_option("--top", a->top, "Configurations in the final table (default 10; 0 = none)")
      ->check(tunekit::cli::non_negative_integer());
  cmd->add_flag("--no-resume", a->no_resume,
                "Measure again configurations the log already holds (the log is appended to)");
  cmd->add_flag("-q,--quiet", a->quiet, "No header and no progress line");
  cmd->add_flag("--distributed", a->distributed,
                "Under mpirun: rank 0 searches, the other ranks build and run the configurations "
                "(AutoTVM's RPC runner over MPI)");
  cmd->callback([a] { run(*a); });
}
