// The public GEMM entry points users call instead of cblas: tunekit::gemm, gemm_strided_batched
// and gemm_and_bias dispatch through one process-wide TunableOp<GemmParams>.
#pragma once

#include <cstdint>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_candidates.hpp"
#include "tunekit/ops/gemm_params.hpp"
#include "tunekit/tunable/tunable.hpp"

namespace tunekit {

using GemmTunableOp = TunableOp<ops::GemmParams>;

/// The process-wide GEMM tunable op, created on first use with ops::make_gemm_candidates().
/// Creating it registers the GEMM libraries' validators (see docs/tunable.md) and applies the
/// context's thread count (TUNEKIT_THREADS, default all usable cores) to every library.
GemmTunableOp& gemm_op();

/// The GEMM op whose Default is a runtime's own kernel (installed through
/// tunekit_gemm_install_default, include/tunekit/ops/gemm_abi.h, e.g. by tunekit.torch), or null
/// when none is installed. Its other candidates are gemm_op()'s, with gemm_op()'s Default kept
/// as the candidate "openblas".
GemmTunableOp* runtime_gemm_op() noexcept;

/// The op offline tuning in this process goes through: runtime_gemm_op() when installed, else
/// gemm_op().
GemmTunableOp& active_gemm_op();

/// Registers one validator per candidate library, "<LIBRARY>_VERSION" (OPENBLAS_VERSION,
/// BLIS_VERSION, EIGEN_VERSION, ONEDNN_VERSION, LIBXSMM_VERSION), with the version each library
/// reports at run time. Keys already registered are kept. gemm_op() calls it before any results
/// file is read.
void register_gemm_validators(TuningContext& ctx, const CandidateList<ops::GemmParams>& list);

/// register_gemm_validators() for every library of ops::make_gemm_candidates(), without creating
/// an op: call it before reading results files or databases in a process that tunes or checks
/// GEMM results without gemm_op() (tools, bindings, a runtime's own op).
void register_all_gemm_validators(TuningContext& ctx);

/// What creating gemm_op() does to `ctx`, without creating it: the context's thread count applied
/// to every library (and stored back as applied, ops::set_num_threads), ops::settle_threads as
/// its settle hook, and register_all_gemm_validators().
void prepare_gemm_context(TuningContext& ctx);

/// Dispatches one GEMM problem (see ops::GemmParams for the semantics).
/// Errors: the chosen candidate's status; kInvalidArgument for malformed params.
Status try_gemm(const ops::GemmParams& params);

/// C = alpha * op(A) * op(B) + beta * C in BLAS column-major semantics, as cblas_sgemm with
/// CblasColMajor. transa/transb: 'n' or 't' (either case).
/// Shapes: op(A) m x k, op(B) k x n, C m x n; lda >= rows of A as stored, ldb likewise, ldc >= m.
/// Errors: throws tunekit::Error with the candidate's or validation's status.
void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc);
/// Double precision: as the float overload.
void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc);
/// bfloat16 A and B, fp32 accumulation and fp32 output C: the problem
/// GemmTunableOp_BFloat16_float_<AB> (ops::DType::kBFloat16Float). Shapes and errors as the
/// float overload.
void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const ops::BFloat16* a, std::int64_t lda, const ops::BFloat16* b, std::int64_t ldb,
          float beta, float* c, std::int64_t ldc);
/// bfloat16 A, B and C, as PyTorch's bf16 matmul: fp32 accumulation of alpha * op(A) * op(B)
/// + beta * C (C widened exactly when beta != 0), the result rounded to bf16 with
/// round-to-nearest-even; the problem GemmTunableOp_BFloat16_<AB> (ops::DType::kBFloat16).
/// Shapes: as the float overload (ldc in bf16 elements). Units: C holds bf16 values (2 bytes).
/// Errors: throws tunekit::Error with the candidate's or validation's status.
void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const ops::BFloat16* a, std::int64_t lda, const ops::BFloat16* b, std::int64_t ldb,
          float beta, ops::BFloat16* c, std::int64_t ldc);

/// `batch` GEMMs whose operands start every stride_a / stride_b / stride_c elements.
/// Errors: as gemm().
void gemm_strided_batched(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                          float alpha, const float* a, std::int64_t lda, std::int64_t stride_a,
                          const float* b, std::int64_t ldb, std::int64_t stride_b, float beta,
                          float* c, std::int64_t ldc, std::int64_t stride_c, std::int64_t batch);
/// Double precision: as the float overload.
void gemm_strided_batched(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                          double alpha, const double* a, std::int64_t lda, std::int64_t stride_a,
                          const double* b, std::int64_t ldb, std::int64_t stride_b, double beta,
                          double* c, std::int64_t ldc, std::int64_t stride_c, std::int64_t batch);

/// C = alpha * op(A) * op(B) + bias (bias[i] added to row i of every column; length m), the
/// fused epilogue of torch.nn.Linear in the BLAS frame. Errors: as gemm().
void gemm_and_bias(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                   const float* bias, float* c, std::int64_t ldc);
/// Double precision: as the float overload.
void gemm_and_bias(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                   double alpha, const double* a, std::int64_t lda, const double* b,
                   std::int64_t ldb, const double* bias, double* c, std::int64_t ldc);

}  // namespace tunekit
