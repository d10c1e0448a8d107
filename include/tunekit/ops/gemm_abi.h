/* A C interface to the GEMM tunable op for a runtime that brings its own Default (PyTorch's
 * CPU kernels through tunekit.torch). The runtime installs its Default once per process; from
 * then on tunekit_gemm_run dispatches through an op whose candidate 0 is that Default and whose
 * other candidates are this machine's libraries and kernels (ops::make_gemm_candidates(), with
 * its own Default kept as the candidate "openblas"). Offline tuning in that process
 * (tunekit.tunable.tune_gemm_in_file) tunes through the same op. Plain C, so that an extension
 * compiled against another runtime's headers needs nothing of tunekit's C++ headers. */
#ifndef TUNEKIT_OPS_GEMM_ABI_H_
#define TUNEKIT_OPS_GEMM_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this interface; tunekit_gemm_abi_version() returns the library's. */
#define TUNEKIT_GEMM_ABI_VERSION 1

/** One GEMM problem in BLAS column-major semantics, as tunekit::ops::GemmParams:
 *  C = alpha * op(A) * op(B) + beta * C; op(A) m x k, op(B) k x n, C m x n; leading dimensions
 *  and strides in elements. kind: 0 Gemm, 1 GemmStridedBatched, 2 GemmAndBias (bias of length m,
 *  beta 0). dtype: 0 float, 1 double, 2 BFloat16 (bf16 A, B, C and bias, fp32 accumulation, as
 *  PyTorch's GemmTunableOp_BFloat16), 3 BFloat16_float (bf16 A and B, float C and bias).
 *  transa/transb: 'n' or 't'. */
typedef struct tunekit_gemm_problem {
  int32_t kind;
  int32_t dtype;
  char transa;
  char transb;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
  int64_t batch;
  int64_t stride_a, stride_b, stride_c;
  double alpha, beta;
  const void* a;
  const void* b;
  void* c;
  const void* bias;
} tunekit_gemm_problem;

/** The runtime's Default: computes `problem` (0 on success). On failure it returns non-zero and
 *  writes a NUL-terminated message of at most error_size bytes to `error`. Called from any
 *  thread, on the caller's operands at dispatch and on tunekit's operand copies while tuning. */
typedef int (*tunekit_gemm_run_fn)(void* user, const tunekit_gemm_problem* problem, char* error,
                                   size_t error_size);

/** What a runtime's Default is. Every string is copied. */
typedef struct tunekit_gemm_default {
  const char* library; /**< lower case, e.g. "torch": its version is the validator TORCH_VERSION */
  const char* version; /**< e.g. "2.15.0" */
  const char* detail;  /**< what it runs, shown by the candidate listing */
  tunekit_gemm_run_fn run;
  void* user; /**< passed to run */
  /** Further validators (key, value), e.g. TORCH_MKL_VERSION; registered before any results
   *  file is read. */
  const char* const* validator_keys;
  const char* const* validator_values;
  size_t validator_count;
} tunekit_gemm_default;

/** The interface version libtunekit implements (TUNEKIT_GEMM_ABI_VERSION when it matches). */
int tunekit_gemm_abi_version(void);

/** Installs `d` as the Default of the process's dispatching GEMM op. Once per process: a second
 *  call fails (kFailedPrecondition) unless it names the same library and version, when it is a
 *  no-op. Returns 0 or a tunekit StatusCode, with the message in `error`. */
int tunekit_gemm_install_default(const tunekit_gemm_default* d, char* error, size_t error_size);

/** Dispatches one problem through the installed op (tunes it on a miss, as tunekit::gemm).
 *  Without an installed Default it fails with kFailedPrecondition. Returns 0 or a tunekit
 *  StatusCode, with the candidate's or validation's message in `error`. */
int tunekit_gemm_run(const tunekit_gemm_problem* problem, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif /* TUNEKIT_OPS_GEMM_ABI_H_ */
