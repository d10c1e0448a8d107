// Per-dtype default tolerances and the TUNEKIT_NUMERICAL_CHECK parser.
// See include/tunekit/tunable/tolerance.hpp.
#include "tunekit/tunable/tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "tunekit/core/env.hpp"

namespace tunekit {

Tolerance dtype_tolerance(std::string_view dtype, long long accumulation_length) noexcept {
  double base = 1e-5;
  if (dtype == "double") {
    base = 1e-10;
  } else if (dtype == "float") {
    base = 1e-4;
  } else if (dtype == "tf32") {
    base = 1e-3;
  } else if (dtype == "Half" || dtype == "BFloat16" || dtype == "BFloat16_float") {
    base = 1e-2;
  }
  const double scale = std::max(1.0, static_cast<double>(accumulation_length) /
                                         static_cast<double>(kToleranceBaseAccumulation));
  const double output_rounding = dtype == "BFloat16" ? kBf16OutputRtol : 0.0;
  return Tolerance{base * scale, base * scale + output_rounding};
}

Expected<NumericalCheck> parse_numerical_check(std::string_view text, std::string_view variable) {
  const std::string value(text);
  auto error = [&] {
    return Status(StatusCode::kInvalidArgument,
                  std::string(variable) +
                      ": expected 0 (off), 1 (on, per-dtype tolerances) or "
                      "<atol>_<rtol> with two positive numbers (e.g. "
                      "1e-5_1e-5), got '" +
                      value + "'");
  };
  if (value == "0") return NumericalCheck{false, std::nullopt};
  if (value == "1") return NumericalCheck{true, std::nullopt};
  const auto sep = value.find('_');
  if (sep == std::string::npos || value.find('_', sep + 1) != std::string::npos) return error();
  const auto atol = env::parse_double(value.substr(0, sep));
  const auto rtol = env::parse_double(value.substr(sep + 1));
  if (!atol || !rtol || !(*atol > 0.0) || !(*rtol > 0.0) || !std::isfinite(*atol) ||
      !std::isfinite(*rtol)) {
    return error();
  }
  return NumericalCheck{true, Tolerance{*atol, *rtol}};
}

}  // namespace tunekit
