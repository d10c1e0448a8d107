// A prepared kernel backend with pristine arguments and reference outputs.
// See src/measure/kernel_session.hpp.
#include "measure/kernel_session.hpp"

#include <cfenv>
#include <utility>

#include "measure/kernel_trial.hpp"

namespace tunekit::measure {
namespace {

TrialOutcome failed(MeasureErrorNo code, const Status& status) {
  TrialOutcome out;
  out.result.error_no = code;
  out.result.error_msg = status.message();
  return out;
}

}  // namespace

Expected<std::unique_ptr<KernelSession>> KernelSession::create(
    KernelLanguage language, const KernelProblem& problem, const KernelTiming& timing,
    const SessionVerify& verify, bool shared_reference, const LaunchGeometry& launch) {
  std::unique_ptr<KernelSession> session(new KernelSession());
  session->timing_ = timing;
  session->verify_ = verify;
  auto backend = make_kernel_backend(language, problem, launch);
  if (!backend) return backend.status();
  session->backend_ = std::move(*backend);
  using Sharing = ArgumentBuffers::Sharing;
  auto pristine = ArgumentBuffers::allocate(problem);
  if (!pristine) return pristine.status();
  session->pristine_ = std::move(*pristine);
  session->pristine_.fill();
  auto reference =
      ArgumentBuffers::allocate(problem, shared_reference ? Sharing::kShared : Sharing::kPrivate);
  if (!reference) return reference.status();
  session->reference_ = std::move(*reference);
  auto scratch = ArgumentBuffers::allocate(problem);
  if (!scratch) return scratch.status();
  session->scratch_ = std::move(*scratch);
  session->scratch_.fill();  // the verification function sees pristine inputs beside the outputs
  if (!verify.function_entry.empty()) {
    auto function = VerifyFunction::load(verify.function_artifact, verify.function_entry);
    if (!function) return function.status();
    session->function_ = std::move(*function);
  }
  TUNEKIT_RETURN_IF_ERROR(session->backend_->prepare(session->pristine_));
  TUNEKIT_RETURN_IF_ERROR(session->pristine_.make_read_only());
  TUNEKIT_RETURN_IF_ERROR(session->reference_.make_read_only());
  TUNEKIT_RETURN_IF_ERROR(session->scratch_.make_read_only());
  std::fegetenv(&session->fp_environment_);
  return session;
}

TrialOutcome KernelSession::trial(const std::string& artifact, const std::string& entry,
                                  const nlohmann::json& params, bool restore) {
  const bool capture = verify_.reference == VerifyRule::Reference::kFirstValid && !has_reference_;
  return run(artifact, entry, params, restore, timing_, capture);
}

TrialOutcome KernelSession::reference_trial(const std::string& artifact, const std::string& entry,
                                            const nlohmann::json& params, bool restore) {
  KernelTiming once;
  once.number = 1;
  once.repeat = 1;
  once.warmup = 1;
  once.timeout_s = timing_.timeout_s;
  return run(artifact, entry, params, restore, once, /*capture=*/true);
}

TrialOutcome KernelSession::run(const std::string& artifact, const std::string& entry,
                                const nlohmann::json& params, bool restore,
                                const KernelTiming& timing, bool capture) {
  // Rounding mode, FTZ/DAZ and exception masks a configuration set (a -ffast-math shared
  // object sets FTZ/DAZ when loaded) do not reach the next one, nor the tuning process.
  std::fesetenv(&fp_environment_);
  TrialOutcome out = run_restored(artifact, entry, params, restore, timing, capture);
  std::fesetenv(&fp_environment_);
  return out;
}

TrialOutcome KernelSession::run_restored(const std::string& artifact, const std::string& entry,
                                         const nlohmann::json& params, bool restore,
                                         const KernelTiming& timing, bool capture) {
  Status status = backend_->load(artifact, entry, params);
  if (!status.is_ok()) return failed(MeasureErrorNo::kRuntimeDevice, status);
  if (restore) {
    status = backend_->restore(pristine_, /*outputs_only=*/false);
    if (!status.is_ok()) return failed(MeasureErrorNo::kRuntimeDevice, status);
  }
  TrialCheck check;
  check.atol = verify_.atol;
  check.rtol = verify_.rtol;
  check.scratch = &scratch_;
  if (capture) check.capture = &reference_;
  const bool compare = verify_.reference != VerifyRule::Reference::kNone && has_reference_;
  if (compare && !capture) check.reference = &reference_;
  if (function_) check.function = &*function_;
  TrialOutcome out;
  out.result = run_kernel_trial(*backend_, timing, check);
  out.captured = capture && out.result.error_no == MeasureErrorNo::kNoError;
  return out;
}

SessionVerify session_verify_of(const RunnerOptions& options) {
  SessionVerify verify;
  verify.reference = options.verify.reference;
  verify.atol = options.verify.atol;
  verify.rtol = options.verify.rtol;
  if (!options.verify.function.entry.empty()) {
    verify.function_artifact = options.verify_artifact;
    verify.function_entry = options.verify.function.entry;
  }
  return verify;
}

nlohmann::json config_params(const Config& config) {
  nlohmann::json params = nlohmann::json::object();
  if (config.space() == nullptr) return params;
  const nlohmann::json entity = config.to_json().value("entity", nlohmann::json::array());
  for (const nlohmann::json& knob : entity) {
    if (knob.is_array() && knob.size() == 3 && knob[0].is_string()) {
      params[knob[0].get<std::string>()] = knob[2];
    }
  }
  return params;
}

}  // namespace tunekit::measure
