// The Eigen GEMM kernels of one ISA build: eigen_kernels_v3.cpp (x86-64-v3, AVX2+FMA) and
// eigen_kernels_v4.cpp (x86-64-v4, AVX-512), each with its own copy of Eigen (src/CMakeLists.txt).
// Plain types only: those translation units include nothing of tunekit's but this header.
#pragma once

#include <cstdint>

namespace tunekit::ops::detail {

/// One column-major GEMM, C = alpha op(A) op(B) + beta C, of the element type of the function
/// it is passed to. BLAS semantics: with beta == 0, C is not read.
struct EigenCall {
  char transa = 'n';  ///< 'n' or 't'
  char transb = 'n';  ///< 'n' or 't'
  std::int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
};

/// What a build reports about itself.
struct EigenBuildFacts {
  int world = 0, major = 0, minor = 0;  ///< EIGEN_WORLD_VERSION, _MAJOR_, _MINOR_
  const char* simd = "";                ///< Eigen::SimdInstructionSetsInUse()
  int threads = 0;                      ///< Eigen::nbThreads()
};

/// Entry points of one build. Call them only on a CPU of the build's level.
struct EigenKernels {
  void (*gemm_f32)(const EigenCall& call);
  void (*gemm_f64)(const EigenCall& call);
  void (*set_threads)(int threads);
  EigenBuildFacts (*facts)();
};

extern const EigenKernels kEigenKernelsV3;
extern const EigenKernels kEigenKernelsV4;

}  // namespace tunekit::ops::detail
