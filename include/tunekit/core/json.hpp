// Parsing of JSON that comes from outside tunekit (tuning logs, space specs, replay files, CLI
// options): a nesting limit checked before parsing, and messages without nlohmann's prefixes.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// Deepest nesting of arrays and objects accepted in JSON read from outside tunekit. Deeper
/// documents are refused before they are parsed: nlohmann's dump() and copies recurse once per
/// level and overflow the stack near 50,000 levels.
inline constexpr std::size_t kMaxJsonDepth = 256;

/// Checks JSON text before it is parsed: no NUL byte, and arrays and objects (brackets outside
/// strings) nested at most `max_depth` levels ("[1]" is one level).
/// Errors:   kParseError "nested deeper than 256 levels", or
///           "not JSON (contains a NUL byte at column 7)" (line and column when the text has
///           several lines). Messages name no source: the caller prefixes its file:line or option.
[[nodiscard]] Status check_json_text(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

/// A one-line message for `e`, thrown by nlohmann while reading `text`, without the
/// "[json.exception.parse_error.101] " prefix:
///   syntax errors    "not JSON (syntax error at column 5: invalid literal; last read: '[1,x')"
///                    (line and column when `text` has several lines);
///   number overflow  "a number is out of range (1e400)";
///   any other        nlohmann's own text ("type must be string, but is number").
std::string json_error_message(const nlohmann::json::exception& e, std::string_view text = {});

/// What parse_json does with a key that appears twice in one object.
enum class DuplicateKeys {
  kLastWins,  // as nlohmann (and Python's json module): the last value is kept
  kRefuse,    // an error: for options a user typed, where a repeated key is a mistake
};

/// Parses `text` as one JSON document; Json is nlohmann::json or nlohmann::ordered_json.
/// Errors:   kParseError with the message of check_json_text or json_error_message (no source
///           name), or with DuplicateKeys::kRefuse `the key "stall" appears twice in one
///           object` (the key JSON-escaped). Never throws nlohmann exceptions.
template <class Json = nlohmann::ordered_json>
[[nodiscard]] Expected<Json> parse_json(std::string_view text,
                                        DuplicateKeys duplicates = DuplicateKeys::kLastWins) {
  TUNEKIT_RETURN_IF_ERROR(check_json_text(text));
  try {
    if (duplicates == DuplicateKeys::kLastWins) return Json::parse(text.begin(), text.end());
    using Event = typename Json::parse_event_t;
    std::vector<std::set<std::string>> open;  // the keys of each object being read
    std::optional<std::string> repeated;
    auto note_keys = [&](int, Event event, Json& parsed) {
      if (event == Event::object_start) open.emplace_back();
      if (event == Event::object_end) open.pop_back();
      if (event == Event::key && !open.empty() && !repeated &&
          !open.back().insert(parsed.template get<std::string>()).second)
        repeated = parsed.template get<std::string>();
      return true;
    };
    Json parsed = Json::parse(text.begin(), text.end(), note_keys);
    if (repeated) {
      return Status(StatusCode::kParseError,
                    "the key " + Json(*repeated).dump() + " appears twice in one object");
    }
    return parsed;
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kParseError, json_error_message(e, text));
  }
}

}  // namespace tunekit
