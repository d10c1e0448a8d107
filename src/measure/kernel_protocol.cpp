// JSON forms of the kernel worker's messages. See src/measure/kernel_protocol.hpp.
#include "measure/kernel_protocol.hpp"

#include <string>

namespace tunekit::measure {
namespace {

nlohmann::json argument_to_json(const KernelArgument& arg) {
  return {{"name", arg.name},
          {"dtype", std::string(to_string(arg.dtype))},
          {"scalar", arg.is_scalar},
          {"value", arg.scalar_value},
          {"size", arg.size},
          {"fill", static_cast<int>(arg.fill.kind)},
          {"fill_value", arg.fill.value},
          {"fill_path", arg.fill.path},
          {"output", arg.is_output}};
}

Expected<KernelArgument> argument_from_json(const nlohmann::json& json) {
  KernelArgument arg;
  try {
    arg.name = json.at("name").get<std::string>();
    auto dtype = arg_dtype_from_string(json.at("dtype").get<std::string>());
    if (!dtype) return dtype.status();
    arg.dtype = *dtype;
    arg.is_scalar = json.at("scalar").get<bool>();
    arg.scalar_value = json.at("value").get<double>();
    arg.size = json.at("size").get<std::size_t>();
    arg.fill.kind = static_cast<FillKind>(json.at("fill").get<int>());
    arg.fill.value = json.at("fill_value").get<double>();
    arg.fill.path = json.value("fill_path", std::string());
    arg.is_output = json.at("output").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kParseError, std::string("kernel argument message: ") + e.what());
  }
  return arg;
}

}  // namespace

nlohmann::json problem_to_json(const KernelProblem& problem) {
  nlohmann::json args = nlohmann::json::array();
  for (const KernelArgument& arg : problem.arguments) args.push_back(argument_to_json(arg));
  return {{"seed", problem.seed}, {"arguments", std::move(args)}};
}

Expected<KernelProblem> problem_from_json(const nlohmann::json& json) {
  KernelProblem problem;
  if (!json.is_object() || !json.contains("arguments") || !json["arguments"].is_array()) {
    return Status(StatusCode::kParseError, "kernel problem message lacks 'arguments'");
  }
  problem.seed = json.value("seed", std::uint64_t{0});
  for (const nlohmann::json& item : json["arguments"]) {
    auto arg = argument_from_json(item);
    if (!arg) return arg.status();
    problem.arguments.push_back(std::move(*arg));
  }
  return problem;
}

nlohmann::json timing_to_json(const KernelTiming& t) {
  return {
      {"number", t.number},      {"repeat", t.repeat},         {"min_repeat_ms", t.min_repeat_ms},
      {"warmup", t.warmup},      {"cooldown_s", t.cooldown_s}, {"flush_cache", t.flush_cache},
      {"timeout_s", t.timeout_s}};
}

KernelTiming timing_from_json(const nlohmann::json& json) {
  KernelTiming t;
  t.number = json.value("number", t.number);
  t.repeat = json.value("repeat", t.repeat);
  t.min_repeat_ms = json.value("min_repeat_ms", t.min_repeat_ms);
  t.warmup = json.value("warmup", t.warmup);
  t.cooldown_s = json.value("cooldown_s", t.cooldown_s);
  t.flush_cache = json.value("flush_cache", t.flush_cache);
  t.timeout_s = json.value("timeout_s", t.timeout_s);
  return t;
}

nlohmann::json verify_to_json(const SessionVerify& verify) {
  return {{"reference", static_cast<int>(verify.reference)},
          {"atol", verify.atol},
          {"rtol", verify.rtol},
          {"function_artifact", verify.function_artifact},
          {"function_entry", verify.function_entry}};
}

SessionVerify verify_from_json(const nlohmann::json& json) {
  SessionVerify v;
  v.reference = static_cast<VerifyRule::Reference>(json.value("reference", 1));
  v.atol = json.value("atol", v.atol);
  v.rtol = json.value("rtol", v.rtol);
  v.function_artifact = json.value("function_artifact", std::string());
  v.function_entry = json.value("function_entry", std::string());
  return v;
}

nlohmann::json outcome_to_json(const TrialOutcome& outcome) {
  return {{"error_no", static_cast<int>(outcome.result.error_no)},
          {"error", outcome.result.error_msg},
          {"costs", outcome.result.costs_s},
          {"captured", outcome.captured}};
}

Expected<TrialOutcome> outcome_from_json(const nlohmann::json& json) {
  TrialOutcome out;
  try {
    out.result.error_no = measure_error_from_int(json.at("error_no").get<int>());
    out.result.error_msg = json.at("error").get<std::string>();
    out.result.costs_s = json.at("costs").get<std::vector<double>>();
    out.captured = json.at("captured").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kParseError, std::string("trial result message: ") + e.what());
  }
  return out;
}

}  // namespace tunekit::measure
