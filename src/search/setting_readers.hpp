// Typed, range-checked readers of one strategy setting in a JSON object, shared by make_strategy
// and AutoSettings::from_json so that every bad value is reported the same way, naming its key.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tunekit/core/status.hpp"

namespace tunekit::setting {

/// A value of the wrong type or out of range. what() completes the sentence
/// "<strategy>: setting '<key>' ..." (for example "must be a number in (0, 1]").
struct BadSetting : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// Largest value an unbounded count accepts.
inline constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();

/// A JSON integer in [lo, hi] (a fraction such as 64.5, a string or a negative number is not
/// one). Errors: BadSetting ("must be a non-negative integer", "must be an integer in [1, 64]").
std::uint64_t integer_in(const nlohmann::json& v, std::uint64_t lo, std::uint64_t hi = kNoLimit);

/// Which ends of a number interval are excluded.
enum class Open { kNone, kLow, kHigh, kBoth };

/// A finite JSON number in the interval lo..hi (`open` excludes ends; lo may be -infinity when
/// hi is +infinity, and hi may be +infinity). Errors: BadSetting ("must be a number in (0, 1]",
/// "must be a number >= 0", "must be a finite number").
double number_in(const nlohmann::json& v, double lo, double hi, Open open = Open::kNone);

/// A JSON boolean. Errors: BadSetting ("must be true or false").
bool boolean(const nlohmann::json& v);

/// A JSON string equal to one of `choices`. Errors: BadSetting ("must be pool or pack").
std::string one_of(const nlohmann::json& v, std::initializer_list<std::string_view> choices);

/// `key` for an error message: control characters (a NUL, a newline, an escape) written as
/// JSON escapes (\u0000), so the message stays one line and is not cut short.
std::string printable_key(std::string_view key);

/// The kInvalidArgument status of a bad setting: "<strategy>: setting '<key>' <what>".
Status error(std::string_view strategy, std::string_view key, std::string_view what);

}  // namespace tunekit::setting
