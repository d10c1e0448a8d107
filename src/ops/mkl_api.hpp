// The entry points of Intel MKL (libmkl_rt from the `mkl` wheel) that tunekit's MKL candidates
// call, loaded once per process with RTLD_DEEPBIND so they never collide with OpenBLAS's CBLAS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit::ops::detail {

/// MKL's CBLAS constants (mkl_cblas.h, mkl_types.h and mkl_service.h of oneMKL 2026; the CBLAS
/// enum values are those of Netlib's CBLAS).
namespace mkl {
inline constexpr int kColMajor = 102;
inline constexpr int kNoTrans = 111;
inline constexpr int kTrans = 112;
inline constexpr int kPacked = 151;   ///< CBLAS_STORAGE: an operand packed by *_pack
inline constexpr int kAMatrix = 161;  ///< CBLAS_IDENTIFIER
/// mkl_jit_create_?gemm's status for a generated kernel; anything else (MKL_NO_JIT: a jitter that
/// calls the standard GEMM, or an error) is no JIT kernel for tunekit.
inline constexpr int kJitSuccess = 0;
inline constexpr int kThreadingGnu = 3;
}  // namespace mkl

/// MKL's functions (LP64 interface: MKL_INT is int; bf16 is a 16-bit integer, MKL_BF16).
struct MklApi {
  void (*sgemm)(int layout, int transa, int transb, int m, int n, int k, float alpha,
                const float* a, int lda, const float* b, int ldb, float beta, float* c,
                int ldc) = nullptr;
  void (*dgemm)(int layout, int transa, int transb, int m, int n, int k, double alpha,
                const double* a, int lda, const double* b, int ldb, double beta, double* c,
                int ldc) = nullptr;
  void (*gemm_bf16)(int layout, int transa, int transb, int m, int n, int k, float alpha,
                    const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb, float beta,
                    float* c, int ldc) = nullptr;
  std::size_t (*sgemm_pack_get_size)(int identifier, int m, int n, int k) = nullptr;
  void (*sgemm_pack)(int layout, int identifier, int trans, int m, int n, int k, float alpha,
                     const float* src, int ld, float* dest) = nullptr;
  void (*sgemm_compute)(int layout, int transa, int transb, int m, int n, int k, const float* a,
                        int lda, const float* b, int ldb, float beta, float* c, int ldc) = nullptr;
  std::size_t (*bf16_pack_get_size)(int identifier, int m, int n, int k) = nullptr;
  void (*bf16_pack)(int layout, int identifier, int trans, int m, int n, int k,
                    const std::uint16_t* src, int ld, std::uint16_t* dest) = nullptr;
  void (*bf16_compute)(int layout, int transa, int transb, int m, int n, int k, float alpha,
                       const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb, float beta,
                       float* c, int ldc) = nullptr;
  int (*jit_create_sgemm)(void** jitter, int layout, int transa, int transb, int m, int n, int k,
                          float alpha, int lda, int ldb, float beta, int ldc) = nullptr;
  int (*jit_create_dgemm)(void** jitter, int layout, int transa, int transb, int m, int n, int k,
                          double alpha, int lda, int ldb, double beta, int ldc) = nullptr;
  void* (*jit_get_sgemm_ptr)(const void* jitter) = nullptr;
  void* (*jit_get_dgemm_ptr)(const void* jitter) = nullptr;
  int (*jit_destroy)(void* jitter) = nullptr;
  void (*set_num_threads)(int threads) = nullptr;

  std::string path;     ///< the libmkl_rt loaded
  std::string version;  ///< e.g. "2026.2.1"
  std::string branch;   ///< the code path MKL dispatches to here, e.g. "AVX512"

  /// Applies ops::num_threads() to MKL (mkl_set_num_threads) when it changed. Thread-safe.
  void sync_threads() const noexcept;
};

/// MKL, loaded on the first call: located (locate_wheel_library, TUNEKIT_MKL_LIBRARY), opened
/// with RTLD_DEEPBIND, switched to GNU OpenMP threading (mkl_set_threading_layer before any other
/// MKL call), so its threads come from the libgomp pool the program's OpenBLAS, oneDNN 2 and
/// tunekit's kernels share.
/// Errors: kUnsupported when the wheel is not installed (what installs it), cannot be loaded
/// (AddressSanitizer, dlopen) or lacks an entry point (named).
Expected<const MklApi*> mkl_api();

}  // namespace tunekit::ops::detail
