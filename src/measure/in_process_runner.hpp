// The in-process kernel runner: configurations run in the calling process (trusted kernels;
// a crash or a hang of the kernel is one of the process).
#pragma once

#include <memory>
#include <string>

#include "measure/kernel_runner_base.hpp"
#include "measure/kernel_session.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit::measure {

/// Runs each configuration in the calling process, inputs restored before each one.
/// timeout_s is not enforced (nothing can stop a call in progress).
class InProcessRunner final : public KernelRunnerBase {
 public:
  /// Prepares the session and, for kConfig/kKernel, measures the reference artefact
  /// (options.reference_artifact).
  /// Errors: those of KernelSession::create; kInvalidArgument without a reference artefact
  /// where the rule needs one; kRuntimeError when the reference fails.
  static Expected<std::shared_ptr<InProcessRunner>> create(const KernelSource& source,
                                                           const KernelProblem& problem,
                                                           const RunnerOptions& options);

 protected:
  MeasureResult measure_one(const MeasureInput& input, const BuildResult& build) override;

 private:
  InProcessRunner() = default;
  std::unique_ptr<KernelSession> session_;
  std::string entry_;
};

}  // namespace tunekit::measure
