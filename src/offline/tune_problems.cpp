// Offline tuning of parsed GEMM problems in one process.
// See include/tunekit/offline/tune_problems.hpp.
#include "tunekit/offline/tune_problems.hpp"

#include <fmt/format.h>

#include <memory>

#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/ops/gemm_memory.hpp"

namespace tunekit::offline {

using ops::check_memory_for;
using ops::gemm_tuning_bytes;
using ops::GemmParams;
using ops::GemmWorkspace;

ProblemRef problem_ref(const GemmParams& params) {
  return ProblemRef{params.op_signature(), params.signature()};
}

Expected<std::vector<GemmParams>> parse_problems(const std::vector<ProblemRef>& refs) {
  std::vector<GemmParams> problems;
  problems.reserve(refs.size());
  for (const ProblemRef& r : refs) {
    auto p = GemmParams::from_signature(r.op_signature, r.params_signature);
    if (!p) {
      return Status(p.status().code(),
                    r.op_signature + "," + r.params_signature + ": " + p.status().message());
    }
    problems.push_back(*p);
  }
  return problems;
}

namespace {

/// The outcome of a problem whose result `stored` is held already.
void describe_cached(GemmTunableOp& op, const GemmParams& problem, const ResultEntry& stored,
                     ProblemOutcome& out) {
  out.kind = ProblemOutcome::Kind::kCached;
  out.winner = stored.solution;
  out.time_ms = stored.time_ms;
  out.note = "already tuned";
  // A solution no candidate of this build knows (renamed, or another machine's library) makes
  // dispatch run Default: say so instead of showing it as the winner.
  if (Status known = op.solution_status(stored.solution, &problem); !known.is_ok()) {
    out.note = "already tuned; unknown solution, Default runs";
    log::warn(
        fmt::format("{},{}: solution '{}' cannot run here ({}); dispatch runs Default "
                    "(remove the line from {} to tune the problem again)",
                    out.op_signature, out.params_signature, stored.solution, known.message(),
                    op.context().filename()));
  }
}

/// Operands for tuning `problem`, once everything the tuning allocates (this problem's own
/// operands included) is known to fit. Errors: the memory check's; the settings' and the
/// allocation's with their code in the message (Status::to_string()).
Expected<std::unique_ptr<GemmWorkspace>> make_operands(GemmTunableOp& op, const ProblemOutcome& out,
                                                       const GemmParams& problem) {
  const auto with_code = [](const Status& s) { return Status(s.code(), s.to_string()); };
  auto settings = op.context().tuning_settings();
  if (!settings) return with_code(settings.status());
  TUNEKIT_RETURN_IF_ERROR(
      check_memory_for(gemm_tuning_bytes(problem, *settings, true),
                       "tuning " + out.op_signature + "," + out.params_signature));
  auto workspace = GemmWorkspace::create(problem, 1, /*random_fill=*/true, /*seed=*/1);
  if (!workspace) return with_code(workspace.status());
  return workspace;
}

/// The outcome of a finished tuning, saved or not as its report says (TuneReport::not_saved).
void describe_tuned(const TuneReport& report, ProblemOutcome& out) {
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
}

}  // namespace

ProblemOutcome tune_problem(GemmTunableOp& op, const GemmParams& problem, int rank,
                            ResultLine* result) {
  ProblemOutcome out;
  out.op_signature = problem.op_signature();
  out.params_signature = problem.signature();
  out.rank = rank;
  out.flops = problem.flops();
  op.context().ensure_results_loaded();  // the results file, then the tuning databases
  const auto fill_result = [&] {
    auto stored = op.context().results_manager().lookup(out.op_signature, out.params_signature);
    if (stored && result != nullptr) {
      *result = ResultLine{out.op_signature, out.params_signature, stored->solution,
                           stored->time_ms, stored->extra};
    }
    return stored;
  };
  if (auto stored = fill_result()) {
    describe_cached(op, problem, *stored, out);
    return out;
  }
  auto workspace = make_operands(op, out, problem);
  if (!workspace) {
    out.note = workspace.status().message();
    return out;
  }
  const TuneReport report = op.tune((*workspace)->bind(0));
  if (!report.status.is_ok() || !report.winner) {
    out.note = report.status.to_string();
    return out;
  }
  describe_tuned(report, out);
  (void)fill_result();
  return out;
}

WorkerReport tune_problems(GemmTunableOp& op, std::span<const GemmParams> problems, int rank,
                           const ProgressFn& progress, const FinishedFn& finished) {
  WorkerReport report;
  report.rank = rank;
  report.host = hw::host_name();
  report.threads = op.context().threads();
  report.validators = op.context().get_validators();
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const GemmParams& p = problems[i];
    if (progress) progress(i, problems.size(), p.op_signature() + "," + p.signature());
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

}  // namespace tunekit::offline
