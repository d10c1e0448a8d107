// The kernel side of remote measurement: what a worker rank measures a configuration of a kernel
// spec with, and how long rank 0 waits for one answer.
#pragma once

#include "tunekit/distributed/remote_runner.hpp"
#include "tunekit/kernel/kernel_spec.hpp"

namespace tunekit::distributed {

/// Builds and runs one configuration (by index of the spec's space) with the spec's own builder,
/// runner and verification on this rank (make_kernel_measure). Every rank parses the same spec,
/// so an index means the same configuration everywhere. With the first-valid reference, each
/// rank checks against the first configuration it ran successfully itself.
/// Errors: make_kernel_measure's (no compiler, no worker program, a reference that does not
///   build), which serve_remote_trials reports to rank 0 as this rank's failure.
Expected<RemoteMeasureFn> local_kernel_measure(const KernelSpec& spec);

/// Seconds rank 0 waits for one trial's answer before it marks the rank failed: the build
/// timeout plus the run timeout plus 30 s for starting the rank's worker.
double remote_reply_timeout_s(const KernelSpec& spec) noexcept;

}  // namespace tunekit::distributed
