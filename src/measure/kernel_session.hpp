// The state both kernel runners measure configurations with: a backend prepared on pristine
// arguments, the reference outputs and the verification rule. Lives in the tuning process
// (in-process runner) or in the worker (isolated runner, trials in forked children).
#pragma once

#include <cfenv>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "measure/verify_function.hpp"
#include "tunekit/measure/argument_buffers.hpp"
#include "tunekit/measure/kernel_backend.hpp"
#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/kernel_runner.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit::measure {

/// How a session verifies: which reference, with what tolerance.
struct SessionVerify {
  /// kNone: no check; kFirstValid: the first error-free trial's outputs become the reference;
  /// kConfig/kKernel: the reference is established by reference_trial() before any trial.
  VerifyRule::Reference reference = VerifyRule::Reference::kFirstValid;
  double atol = 1e-6;
  double rtol = 1e-5;
  /// A built user verification function and its entry (VerifyRule::function), used instead of
  /// the atol/rtol comparison; empty: none.
  std::string function_artifact;
  std::string function_entry;
};

/// The SessionVerify of a runner's options (rule, tolerances, the built verification function).
SessionVerify session_verify_of(const RunnerOptions& options);

/// Outcome of one trial in a session.
struct TrialOutcome {
  MeasureResult result;   ///< costs_s, error_no, error_msg
  bool captured = false;  ///< the trial's outputs were written into the reference buffers
};

/// A prepared backend plus pristine arguments and reference outputs.
class KernelSession {
 public:
  /// Allocates and fills the arguments and prepares `language`'s backend on them. The reference
  /// buffers are MAP_SHARED when `shared_reference` (trials in forked children write them).
  /// The pristine arguments, the reference and the verification buffers stay read-only from
  /// here on, except while a trial copies outputs into them (TrialCheck): a kernel writing to
  /// them faults. The calling thread's floating-point environment is saved here and restored
  /// before and after every trial.
  /// Errors: those of make_kernel_backend, ArgumentBuffers::allocate, KernelBackend::prepare and
  ///   VerifyFunction::load (a verification function that does not load).
  static Expected<std::unique_ptr<KernelSession>> create(
      KernelLanguage language, const KernelProblem& problem, const KernelTiming& timing,
      const SessionVerify& verify, bool shared_reference, const LaunchGeometry& launch = {});

  /// True when trials may run in forked children (see KernelBackend::fork_per_trial).
  bool fork_per_trial() const { return backend_->fork_per_trial(); }

  /// Loads `artifact`, restores the launch buffers to the pristine arguments when `restore`
  /// (false only in a forked child, whose copy-on-write memory is pristine already) and
  /// measures it: verified against the reference, or captured as the reference when the rule
  /// is kFirstValid and none is held yet. A trial that captured must be confirmed with
  /// mark_reference() by the process holding the session.
  TrialOutcome trial(const std::string& artifact, const std::string& entry,
                     const nlohmann::json& params, bool restore);

  /// Runs `artifact`'s `entry` once on pristine arguments and captures its outputs as the
  /// reference (kConfig, kKernel). Confirm with mark_reference() on success.
  TrialOutcome reference_trial(const std::string& artifact, const std::string& entry,
                               const nlohmann::json& params, bool restore);

  /// The reference buffers hold a valid reference from now on.
  void mark_reference() noexcept { has_reference_ = true; }
  bool has_reference() const noexcept { return has_reference_; }

 private:
  KernelSession() = default;
  TrialOutcome run(const std::string& artifact, const std::string& entry,
                   const nlohmann::json& params, bool restore, const KernelTiming& timing,
                   bool capture);
  /// run() once the floating-point environment is restored.
  TrialOutcome run_restored(const std::string& artifact, const std::string& entry,
                            const nlohmann::json& params, bool restore, const KernelTiming& timing,
                            bool capture);

  std::unique_ptr<KernelBackend> backend_;
  KernelTiming timing_;
  SessionVerify verify_;
  ArgumentBuffers pristine_;
  ArgumentBuffers reference_;
  ArgumentBuffers scratch_;
  std::optional<VerifyFunction> function_;
  std::fenv_t fp_environment_{};  ///< the calling thread's, when the session was created
  bool has_reference_ = false;
};

/// A configuration's parameters as {"name": value} (from its AutoTVM entity list).
nlohmann::json config_params(const Config& config);

}  // namespace tunekit::measure
