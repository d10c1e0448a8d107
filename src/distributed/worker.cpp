// The offline-tuning worker. See include/tunekit/distributed/worker.hpp.
#include "tunekit/distributed/worker.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>

#include "tunekit/core/log.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/gemm_memory.hpp"

namespace tunekit::distributed {

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

ProblemOutcome tune_problem(GemmTunableOp& op, const ProblemRef& problem, int rank,
                            ResultLine* result) {
  ProblemOutcome out;
  out.op_signature = problem.op_signature;
  out.params_signature = problem.params_signature;
  out.rank = rank;
  auto shape = ops::GemmParams::from_signature(problem.op_signature, problem.params_signature);
  if (!shape) {
    out.note = shape.status().message();
    return out;
  }
  out.flops = shape->flops();
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
    if (!gemm_op().knows_solution(stored->solution)) {
      out.note = "already tuned; unknown solution, Default runs";
      log::warn(fmt::format(
          "{},{}: solution '{}' is not a candidate of this build; dispatch runs Default", op_sig,
          canonical, stored->solution));
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
  if (Status fits = ops::check_memory_for(ops::gemm_tuning_bytes(*shape, *settings, true),
                                          "tuning " + op_sig + "," + canonical);
      !fits.is_ok()) {
    out.note = fits.message();
    return out;
  }
  auto workspace = ops::GemmWorkspace::create(*shape, 1, /*random_fill=*/true, /*seed=*/1);
  if (!workspace) {
    out.note = workspace.status().to_string();
    return out;
  }
  const std::uint64_t unsaved_before = results.unsaved().count;
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
  const ResultsManager::Unsaved unsaved = results.unsaved();
  out.saved = unsaved.count == unsaved_before;
  out.note = out.saved ? "tuned" : "tuned, NOT SAVED: " + unsaved.last.message();
  if (report.contended && out.saved) {
    out.note = fmt::format("tuned under CPU contention ({:.0f}%)", 100.0 * report.contention);
  }
  (void)fill_result();
  return out;
}

WorkerReport tune_share(GemmTunableOp& op, const std::vector<ProblemRef>& problems, int rank,
                        const ProgressFn& progress) {
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
    report.outcomes.push_back(std::move(o));
  }
  return report;
}

}  // namespace tunekit::distributed
