// Offline tuning in one process. See include/tunekit/ops/offline_tuning.hpp.
#include "tunekit/ops/offline_tuning.hpp"

#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <set>
#include <string_view>

#include "tunekit/core/file_io.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/gemm_memory.hpp"

namespace tunekit::ops {

namespace {

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::string host_name() { return hw::host_name(); }

ProblemOutcome tune_problem(GemmTunableOp& op, const ProblemRef& problem, int rank,
                            ResultLine* result) {
  ProblemOutcome out;
  out.op_signature = problem.op_signature;
  out.params_signature = problem.params_signature;
  out.rank = rank;
  auto shape = GemmParams::from_signature(problem.op_signature, problem.params_signature);
  if (!shape) {
    out.note = shape.status().message();
    return out;
  }
  out.flops = shape->flops();
  op.context().ensure_results_loaded();  // the results file, then the tuning databases
  ResultsManager& results = op.context().results_manager();
  const std::string op_sig = shape->op_signature();
  const std::string canonical = shape->signature();
  const auto fill_result = [&] {
    auto stored = results.lookup(op_sig, canonical);
    if (stored && result != nullptr) {
      *result = ResultLine{op_sig, canonical, stored->solution, stored->time_ms, stored->extra};
    }
    return stored;
  };
  if (auto stored = fill_result()) {
    out.kind = ProblemOutcome::Kind::kCached;
    out.winner = stored->solution;
    out.time_ms = stored->time_ms;
    out.note = "already tuned";
    // A solution no candidate of this build knows (renamed, or another machine's library) makes
    // dispatch run Default: say so instead of showing it as the winner.
    if (Status known = op.solution_status(stored->solution, &*shape); !known.is_ok()) {
      out.note = "already tuned; unknown solution, Default runs";
      log::warn(fmt::format(
          "{},{}: solution '{}' cannot run here ({}); dispatch runs Default "
          "(remove the line from {} to tune the problem again)",
          op_sig, canonical, stored->solution, known.message(), op.context().filename()));
    }
    return out;
  }
  // Everything the tuning allocates, this problem's own operands included, must fit before any
  // of it is allocated.
  auto settings = op.context().tuning_settings();
  if (!settings) {
    out.note = settings.status().to_string();
    return out;
  }
  if (Status fits = check_memory_for(gemm_tuning_bytes(*shape, *settings, true),
                                     "tuning " + op_sig + "," + canonical);
      !fits.is_ok()) {
    out.note = fits.message();
    return out;
  }
  auto workspace = GemmWorkspace::create(*shape, 1, /*random_fill=*/true, /*seed=*/1);
  if (!workspace) {
    out.note = workspace.status().to_string();
    return out;
  }
  const TuneReport report = op.tune((*workspace)->bind(0));
  if (!report.status.is_ok() || !report.winner) {
    out.note = report.status.to_string();
    return out;
  }
  out.kind = ProblemOutcome::Kind::kTuned;
  out.winner = report.winner_report()->name;
  out.time_ms = report.winner_time_ms;
  if (const CandidateReport* d = report.default_report(); d != nullptr && d->measured()) {
    out.default_ms = d->score_ms;
  }
  if (const CandidateReport* r = report.runner_up(); r != nullptr) {
    out.runner_up = r->name;
    out.runner_up_ms = r->score_ms;
  }
  out.saved = report.not_saved.is_ok();
  out.note = out.saved ? "tuned" : "tuned, NOT SAVED: " + report.not_saved.message();
  if (report.contended && out.saved) {
    out.note = fmt::format("tuned under CPU contention ({:.0f}%)", 100.0 * report.contention);
  }
  (void)fill_result();
  return out;
}

WorkerReport tune_share(GemmTunableOp& op, const std::vector<ProblemRef>& problems, int rank,
                        const ProgressFn& progress, const FinishedFn& finished) {
  WorkerReport report;
  report.rank = rank;
  report.host = host_name();
  report.threads = op.context().threads();
  report.validators = op.context().get_validators();
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const ProblemRef& p = problems[i];
    if (progress) progress(i, problems.size(), p.op_signature + "," + p.params_signature);
    ResultLine line;
    ProblemOutcome o = tune_problem(op, p, rank, &line);
    if (o.kind != ProblemOutcome::Kind::kFailed && !line.op_signature.empty()) {
      report.results.push_back(std::move(line));
    }
    if (finished) finished(i, problems.size(), o);
    report.outcomes.push_back(std::move(o));
  }
  return report;
}

Expected<std::vector<std::string>> expand_file_patterns(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const std::string& arg : args) {
    if (is_regular_file(arg) || !has_glob_chars(arg)) {
      if (!is_regular_file(arg)) {
        struct stat st {};
        if (::stat(arg.c_str(), &st) != 0) {
          return Status(StatusCode::kNotFound, "cannot read '" + arg + "': no such file");
        }
        return Status(StatusCode::kIoError, "cannot read '" + arg + "': it is " +
                                                std::string(files::kind_of(st.st_mode)) +
                                                ", not a regular file");
      }
      if (seen.insert(arg).second) files.push_back(arg);
      continue;
    }
    glob_t g{};
    const int rc = ::glob(arg.c_str(), 0, nullptr, &g);
    std::vector<std::string> matches;
    if (rc == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) {
        if (is_regular_file(g.gl_pathv[i])) matches.emplace_back(g.gl_pathv[i]);
      }
    }
    ::globfree(&g);
    if (matches.empty()) {
      return Status(StatusCode::kNotFound, "no file matches '" + arg + "'");
    }
    std::sort(matches.begin(), matches.end());
    for (std::string& m : matches) {
      if (seen.insert(m).second) files.push_back(std::move(m));
    }
  }
  return files;
}

}  // namespace tunekit::ops
