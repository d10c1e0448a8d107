// Typed, range-checked readers of one strategy setting in a JSON object (see
// setting_readers.hpp): the messages name the expected type and range.
#include "search/setting_readers.hpp"

#include <fmt/format.h>

#include <cmath>

namespace tunekit::setting {

namespace {

// A bound as a person writes it: 64, 0.5, 1e-6, 1e12.
std::string bound_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::abs(v) < 1e7) return fmt::format("{:.0f}", v);
  std::string s = fmt::format("{:g}", v);  // 1e-06, 1e+12
  const auto e = s.find('e');
  if (e == std::string::npos) return s;
  std::string exponent = s.substr(e + 1);
  const bool negative = !exponent.empty() && exponent[0] == '-';
  if (!exponent.empty() && (exponent[0] == '-' || exponent[0] == '+')) exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return s.substr(0, e) + "e" + (negative ? "-" : "") + exponent;
}

}  // namespace

std::uint64_t integer_in(const nlohmann::json& v, std::uint64_t lo, std::uint64_t hi) {
  const bool integer =
      v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
  const std::uint64_t n = integer ? v.get<std::uint64_t>() : 0;
  if (integer && n >= lo && n <= hi) return n;
  if (hi != kNoLimit) throw BadSetting(fmt::format("must be an integer in [{}, {}]", lo, hi));
  if (lo == 0) throw BadSetting("must be a non-negative integer");
  throw BadSetting(fmt::format("must be an integer >= {}", lo));
}

double number_in(const nlohmann::json& v, double lo, double hi, Open open) {
  const bool open_low = open == Open::kLow || open == Open::kBoth;
  const bool open_high = open == Open::kHigh || open == Open::kBoth;
  if (v.is_number()) {
    const double d = v.get<double>();
    const bool above = open_low ? d > lo : d >= lo;
    const bool below = open_high ? d < hi : d <= hi;
    if (std::isfinite(d) && above && below) return d;
  }
  if (std::isinf(lo) && std::isinf(hi)) throw BadSetting("must be a finite number");
  if (std::isinf(hi)) {
    throw BadSetting(fmt::format("must be a number {} {}", open_low ? ">" : ">=", bound_text(lo)));
  }
  throw BadSetting(fmt::format("must be a number in {}{}, {}{}", open_low ? '(' : '[',
                               bound_text(lo), bound_text(hi), open_high ? ')' : ']'));
}

bool boolean(const nlohmann::json& v) {
  if (!v.is_boolean()) throw BadSetting("must be true or false");
  return v.get<bool>();
}

std::string one_of(const nlohmann::json& v, std::initializer_list<std::string_view> choices) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    for (auto c : choices) {
      if (c == s) return s;
    }
  }
  std::string list;
  std::size_t i = 0;
  for (auto c : choices) {
    list += i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", ");
    list += c;
    ++i;
  }
  throw BadSetting("must be " + list);
}

std::string printable_key(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (const char c : key) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\u{:04x}", u);
    else
      out += c;
  }
  return out;
}

Status error(std::string_view strategy, std::string_view key, std::string_view what) {
  return Status(StatusCode::kInvalidArgument,
                fmt::format("{}: setting '{}' {}", strategy, printable_key(key), what));
}

}  // namespace tunekit::setting
