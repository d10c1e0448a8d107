// Typed reading of the fields of a kernel spec: each getter checks the JSON type and range and
// words its error as one line "<file>: <field>: <what>".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit::kernel_detail {

using Json = nlohmann::ordered_json;

/// Values of the scalar arguments by name, for size and FLOP expressions.
using ScalarValues = std::map<std::string, double, std::less<>>;

/// Reads fields of one spec file; every error names the file and the field.
class SpecFields {
 public:
  /// Messages start with `file` ("kernel spec" when empty).
  explicit SpecFields(std::string file) : file_(file.empty() ? "kernel spec" : std::move(file)) {}

  /// kInvalidArgument "<file>: <field>: <what>" (no field part when `field` is empty).
  Status bad(std::string_view field, std::string_view what,
             StatusCode code = StatusCode::kInvalidArgument) const;
  /// The error of `status` prefixed with "<file>: <field>: ".
  Status wrap(std::string_view field, const Status& status) const;

  /// Rejects a key outside `accepted` ("unknown key "x" (accepted: "a", "b")"); `object` must
  /// be a JSON object ("expected an object" otherwise).
  Status only_keys(const Json& object, std::initializer_list<std::string_view> accepted,
                   std::string_view field) const;

  Expected<std::string> string(const Json& value, std::string_view field) const;
  Expected<bool> boolean(const Json& value, std::string_view field) const;
  /// A finite number >= `min`.
  Expected<double> number(const Json& value, std::string_view field, double min) const;
  /// A whole number in [min, max] (integral floats accepted).
  Expected<std::int64_t> integer(const Json& value, std::string_view field, std::int64_t min,
                                 std::int64_t max) const;
  /// A list of strings.
  Expected<std::vector<std::string>> strings(const Json& value, std::string_view field) const;
  /// A number, or an Expression over the scalar arguments evaluated to a finite number.
  Expected<double> scalar_expression(const Json& value, std::string_view field,
                                     const ScalarValues& scalars) const;
  /// Checks that `text` parses and names only `known` (launch sizes: parameters and scalars).
  Status check_names(const std::string& text, std::string_view field,
                     const std::vector<std::string>& known) const;

 private:
  std::string file_;
};

/// "a string", "a number", "an object", ... for messages.
std::string_view json_kind(const Json& value) noexcept;

}  // namespace tunekit::kernel_detail
