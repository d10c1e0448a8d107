// Typed reads of environment variables with one clear error naming the variable on bad values.
// Unset (or empty) variables read as std::nullopt.
#pragma once

#include <optional>
#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit::env {

/// Raw value, or nullopt when unset or empty.
std::optional<std::string> get_string(const char* name);

/// Booleans: 1/0, true/false, on/off, yes/no (case-insensitive).
/// Errors: kInvalidArgument "TUNEKIT_X: expected a boolean (0/1, true/false, on/off, yes/no), got
/// 'abc'".
Expected<std::optional<bool>> get_bool(const char* name);

/// Decimal integer (optional sign). Errors: kInvalidArgument naming the variable and value.
Expected<std::optional<long long>> get_int(const char* name);

/// Floating point number. Errors: kInvalidArgument naming the variable and value.
Expected<std::optional<double>> get_double(const char* name);

/// Parses a boolean word; nullopt if it is not one.
std::optional<bool> parse_bool(const std::string& text);
/// Parses a whole string as a decimal integer; nullopt otherwise.
std::optional<long long> parse_int(const std::string& text);
/// Parses a whole string as a double; nullopt otherwise.
std::optional<double> parse_double(const std::string& text);

}  // namespace tunekit::env
