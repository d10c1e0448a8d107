// The in-process kernel runner. See src/measure/in_process_runner.hpp.
#include "measure/in_process_runner.hpp"

#include "measure/reference_entry.hpp"

namespace tunekit::measure {

Expected<std::shared_ptr<InProcessRunner>> InProcessRunner::create(const KernelSource& source,
                                                                   const KernelProblem& problem,
                                                                   const RunnerOptions& options) {
  std::shared_ptr<InProcessRunner> runner(new InProcessRunner());
  runner->entry_ = source.entry;
  const SessionVerify verify = session_verify_of(options);
  auto session = KernelSession::create(source.language, problem, options.timing, verify,
                                       /*shared_reference=*/false, source.launch);
  if (!session) return session.status();
  runner->session_ = std::move(*session);
  auto reference = reference_entry(source, options);
  if (!reference) return reference.status();
  if (!reference->artifact.empty()) {
    TrialOutcome out = runner->session_->reference_trial(reference->artifact, reference->entry,
                                                         reference->params, /*restore=*/true);
    if (!out.captured) {
      return Status(StatusCode::kRuntimeError,
                    "the reference kernel failed: " + out.result.error_msg);
    }
    runner->session_->mark_reference();
  }
  return runner;
}

MeasureResult InProcessRunner::measure_one(const MeasureInput& input, const BuildResult& build) {
  TrialOutcome out =
      session_->trial(build.artifact, entry_, config_params(input.config), /*restore=*/true);
  if (out.captured) session_->mark_reference();
  return std::move(out.result);
}

}  // namespace tunekit::measure
