// Typed reading of kernel spec fields with one-line errors naming the file and the field.
#include "spec_fields.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tunekit/space/expression.hpp"

namespace tunekit::kernel_detail {

std::string_view json_kind(const Json& value) noexcept {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "a list";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    default:
      return "a number";
  }
}

Status SpecFields::bad(std::string_view field, std::string_view what, StatusCode code) const {
  if (field.empty()) return Status(code, fmt::format("{}: {}", file_, what));
  return Status(code, fmt::format("{}: {}: {}", file_, field, what));
}

Status SpecFields::wrap(std::string_view field, const Status& status) const {
  return bad(field, status.message(), status.code());
}

Status SpecFields::only_keys(const Json& object, std::initializer_list<std::string_view> accepted,
                             std::string_view field) const {
  if (!object.is_object()) {
    return bad(field, fmt::format("expected an object, got {}", json_kind(object)));
  }
  for (const auto& [key, value] : object.items()) {
    if (std::find(accepted.begin(), accepted.end(), key) != accepted.end()) continue;
    std::string list;
    for (auto a : accepted) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
    return bad(field, fmt::format("unknown key \"{}\" (accepted: {})", key, list));
  }
  return Status::ok();
}

Expected<std::string> SpecFields::string(const Json& value, std::string_view field) const {
  if (!value.is_string()) {
    return bad(field, fmt::format("expected a string, got {}", json_kind(value)));
  }
  return value.get<std::string>();
}

Expected<bool> SpecFields::boolean(const Json& value, std::string_view field) const {
  if (!value.is_boolean()) {
    return bad(field, fmt::format("expected true or false, got {}", json_kind(value)));
  }
  return value.get<bool>();
}

Expected<double> SpecFields::number(const Json& value, std::string_view field, double min) const {
  if (!value.is_number()) {
    return bad(field, fmt::format("expected a number, got {}", json_kind(value)));
  }
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < min) {
    return bad(field, fmt::format("{} is out of range (at least {})", value.dump(), min));
  }
  return x;
}

Expected<std::int64_t> SpecFields::integer(const Json& value, std::string_view field,
                                           std::int64_t min, std::int64_t max) const {
  if (!value.is_number()) {
    return bad(field, fmt::format("expected a whole number, got {}", json_kind(value)));
  }
  const double x = value.get<double>();
  if (!std::isfinite(x) || x != std::floor(x)) {
    return bad(field, fmt::format("{} is not a whole number", value.dump()));
  }
  if (x < static_cast<double>(min) || x > static_cast<double>(max)) {
    return bad(field, fmt::format("{} is out of range [{}, {}]", value.dump(), min, max));
  }
  if (value.is_number_unsigned()) return static_cast<std::int64_t>(value.get<std::uint64_t>());
  if (value.is_number_integer()) return value.get<std::int64_t>();
  return static_cast<std::int64_t>(x);
}

Expected<std::vector<std::string>> SpecFields::strings(const Json& value,
                                                       std::string_view field) const {
  if (!value.is_array()) {
    return bad(field, fmt::format("expected a list of strings, got {}", json_kind(value)));
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    auto s = string(value[i], fmt::format("{}[{}]", field, i));
    if (!s) return s.status();
    out.push_back(std::move(*s));
  }
  return out;
}

Expected<double> SpecFields::scalar_expression(const Json& value, std::string_view field,
                                               const ScalarValues& scalars) const {
  if (value.is_number()) return number(value, field, -std::numeric_limits<double>::max());
  if (!value.is_string()) {
    return bad(field, fmt::format("expected a number or an expression, got {}", json_kind(value)));
  }
  const std::string text = value.get<std::string>();
  auto expr = Expression::parse(text);
  if (!expr) return wrap(field, expr.status());
  std::vector<ExprValue> slots;
  for (const std::string& name : expr->variables()) {
    const auto it = scalars.find(name);
    if (it == scalars.end()) {
      return bad(field, fmt::format("unknown name '{}' in '{}' (scalar arguments may be named)",
                                    name, text));
    }
    slots.push_back(ExprValue::of(it->second));
  }
  auto result = expr->evaluate(slots);
  if (!result) return wrap(field, result.status());
  if (!result->is_number() || !std::isfinite(result->number)) {
    return bad(field, fmt::format("'{}' is not a finite number", text));
  }
  return result->number;
}

Status SpecFields::check_names(const std::string& text, std::string_view field,
                               const std::vector<std::string>& known) const {
  auto expr = Expression::parse(text);
  if (!expr) return wrap(field, expr.status());
  for (const std::string& name : expr->variables()) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return bad(field, fmt::format("unknown name '{}' in '{}'", name, text));
    }
  }
  return Status::ok();
}

}  // namespace tunekit::kernel_detail
