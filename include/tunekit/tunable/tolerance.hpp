// Numerical-check tolerances: the (atol, rtol) pair, per-dtype defaults and the parser for
// TUNEKIT_NUMERICAL_CHECK ("0", "1" or "<atol>_<rtol>").
#pragma once

#include <optional>
#include <string_view>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// Elementwise closeness |got - ref| <= atol + rtol * |ref| (as numpy/torch allclose).
struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-5;
  friend bool operator==(const Tolerance&, const Tolerance&) = default;
};

/// Relative rounding of a bf16 output (2^-8: half a unit in the last place of bf16's 8-bit
/// significand), added to the rtol of "BFloat16" outputs.
inline constexpr double kBf16OutputRtol = 1.0 / 256.0;

/// Accumulation length up to which the per-dtype base tolerance applies unscaled.
inline constexpr long long kToleranceBaseAccumulation = 1024;

/// Default tolerance for outputs of element type `dtype` (TunableOp dtype tokens: "float",
/// "tf32", "double", "BFloat16", "BFloat16_float", "Half"; unknown tokens get the PyTorch
/// default 1e-5 / 1e-5). Base values (atol = rtol) for sums of up to 1024 products:
///   double 1e-10, float 1e-4, tf32 1e-3, Half 1e-2, BFloat16 and BFloat16_float 1e-2.
/// For longer accumulations (e.g. GEMM K > 1024) both are scaled by length / 1024: rounding error
/// of a length-L dot product grows up to linearly in L, and candidates legitimately sum in
/// different orders. A wrong kernel (dropped alpha, wrong transpose, stale output) errs by O(1).
/// "BFloat16" (bf16 output C) adds kBf16OutputRtol to rtol: two sums a rounding apart may round
/// to neighbouring bf16 values.
/// Source: PyTorch TunableOp compares with allclose (default 1e-5 / 1e-5, PR #163079); the
/// per-dtype table is tunekit's (upstream tests use 1e-2 for bf16 and 5e-2 for fp8).
Tolerance dtype_tolerance(std::string_view dtype, long long accumulation_length = 1) noexcept;

/// The numerical check setting: off, on with per-dtype defaults (`tolerance` empty), or on with
/// explicit tolerances.
struct NumericalCheck {
  bool enabled = true;
  std::optional<Tolerance> tolerance;  ///< nullopt: the Params' default_tolerance()
  friend bool operator==(const NumericalCheck&, const NumericalCheck&) = default;
};

/// Parses a TUNEKIT_NUMERICAL_CHECK value: "0" -> off, "1" -> on with per-dtype defaults,
/// "<atol>_<rtol>" (two doubles, both > 0, e.g. "1e-3_1e-2") -> on with those.
/// Errors: kInvalidArgument naming `variable` and the value for anything else.
Expected<NumericalCheck> parse_numerical_check(std::string_view text, std::string_view variable);

}  // namespace tunekit
