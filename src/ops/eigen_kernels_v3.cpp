// Eigen GEMM kernels built for x86-64-v3 (AVX2, FMA; src/CMakeLists.txt), entered only on CPUs
// of that level (eigen_gemm.cpp). The code is in eigen_kernels.inc.
#define TUNEKIT_EIGEN_LEVEL v3
#define TUNEKIT_EIGEN_LEVEL_UPPER V3
#include "ops/eigen_kernels.inc"
