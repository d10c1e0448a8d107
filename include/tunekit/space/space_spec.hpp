// Config spaces defined by data: a JSON spec of parameter value lists plus restriction strings.
// Lets the CLI and the replay runner build spaces without C++ code (Kernel Tuner's tune_params).
#pragma once

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
/// Values are JSON numbers, booleans or strings; `range` is [begin, end) with an optional step;
/// `power2` is [min, max]. Each restriction is an Expression over parameter names.
/// The object form keeps file order only when parsed with nlohmann::ordered_json (load_space_spec
/// does); from a plain nlohmann::json the keys come sorted, so pass "tune_params_keys" or a list.
/// Errors: kParseError / kInvalidArgument naming the parameter or restriction; kNotFound for a
/// restriction naming an unknown parameter.
Expected<ConfigSpace> space_from_spec(const nlohmann::ordered_json& spec);

/// Reads `path` (JSON) and calls space_from_spec. Errors: kIoError, kParseError naming the file.
Expected<ConfigSpace> load_space_spec(const std::string& path);

}  // namespace tunekit
