// Candidate<Params>: one implementation of a tunable operator, and the Params concept it runs on.
// Entry 0 of every candidate list is "Default", the plain library call a user would make.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// What a problem description must offer to be tuned by TunableOp<Params>.
///  * `op_signature()`   TunableOp op signature, e.g. "GemmTunableOp_float_TN".
///  * `signature()`      TunableOp params signature, e.g. "tn_4096_16_4096_ld_4096_4096_4096".
///  * `key()`            a small trivially-copyable value identifying the problem (operator,
///                       dtype, shapes, leading dims), computed without allocation; `Key` must be
///                       equality-comparable and hashable through `Params::hash(key)`.
///  * `flops()`          floating-point operations of one call (for GFLOP/s).
/// Tuning additionally uses the operand protocol of ParamsTraits<P> (tunable/params_traits.hpp):
/// a `Workspace` of deep operand copies (`create`, `bind(i)`, `reset_output(i)`) for rotating
/// buffers and the numerical check, output/input byte sizes for the rotation rule, and
/// optionally `operand_ranges()`, `compare_output(reference, atol, rtol)`,
/// `default_tolerance()`, `blas_signature()` and `dynamic_signature()`.
template <class P>
concept TunableParams = requires(const P& p, const typename P::Key& key) {
  { p.op_signature() } -> std::convertible_to<std::string>;
  { p.signature() } -> std::convertible_to<std::string>;
  { p.key() } -> std::same_as<typename P::Key>;
  { P::hash(key) } -> std::same_as<std::uint64_t>;
  { p.flops() } -> std::convertible_to<double>;
};

/// One implementation of an operator.
/// Failures are results (Status), never exceptions. `run` may be called concurrently from
/// several threads once `prepare` has succeeded for that problem.
template <class Params>
class Candidate {
 public:
  virtual ~Candidate() = default;
  /// Canonical solution name, written to results files byte for byte (e.g. "blis[arch=skx]").
  virtual const std::string& name() const = 0;
  /// Library family for TUNEKIT_<LIBRARY>_ENABLED ("openblas", "blis", "eigen", "onednn",
  /// "libxsmm", "native", ...). Lower case.
  virtual std::string_view library() const = 0;
  /// kOk when applicable, kUnsupported (with a reason) when not. Must be cheap.
  virtual Status supports(const Params& params) const = 0;
  /// One-time, untimed preparation for a problem (JIT, primitive creation, library warm-up).
  /// Called before the first run() for a problem, serialised per operator; it may be called
  /// again for the same problem and must then be cheap and idempotent.
  virtual Status prepare(const Params& /*params*/) { return Status::ok(); }
  /// Computes the operator. kOk, or an error status; never throws.
  virtual Status run(const Params& params) = 0;
  /// run() on a TunableOp hit: `params.key()` is the key of a problem that passed
  /// Params::validate() (where Params has one), so checks that depend on the key alone may be
  /// skipped; what can differ between calls with the same key (operand pointers, scalars) must
  /// still be refused with the status run() would give. Default: run().
  virtual Status run_resolved(const Params& params) { return run(params); }
};

template <class Params>
using CandidateList = std::vector<std::unique_ptr<Candidate<Params>>>;

}  // namespace tunekit
