// The JSON-lines messages between an isolated kernel runner and its worker: the problem, the
// timing and verification settings, and trial results.
#pragma once

#include <nlohmann/json.hpp>

#include "measure/kernel_session.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit::measure {

/// {"seed": s, "arguments": [{"name", "dtype", "scalar", "value", "size", "fill", "fill_value",
/// "output"}, ...]}.
nlohmann::json problem_to_json(const KernelProblem& problem);
/// Errors: kParseError naming the missing or malformed field.
Expected<KernelProblem> problem_from_json(const nlohmann::json& json);

/// {"number", "repeat", "min_repeat_ms", "warmup", "cooldown_s", "flush_cache", "timeout_s"}.
nlohmann::json timing_to_json(const KernelTiming& timing);
KernelTiming timing_from_json(const nlohmann::json& json);

/// {"reference": 0..3, "atol", "rtol"}.
nlohmann::json verify_to_json(const SessionVerify& verify);
SessionVerify verify_from_json(const nlohmann::json& json);

/// {"error_no": n, "error": text, "costs": [seconds...], "captured": bool}.
nlohmann::json outcome_to_json(const TrialOutcome& outcome);
/// Errors: kParseError for a message that is no trial result.
Expected<TrialOutcome> outcome_from_json(const nlohmann::json& json);

}  // namespace tunekit::measure
