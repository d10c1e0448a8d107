// Runners of built kernel configurations: isolated in a worker process (default) or in the
// calling process (trusted kernels), both timing and verifying as the problem says.
#pragma once

#include <memory>
#include <string>

#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit {

/// Where configurations run.
enum class Isolation : std::uint8_t {
  kProcess,    ///< a worker process: crashes, hangs and exits are failed trials
  kInProcess,  ///< the calling process: cheapest, for trusted kernels only
};

/// Options of a kernel runner.
struct RunnerOptions {
  Isolation isolation = Isolation::kProcess;
  KernelTiming timing;
  VerifyRule verify;
  /// Built artefact of the reference (VerifyRule kConfig: the configuration reference_params;
  /// kKernel: reference_source); run once before the first trial. Unused by other rules.
  std::string reference_artifact;
  /// The worker program of isolated runs; empty = find_kernel_worker().
  std::string worker_path;
  /// The built user verification function (VerifyRule::function), loaded by the runner; empty
  /// when the rule has none.
  std::string verify_artifact;
};

/// Path of the `tunekit-kernel-worker` program: $TUNEKIT_KERNEL_WORKER, else the file of that
/// name next to the library holding tunekit (dladdr), else <libexecdir>/tunekit/ of the
/// installation (relative to the library). Errors: kNotFound listing the places tried.
Expected<std::string> find_kernel_worker();

/// A runner measuring the artefacts of `source`'s builder on `problem`.
/// Runners take the artefact from BuildResult::artifact (C/C++: a shared object) and the
/// configuration from the MeasureInput; a failed BuildResult comes back as the result.
/// Errors: kUnsupported when the language's runtime is absent from this build; kNotFound when
/// the worker program cannot be found (isolated runs; $TUNEKIT_KERNEL_WORKER names it);
/// kInvalidArgument when kConfig/kKernel verification lacks reference_artifact; kRuntimeError
/// when the reference fails.
Expected<std::shared_ptr<Runner>> make_kernel_runner(const KernelSource& source,
                                                     const KernelProblem& problem,
                                                     const RunnerOptions& options);

}  // namespace tunekit
