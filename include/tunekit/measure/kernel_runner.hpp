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
  /// A worker process that runs every C/C++ trial in a child forked for it (copy-on-write
  /// pristine arguments): crashes, hangs and exits are failed trials, and no trial can change
  /// the memory or process state later trials run in.
  kProcess,
  /// The default: a warm worker process that runs the trials itself (as OpenCL and CUDA trials
  /// always run) and is replaced after one crashes, hangs or exits and, for C/C++, after any
  /// failed trial. The tuning process is as safe as with kProcess and a trial costs no fork or
  /// cold start (thread pools, page faults, the kernel's first call). The runner's copies of
  /// the arguments and the reference are read-only while kernels run; what a kernel that
  /// passes its check changes elsewhere in the worker (its heap, a library's state, the
  /// environment) can still affect the trials after it in the same worker.
  kWorker,
  kInProcess,  ///< the calling process: cheapest, for trusted kernels only
};

/// Options of a kernel runner.
struct RunnerOptions {
  Isolation isolation = Isolation::kWorker;
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
