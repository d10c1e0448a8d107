// One measurement of a loaded kernel configuration: check call, verification, warmup and timed
// repeats as KernelTiming says (AutoTVM LocalRunner semantics). Shared by both runners.
#pragma once

#include "measure/verify_function.hpp"
#include "tunekit/measure/argument_buffers.hpp"
#include "tunekit/measure/kernel_backend.hpp"
#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit::measure {

/// What a trial does with the outputs of its first call (made on freshly reset outputs).
/// The host buffers named here are read-only (ArgumentBuffers::make_read_only) whenever the
/// kernel runs: the trial makes `capture` and `scratch` writable only while it copies outputs
/// into them (and verifies), so a kernel writing to them faults instead of corrupting them.
struct TrialCheck {
  /// Outputs are compared with this one's (null: no comparison).
  const ArgumentBuffers* reference = nullptr;
  /// Outputs are copied into this one (the trial establishes the reference); null: not kept.
  ArgumentBuffers* capture = nullptr;
  /// Host buffers the outputs are read into for the comparison (needed with `reference`).
  ArgumentBuffers* scratch = nullptr;
  double atol = 1e-6;
  double rtol = 1e-5;
  /// A user verification function used instead of the atol/rtol comparison (needs `scratch`;
  /// `reference` is passed to it when set). Null: none.
  const VerifyFunction* function = nullptr;
};

/// Measures the configuration loaded in `backend`, whose launch buffers hold pristine inputs
/// and reset outputs: one check call (verified by `check`), warmup - 1 more calls, then
/// `repeat` measurements of the mean of `number` calls (number grows by AutoTVM's rule until a
/// measurement lasts min_repeat_ms), cooldown between them, a cache flush before each timed call
/// when asked. Costs: one per repeat, in seconds, min and max dropped when more than two (as
/// AutoTVM's LocalRunner). Sets costs_s, error_no and error_msg only.
/// Errors: kRuntimeDevice when a launch fails, kWrongAnswer when the check fails.
MeasureResult run_kernel_trial(KernelBackend& backend, const KernelTiming& timing,
                               const TrialCheck& check);

}  // namespace tunekit::measure
