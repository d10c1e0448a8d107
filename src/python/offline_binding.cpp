// Offline tuning from Python: tune_gemm_in_file in this process, and the three steps of
// mgpu_tune_gemm_in_file (read the problems, tune one worker's share in a worker process,
// gather the workers' reports into the _full files); python/tunekit/tunable.py runs the workers.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "errors.hpp"
#include "tunekit/core/env.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/distributed/offline.hpp"
#include "tunekit/offline/problem_files.hpp"
#include "tunekit/offline/tune_problems.hpp"
#include "tunekit/ops/threading.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

using offline::ProblemOutcome;
using offline::ProblemRef;

/// (op signature, params signature, kind, winner, time ms, note) of one problem.
using OutcomeTuple =
    std::tuple<std::string, std::string, std::string, std::string, double, std::string>;

std::string kind_name(ProblemOutcome::Kind kind) {
  switch (kind) {
    case ProblemOutcome::Kind::kTuned:
      return "tuned";
    case ProblemOutcome::Kind::kCached:
      return "cached";
    case ProblemOutcome::Kind::kFailed:
      break;
  }
  return "failed";
}

std::vector<OutcomeTuple> outcome_tuples(const std::vector<ProblemOutcome>& outcomes) {
  std::vector<OutcomeTuple> out;
  for (const ProblemOutcome& o : outcomes) {
    std::string note = o.note;
    if (o.kind == ProblemOutcome::Kind::kTuned && !o.saved) note = "NOT SAVED: " + note;
    out.emplace_back(o.op_signature, o.params_signature, kind_name(o.kind), o.winner, o.time_ms,
                     note);
  }
  return out;
}

/// Called by tune_problems before each problem (without the GIL): a pending Ctrl-C (or another
/// signal Python handles) ends the tuning there, as KeyboardInterrupt; the results found so far
/// are already in the results file.
void check_signals(std::size_t, std::size_t, const std::string&) {
  nb::gil_scoped_acquire locked;
  if (PyErr_CheckSignals() != 0) throw nb::python_error();
}

/// The problems of the files `patterns` match (parsed, deduplicated, in file order) and one
/// message per line that cannot be tuned here. Errors: a pattern matching nothing, an unreadable
/// file.
std::tuple<std::vector<ops::GemmParams>, std::vector<std::string>> read_problems(
    const std::vector<std::string>& patterns) {
  auto files = offline::expand_file_patterns(patterns);
  if (!files) raise(files.status());
  offline::GemmProblemSet set;
  for (const std::string& f : *files) check(offline::read_gemm_problems(f, set));
  std::vector<ops::GemmParams> problems;
  for (const offline::GemmProblem& p : set.problems) problems.push_back(p.params);
  std::vector<std::string> skipped;
  for (const offline::SkippedProblem& s : set.skipped) skipped.push_back(s.reason.message());
  return {std::move(problems), std::move(skipped)};
}

/// tune_gemm_in_file(filename): every problem of the file tuned in this process with the GEMM
/// op (a result already held is kept), each winner appended to the results file as it is found.
/// Returns (outcomes, messages of skipped lines).
/// `finished` (when not None) is called after each problem with (index, total, outcome tuple).
std::tuple<std::vector<OutcomeTuple>, std::vector<std::string>> tune_gemm_in_file(
    const std::string& filename, nb::object finished) {
  TuningContext& ctx = tuning_context();
  if (!ctx.is_enabled() || !ctx.is_tuning_enabled()) {
    raise(Status(StatusCode::kInvalidArgument,
                 "tune_gemm_in_file needs TunableOp and tuning enabled (tunekit.tunable.enable(), "
                 "tuning_enable(); TUNEKIT_ENABLED / TUNEKIT_TUNING win over them)"));
  }
  if (ctx.is_record_untuned_enabled()) {
    raise(Status(StatusCode::kInvalidArgument,
                 "tune_gemm_in_file would keep no result while untuned problems are recorded: "
                 "record_untuned_enable(False) first (TUNEKIT_RECORD_UNTUNED wins over it)"));
  }
  auto [problems, skipped] = read_problems({filename});
  GemmTunableOp& op = active_gemm_op();  // a runtime's Default (tunekit.torch) when installed
  distributed::WorkerReport report;
  {
    nb::gil_scoped_release unlocked;
    ctx.ensure_results_loaded();
    offline::FinishedFn after;
    if (!finished.is_none()) {
      after = [&finished](std::size_t i, std::size_t n, const ProblemOutcome& o) {
        nb::gil_scoped_acquire locked;
        finished(i, n, outcome_tuples({o}).front());
      };
    }
    report = offline::tune_problems(op, problems, ctx.device_ordinal(), &check_signals, after);
  }
  return {outcome_tuples(report.outcomes), std::move(skipped)};
}

/// The problems of mgpu_tune_gemm_in_file's pattern, in the wire form workers read.
/// Returns (wire, problem count, messages of skipped lines).
std::tuple<std::string, std::size_t, std::vector<std::string>> read_problems_wire(
    const std::string& pattern) {
  auto [problems, skipped] = read_problems({pattern});
  std::vector<ProblemRef> refs;
  for (const ops::GemmParams& p : problems) refs.push_back(offline::problem_ref(p));
  return {distributed::encode_problems(refs), problems.size(), std::move(skipped)};
}

/// Sets up this worker process (rank of ranks) as the CLI's workers do: its results file is
/// base with its ordinal inserted, its threads its share of the cores, TunableOp and tuning on;
/// the gathered _full0 file is read too when it exists.
void setup_worker(int rank, int ranks, const std::string& base) {
  TuningContext& ctx = tuning_context();
  if (!env::get_string("TUNEKIT_THREADS")) {
    ctx.set_threads(std::max(1, hw::cpu().usable_cores / std::max(1, ranks)));
  }
  ctx.set_threads(ops::set_num_threads(ctx.threads()));
  ctx.set_device_ordinal(rank);
  ctx.set_filename(base, /*insert_device_ordinal=*/true);
  ctx.enable(true);
  ctx.enable_tuning(true);
  if (!ctx.is_enabled() || !ctx.is_tuning_enabled() || ctx.is_record_untuned_enabled()) {
    raise(Status(StatusCode::kInvalidArgument,
                 "mgpu_tune_gemm_in_file: a worker needs TunableOp and tuning on and untuned "
                 "recording off (TUNEKIT_ENABLED, TUNEKIT_TUNING, TUNEKIT_RECORD_UNTUNED)"));
  }
  register_all_gemm_validators(ctx);  // before any file is read
  Status read = ctx.read_file(ctx.filename());
  if (!read.is_ok() && read.code() != StatusCode::kNotFound) raise(std::move(read));
  Status full = ctx.read_file(distributed::full_results_name(base, 0));
  (void)full;  // a missing or other-environment _full0 file is not this worker's business
}

/// One worker of mgpu_tune_gemm_in_file: tunes the round-robin share `rank` of `ranks` and
/// returns its report in the wire form (distributed::encode). A setup failure is the report's
/// status, so the gathering process names it.
std::string tune_worker(const std::string& problems_wire, int rank, int ranks,
                        const std::string& base) {
  distributed::WorkerReport report;
  report.rank = rank;
  auto refs = distributed::decode_problems(problems_wire);
  if (!refs) raise(refs.status());
  auto problems = offline::parse_problems(*refs);
  if (!problems) raise(problems.status());
  try {
    setup_worker(rank, ranks, base);
    std::vector<ops::GemmParams> share;
    for (std::size_t i : distributed::round_robin_share(problems->size(), ranks, rank)) {
      share.push_back((*problems)[i]);
    }
    nb::gil_scoped_release unlocked;
    report = offline::tune_problems(gemm_op(), share, rank, &check_signals);
  } catch (const StatusError& e) {
    report.status = e.status();
  } catch (const tunekit::Error& e) {
    report.status = e.status();
  }
  return distributed::encode(report);
}

/// Gathers the workers' reports (wire form; an empty string for a worker that sent none) into
/// full_results_name(base, i) for i < ranks. Returns (written files, one message per failed or
/// mismatched worker, every outcome).
std::tuple<std::vector<std::string>, std::vector<std::string>, std::vector<OutcomeTuple>> gather(
    const std::vector<std::string>& wires, const std::string& problems_wire,
    const std::string& base) {
  auto problems = distributed::decode_problems(problems_wire);
  if (!problems) raise(problems.status());
  const int ranks = static_cast<int>(wires.size());
  std::vector<distributed::WorkerReport> reports;
  for (int r = 0; r < ranks; ++r) {
    auto decoded = distributed::decode_report(wires[static_cast<std::size_t>(r)]);
    distributed::WorkerReport report;
    if (decoded) {
      report = std::move(*decoded);
    } else {
      report.rank = r;
      report.status =
          Status(StatusCode::kRuntimeError, "worker " + std::to_string(r) + " sent no report");
    }
    reports.push_back(std::move(report));
  }
  distributed::GatherSummary summary =
      distributed::gather_reports(std::move(reports), *problems, ranks);
  std::vector<std::string> written;
  check(distributed::write_full_files(base, ranks, summary, &written));
  return {std::move(written), summary.messages, outcome_tuples(summary.outcomes)};
}

}  // namespace

void bind_offline(nb::module_& m) {
  nb::module_ o = m.def_submodule("offline", "offline tuning (see tunekit.tunable)");
  o.def("tune_gemm_in_file", &tune_gemm_in_file, nb::arg("filename"),
        nb::arg("finished") = nb::none());
  o.def("read_problems", &read_problems_wire, nb::arg("pattern"));
  o.def("tune_worker", &tune_worker, nb::arg("problems"), nb::arg("rank"), nb::arg("ranks"),
        nb::arg("base"));
  o.def("gather", &gather, nb::arg("reports"), nb::arg("problems"), nb::arg("base"));
  o.def("device_count", [] { return hw::cpu().usable_cores; });
  o.def("worker_results_name", [](const std::string& base, int rank) {
    return distributed::worker_results_name(base, rank);
  });
  o.def("default_results_base", [] { return std::string(kDefaultResultsFilename); });
}

}  // namespace tunekit::python
