// The one adapter that gives a candidate without a bf16 output a bf16 C: the candidate's float-C
// path (DType::kBFloat16Float) runs into a per-thread float scratch, which is rounded to bf16.
#pragma once

#include <cstddef>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_params.hpp"

namespace tunekit::ops::detail {

/// A non-owning reference to a callable `Status(const GemmParams&)`: one indirect call, no
/// allocation. The callable must outlive the reference.
class ParamsRunRef {
 public:
  template <class F>
  ParamsRunRef(F& run) noexcept  // NOLINT(google-explicit-constructor)
      : object_(&run),
        call_([](void* object, const GemmParams& p) { return (*static_cast<F*>(object))(p); }) {}
  Status operator()(const GemmParams& p) const { return call_(object_, p); }

 private:
  void* object_;
  Status (*call_)(void*, const GemmParams&);
};

/// `p` with dtype float_output_dtype(p.dtype) (kBFloat16 -> kBFloat16Float), all else as is: the
/// problem a candidate's float-C path is asked about (supports, prepare). Its c and bias still
/// point at the bf16 buffers; run_with_float_output() gives the twin it runs float buffers.
GemmParams float_output_twin(const GemmParams& p) noexcept;

/// Runs the bf16-C problem `p` (dtype kBFloat16, any kind) through `run_float` on its float-C
/// twin: C (and bias) in the calling thread's float scratch, at p's ldc and stride_c. When
/// beta != 0 the m x n part of each C is first widened into the scratch; the bias is widened;
/// afterwards the m x n part of each output is rounded to bf16 (round to nearest even, NaN stays
/// NaN) into p.c. C is not read when beta is 0. The conversions are single-threaded and part of
/// the call, so a timed run includes them.
/// Units:  the scratch grows to p.c_bytes() * 2 + p.bias_bytes() * 2 bytes (plus alignment) and
///         never shrinks; each thread has its own.
/// Errors: kRuntimeError when the scratch cannot be allocated; those of `run_float`.
Status run_with_float_output(const GemmParams& p, ParamsRunRef run_float);

/// The calling thread's scratch: its address (nullptr before the first bf16-output run) and its
/// capacity in bytes. For tests of the reuse rule.
const void* float_output_scratch() noexcept;
std::size_t float_output_scratch_bytes() noexcept;

}  // namespace tunekit::ops::detail
