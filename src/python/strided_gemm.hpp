// The GEMM engine under tunekit.matmul and tunekit.gemm: C = alpha * A @ B + beta * C on strided
// N-d operands with NumPy's broadcasting, mapped onto tuned tunekit GEMM calls (plain and
// strided-batched), zero-copy where the layouts allow it. Pure C++: runs without the GIL.
#pragma once

#include <cstdint>

#include "operand.hpp"
#include "tunekit/core/status.hpp"

namespace tunekit::python {

/// C = alpha * A @ B + beta * C over the last two dimensions, broadcast over the others.
/// Shapes:  a (..., M, K), b (..., K, N), c (batch..., M, N) with batch the broadcast of a's and
///          b's leading dimensions (the caller checks shapes and types). a and b have one type;
///          c is float64 for float64 operands, else float32 (bfloat16 accumulates in float32).
///          Strides may be 0 (broadcast, 1-d operands promoted by the caller).
/// Copies:  an operand whose last two dimensions have no BLAS layout (one stride one element,
///          the other at least the extent, at most 2^31 - 1 elements), whose strides are not
///          element multiples or negative, or whose leading-dimension padding a library could
///          read past its owner's memory, is copied to a dense buffer first; an output that
///          overlaps an input, or has no BLAS layout, is computed in a buffer and copied back.
/// Units:   strides in bytes. When beta is 0, C is not read (NaN in C does not propagate).
/// Errors:  the tuned GEMM's status (kInvalidArgument, a candidate's failure).
Status strided_gemm(const Operand& a, const Operand& b, Operand& c, double alpha, double beta);

/// How many operands strided_gemm() has copied (inputs densified, outputs buffered) in this
/// process: lets the tests tell a zero-copy call from a copying one.
std::uint64_t strided_gemm_copies() noexcept;

}  // namespace tunekit::python
