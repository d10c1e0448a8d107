// Environment variable parsing with errors that name the variable.
// See include/tunekit/core/env.hpp.
#include "tunekit/core/env.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>

namespace tunekit::env {

std::optional<std::string> get_string(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

static std::string trim_lower(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::optional<bool> parse_bool(const std::string& text) {
  const std::string t = trim_lower(text);
  if (t == "1" || t == "true" || t == "on" || t == "yes") return true;
  if (t == "0" || t == "false" || t == "off" || t == "no") return false;
  return std::nullopt;
}

std::optional<long long> parse_int(const std::string& text) {
  const std::string t = trim_lower(text);
  if (t.empty()) return std::nullopt;
  long long value = 0;
  const char* first = t.data();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, t.data() + t.size(), value);
  if (ec != std::errc() || ptr != t.data() + t.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_double(const std::string& text) {
  const std::string t = trim_lower(text);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return value;
}

Expected<std::optional<bool>> get_bool(const char* name) {
  auto raw = get_string(name);
  if (!raw) return std::optional<bool>();
  if (auto b = parse_bool(*raw)) return std::optional<bool>(*b);
  return Status(StatusCode::kInvalidArgument,
                std::string(name) +
                    ": expected a boolean (0/1, true/false, on/off, yes/no), got '" + *raw + "'");
}

Expected<std::optional<long long>> get_int(const char* name) {
  auto raw = get_string(name);
  if (!raw) return std::optional<long long>();
  if (auto i = parse_int(*raw)) return std::optional<long long>(*i);
  return Status(StatusCode::kInvalidArgument,
                std::string(name) + ": expected an integer, got '" + *raw + "'");
}

Expected<std::optional<double>> get_double(const char* name) {
  auto raw = get_string(name);
  if (!raw) return std::optional<double>();
  if (auto d = parse_double(*raw)) return std::optional<double>(*d);
  return Status(StatusCode::kInvalidArgument,
                std::string(name) + ": expected a number, got '" + *raw + "'");
}

}  // namespace tunekit::env
