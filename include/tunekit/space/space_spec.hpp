// Config spaces defined by data: a JSON spec of parameter value lists plus restriction strings.
// Lets the CLI and the replay runner build spaces without C++ code (Kernel Tuner's tune_params).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tunekit/core/status.hpp"
#include "tunekit/space/config_space.hpp"

namespace tunekit {

/// Builds a space from a JSON spec. Accepted shapes (parameter order = definition order):
/// ```
/// {"parameters": {"block_size_x": [16, 32, 64], "block_size_y": {"range": [1, 9, 1]},
///                 "tile": {"power2": [1, 8]}},
///  "restrictions": ["block_size_x*block_size_y<=1024", "tile <= block_size_y"]}
/// {"parameters": [{"name": "block_size_x", "values": [16, 32]}, ...], "restrictions": [...]}
/// {"tune_params": {...}, "tune_params_keys": [...], "restrictions": [...]}   (Kernel Tuner)
/// ```
/// Values are JSON numbers, booleans or strings, each listed once; `range` is [begin, end) with
/// an optional step (integers, Python range semantics); `power2` is [min, max] (integers).
/// Each restriction is an Expression over parameter names. The object form keeps file order only
/// when parsed with nlohmann::ordered_json (load_space_spec does); from a plain nlohmann::json the
/// keys come sorted, so pass "tune_params_keys" or a list.
/// Limits: a range or power2 knob holds at most kMaxSpecKnobValues values (counted before any
///   is built). When the product of the value counts is at most kMaxCheckedSpecPoints, the
///   valid points are counted at once (which also fills ConfigSpace::valid_count()'s cache);
///   a larger space whose restrictions exclude every point loads, and its emptiness shows when
///   a strategy draws (ConfigSpace::random_valid returns kNotFound).
/// Errors: kInvalidArgument naming the parameter, key or restriction for: an unknown key at any
///   level (the message lists the accepted ones), no parameter, a value listed twice, a bound
///   that is not an integer, an empty or too long range, an operation that fails for every
///   value of the parameters' types (Expression::check_types: `mode + 1` where `mode` only holds
///   strings), restrictions that leave no point of a checked space; kParseError for a
///   restriction that does not parse (naming the column) or a malformed JSON value; kNotFound
///   for a restriction naming an unknown parameter.
Expected<ConfigSpace> space_from_spec(const nlohmann::ordered_json& spec);

/// Most values one `range` parameter of a space spec may hold (a million values take about
/// 70 MB and 0.1 s to build; a power2 parameter holds at most 63).
inline constexpr std::uint64_t kMaxSpecKnobValues = 1'000'000;
/// Largest space (product of value counts) space_from_spec enumerates to find that its
/// restrictions leave no valid point.
inline constexpr std::uint64_t kMaxCheckedSpecPoints = std::uint64_t{1} << 20;

/// Reads `path` (JSON) and calls space_from_spec.
/// Errors: kIoError; kParseError naming the file for text that is not JSON, a number out of
///   range (1e400) or arrays and objects nested deeper than kMaxJsonDepth levels (parse_json);
///   space_from_spec's errors prefixed with the file.
Expected<ConfigSpace> load_space_spec(const std::string& path);

}  // namespace tunekit
