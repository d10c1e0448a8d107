// ParamsTraits<Params>: how the tunable layer copies operands, sizes rotating buffers, flushes
// caches, compares outputs and picks tolerances for a Params type (members detected, or
// specialise).
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/dynamic_dims.hpp"
#include "tunekit/tunable/tolerance.hpp"

namespace tunekit {

namespace detail {
/// A free compare_output(reference, got, atol, rtol) found by argument-dependent lookup.
template <class Params>
concept HasFreeCompareOutput = requires(const Params& reference, const Params& got) {
  { compare_output(reference, got, 1.0, 1.0) } -> std::convertible_to<Status>;
};
template <class Params>
Status call_free_compare_output(const Params& reference, const Params& got, double atol,
                                double rtol) {
  return compare_output(reference, got, atol, rtol);
}
}  // namespace detail

/// The operand protocol find_fastest uses beyond the TunableParams concept. The primary template
/// forwards to members of `Params` (first form found wins); a Params type may instead specialise
/// ParamsTraits in namespace tunekit.
///
/// Required:
///  * `typename Params::Workspace` with `static create(params, copies)` or
///    `static create(params, copies, /*random_fill=*/false)` returning
///    `Expected<std::unique_ptr<Workspace>>`: `copies` deep copies of the operands, each output
///    initialised from the caller's output;
///  * `Workspace::bind(i) const -> Params` (params addressing copy i) and
///    `Workspace::reset_output(i)` (restore copy i's output to its initial content);
///  * sizes: `output_bytes()` and `input_bytes()`, or GEMM-style `c_bytes()` and
///    `a_bytes() + b_bytes() [+ bias_bytes()]`.
/// Optional:
///  * `operand_ranges() -> std::vector<measure::MemoryRange>` (or GEMM-style `a`, `b`, `c`
///    [`bias`] pointers with the sizes above): the bytes flushed from the caches before each
///    timed call; without them no flush happens;
///  * `compare_output(const Params& reference, double atol, double rtol) const -> Status`
///    (called on the candidate's params), or a free `compare_output(reference, got, atol, rtol)`
///    found by ADL: kWrongResult naming the first bad element; without it the numerical check
///    is skipped (logged once);
///  * `default_tolerance() const -> Tolerance` (e.g. dtype_tolerance(dtype, K)); without it
///    the PyTorch default 1e-5 / 1e-5;
///  * `blas_signature() const -> std::string`: the "- { function: ... }" block for BLAS_LOG;
///  * `dynamic_signature(DynamicDimsMask) const -> std::string`: the signature with the dims of
///    the mask (and the leading dimensions that follow them) as '*' (V26 dynamic dims); the mask
///    is the dispatching thread's (DynamicDimsGuard, TUNEKIT_DYNAMIC_DIMS). Or
///    `dynamic_signature() const` for a Params type that carries its own mask. When it differs
///    from signature() a tuned result is also stored under it.
template <class Params>
struct ParamsTraits {
  /// Deep operand copies of one problem.
  using Workspace = typename Params::Workspace;

  /// `copies` operand sets. Errors: whatever Workspace::create reports (invalid params, memory).
  static Expected<std::unique_ptr<Workspace>> make_workspace(const Params& p, std::size_t copies) {
    if constexpr (requires { Workspace::create(p, copies); }) {
      return Workspace::create(p, copies);
    } else {
      return Workspace::create(p, copies, false);
    }
  }
  /// Params addressing copy i.
  static Params bind(const Workspace& ws, std::size_t i) { return ws.bind(i); }
  /// Restores the output of copy i.
  static void reset_output(Workspace& ws, std::size_t i) { ws.reset_output(i); }

  /// Bytes of the output operand(s) (C), with the dense minimum.
  static std::size_t output_bytes(const Params& p) {
    if constexpr (requires { p.output_bytes(); }) {
      return static_cast<std::size_t>(p.output_bytes());
    } else {
      return static_cast<std::size_t>(p.c_bytes());
    }
  }
  /// Bytes of the input operands (A, B, bias).
  static std::size_t input_bytes(const Params& p) {
    if constexpr (requires { p.input_bytes(); }) {
      return static_cast<std::size_t>(p.input_bytes());
    } else {
      std::size_t bytes = static_cast<std::size_t>(p.a_bytes() + p.b_bytes());
      if constexpr (requires { p.bias_bytes(); }) bytes += static_cast<std::size_t>(p.bias_bytes());
      return bytes;
    }
  }

  /// Memory to flush before a timed call on `p` (empty: no flush available).
  static std::vector<measure::MemoryRange> operand_ranges(const Params& p) {
    if constexpr (requires { p.operand_ranges(); }) {
      return p.operand_ranges();
    } else if constexpr (requires {
                           p.a;
                           p.b;
                           p.c;
                           p.a_bytes();
                           p.b_bytes();
                           p.c_bytes();
                         }) {
      std::vector<measure::MemoryRange> ranges{{p.a, static_cast<std::size_t>(p.a_bytes())},
                                               {p.b, static_cast<std::size_t>(p.b_bytes())},
                                               {p.c, static_cast<std::size_t>(p.c_bytes())}};
      if constexpr (requires {
                      p.bias;
                      p.bias_bytes();
                    }) {
        ranges.push_back({p.bias, static_cast<std::size_t>(p.bias_bytes())});
      }
      return ranges;
    } else {
      return {};
    }
  }

  /// Whether compare_output() can check anything for this Params type.
  static constexpr bool kCanCompare = requires(const Params& a, const Params& b) {
    a.compare_output(b, 1.0, 1.0);
  }
  || detail::HasFreeCompareOutput<Params>;

  /// ok when `got`'s output matches `reference`'s within `tolerance`; kWrongResult otherwise.
  static Status compare_output(const Params& reference, const Params& got,
                               const Tolerance& tolerance) {
    if constexpr (requires { got.compare_output(reference, 1.0, 1.0); }) {
      return got.compare_output(reference, tolerance.atol, tolerance.rtol);
    } else if constexpr (detail::HasFreeCompareOutput<Params>) {
      return detail::call_free_compare_output(reference, got, tolerance.atol, tolerance.rtol);
    } else {
      return Status::ok();
    }
  }

  /// The per-problem default tolerance (PyTorch's 1e-5 / 1e-5 when the Params has none).
  static Tolerance default_tolerance(const Params& p) {
    if constexpr (requires { p.default_tolerance(); }) {
      return p.default_tolerance();
    } else {
      return Tolerance{};
    }
  }

  /// The BLAS_PARAMS block (without the "BLAS_PARAMS: " prefix), or "" when not provided.
  static std::string blas_signature(const Params& p) {
    if constexpr (requires { p.blas_signature(); }) {
      return std::string(p.blas_signature());
    } else {
      return {};
    }
  }

  /// Whether the Params type derives wildcard signatures from the dynamic-dims mask of the
  /// dispatching thread (`dynamic_signature(DynamicDimsMask)`), as ops::GemmParams does.
  static constexpr bool kMaskedDynamic = requires(const Params& p) {
    p.dynamic_signature(DynamicDimsMask{});
  };

  /// The wildcard signature for dynamic dims, or "" when there is none: `dynamic_signature(mask)`
  /// when the Params type takes a mask (mask 0 gives ""), else its own `dynamic_signature()`.
  static std::string dynamic_signature(const Params& p, DynamicDimsMask mask) {
    if constexpr (kMaskedDynamic) {
      return mask == 0 ? std::string() : std::string(p.dynamic_signature(mask));
    } else if constexpr (requires { p.dynamic_signature(); }) {
      return std::string(p.dynamic_signature());
    } else {
      return {};
    }
  }
};

}  // namespace tunekit
