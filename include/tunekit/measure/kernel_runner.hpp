// Runners of built kernel configurations: isolated in a worker process (default) or in the
// calling process (trusted kernels), both timing and verifying as the problem says.
#pragma once

#include <memory>

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
};

/// A runner measuring the artefacts of `source`'s builder on `problem`.
/// Errors: kUnsupported when the language's runtime is absent from this build; kNotFound when
/// the worker program cannot be found (isolated runs; $TUNEKIT_KERNEL_WORKER names it).
Expected<std::shared_ptr<Runner>> make_kernel_runner(const KernelSource& source,
                                                     const KernelProblem& problem,
                                                     const RunnerOptions& options);

}  // namespace tunekit
