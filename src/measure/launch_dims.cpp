// Evaluation of LaunchGeometry expressions into the work sizes of one launch.
#include "tunekit/measure/launch_dims.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tunekit/space/expression.hpp"

namespace tunekit {
namespace {

/// Variable values by name: scalar arguments, then parameters (shadowing them).
using Scope = std::map<std::string, ExprValue, std::less<>>;

void add_param(Scope& scope, const std::string& name, const nlohmann::json& value) {
  if (value.is_number()) {
    scope[name] = ExprValue::of(value.get<double>());
  } else if (value.is_boolean()) {
    scope[name] = ExprValue::of(value.get<bool>() ? 1.0 : 0.0);
  } else if (value.is_string()) {
    scope[name] = ExprValue::of(std::string_view(value.get_ref<const std::string&>()));
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      add_param(scope, fmt::format("{}_{}", name, i), value[i]);
    }
  }
}

Scope make_scope(const KernelProblem& problem, const nlohmann::json& params) {
  Scope scope;
  for (const KernelArgument& arg : problem.arguments) {
    if (arg.is_scalar) scope[arg.name] = ExprValue::of(arg.scalar_value);
  }
  if (params.is_object()) {
    for (const auto& [name, value] : params.items()) add_param(scope, name, value);
  }
  return scope;
}

/// One entry as a whole number >= 1.
Expected<std::size_t> evaluate_entry(const std::string& text, const Scope& scope) {
  auto expression = Expression::parse(text);
  if (!expression) return expression.status();
  std::vector<ExprValue> slots;
  for (const std::string& name : expression->variables()) {
    auto it = scope.find(name);
    if (it == scope.end()) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("'{}' is neither a parameter nor a scalar argument", name));
    }
    slots.push_back(it->second);
  }
  auto value = expression->evaluate(slots);
  if (!value) return value.status();
  const double x = value->number;
  if (!value->is_number() || !std::isfinite(x) || x < 1.0 || x != std::floor(x) || x > 1e15) {
    return Status(StatusCode::kInvalidArgument,
                  value->is_number() ? fmt::format("gives {}, not a whole number >= 1", x)
                                     : "gives a string, not a number");
  }
  return static_cast<std::size_t>(x);
}

Status evaluate_list(const char* what, const std::vector<std::string>& entries, const Scope& scope,
                     std::array<std::size_t, 3>& out) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto n = evaluate_entry(entries[i], scope);
    if (!n) {
      return Status(StatusCode::kInvalidArgument, fmt::format("launch {}[{}] '{}': {}", what, i,
                                                              entries[i], n.status().message()));
    }
    out[i] = *n;
  }
  return Status::ok();
}

}  // namespace

std::array<std::size_t, 3> LaunchDims::groups() const noexcept {
  return {global[0] / local[0], global[1] / local[1], global[2] / local[2]};
}

Expected<LaunchDims> evaluate_launch(const LaunchGeometry& geometry, const KernelProblem& problem,
                                     const nlohmann::json& params) {
  const std::size_t dims = geometry.global.size();
  if (dims == 0 || dims > 3) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("launch global has {} entries; 1 to 3 expected", dims));
  }
  if (!geometry.local.empty() && geometry.local.size() != dims) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("launch local has {} entries but global has {}", geometry.local.size(), dims));
  }
  const Scope scope = make_scope(problem, params);
  LaunchDims out;
  out.dims = static_cast<int>(dims);
  out.has_local = !geometry.local.empty();
  TUNEKIT_RETURN_IF_ERROR(evaluate_list("global", geometry.global, scope, out.global));
  TUNEKIT_RETURN_IF_ERROR(evaluate_list("local", geometry.local, scope, out.local));
  for (std::size_t i = 0; i < dims; ++i) {
    out.global[i] = (out.global[i] + out.local[i] - 1) / out.local[i] * out.local[i];
  }
  return out;
}

}  // namespace tunekit
