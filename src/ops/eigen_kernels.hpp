// The Eigen GEMM kernels of one ISA build: eigen_kernels_v3.cpp (x86-64-v3, AVX2+FMA) and
// eigen_kernels_v4.cpp (x86-64-v4, AVX-512), each with its own copy of Eigen (src/CMakeLists.txt).
#pragma once

#include <string>

#include "ops/gemm_internal.hpp"
#include "tunekit/core/hardware.hpp"

namespace tunekit::ops::detail {

/// Entry points of one build. Call them only on a CPU of at least `level` (host_cpu()).
struct EigenKernels {
  hw::X86Level level;
  void (*gemm_f32)(const GemmCall& call);
  void (*gemm_f64)(const GemmCall& call);
  void (*set_threads)(int threads);
  /// "Eigen 3.4.0 x86-64-v3 build (SSE, SSE2, ..., AVX2, FMA), 2 threads"
  std::string (*describe)();
};

extern const EigenKernels kEigenKernelsV3;
extern const EigenKernels kEigenKernelsV4;

}  // namespace tunekit::ops::detail
