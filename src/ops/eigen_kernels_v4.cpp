// Eigen GEMM kernels built for x86-64-v4 (AVX-512; src/CMakeLists.txt), entered only on CPUs of
// that level (eigen_gemm.cpp). The code is in eigen_kernels.inc.
#define TUNEKIT_EIGEN_LEVEL v4
#define TUNEKIT_EIGEN_LEVEL_UPPER V4
#include "ops/eigen_kernels.inc"
