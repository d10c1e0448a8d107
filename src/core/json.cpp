// Pre-parse checks of outside JSON (NUL bytes, nesting depth) and nlohmann exception messages
// without their "[json.exception.*]" prefixes. See include/tunekit/core/json.hpp.
#include "tunekit/core/json.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tunekit {

namespace {

/// "column C" of byte `offset` (0-based) of `text`, or "line L, column C" when `text` has
/// several lines.
std::string position_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const std::size_t nl = before.rfind('\n');
  const std::size_t column = nl == std::string_view::npos ? offset + 1 : offset - nl;
  if (text.find('\n') == std::string_view::npos) return fmt::format("column {}", column);
  const auto line = 1 + std::count(before.begin(), before.end(), '\n');
  return fmt::format("line {}, column {}", line, column);
}

}  // namespace

Status check_json_text(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0') {
      return Status(StatusCode::kParseError,
                    fmt::format("not JSON (contains a NUL byte at {})", position_of(text, i)));
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return Status(StatusCode::kParseError,
                      fmt::format("nested deeper than {} levels", max_depth));
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return Status::ok();
}

std::string json_error_message(const nlohmann::json::exception& e, std::string_view text) {
  std::string m = e.what();
  if (m.starts_with("[json.exception.")) {
    const auto end = m.find("] ");
    if (end != std::string::npos) m.erase(0, end + 2);
  }
  if (const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
    // "parse error at line 1, column 5: syntax error while parsing value - invalid literal; ..."
    std::string detail = m;
    const auto colon = detail.find(": ");
    if (detail.starts_with("parse error") && colon != std::string::npos) detail.erase(0, colon + 2);
    const auto dash = detail.find(" - ");
    if (detail.starts_with("syntax error") && dash != std::string::npos) detail.erase(0, dash + 3);
    // pe->byte counts the bytes read, the offending one included.
    const std::size_t offset = pe->byte > 0 ? pe->byte - 1 : 0;
    return fmt::format("not JSON (syntax error at {}: {})", position_of(text, offset), detail);
  }
  if (dynamic_cast<const nlohmann::json::out_of_range*>(&e) != nullptr) {
    // 406: "number overflow parsing '1e400'"
    constexpr std::string_view kOverflow = "number overflow parsing '";
    if (m.starts_with(kOverflow) && m.ends_with('\'')) {
      return fmt::format("a number is out of range ({})",
                         m.substr(kOverflow.size(), m.size() - kOverflow.size() - 1));
    }
    return fmt::format("a number is out of range ({})", m);
  }
  return m;
}

}  // namespace tunekit
