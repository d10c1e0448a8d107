// tunekit's fp32 GEMM kernels built for x86-64-v3 (src/CMakeLists.txt), entered only on CPUs of
// that level (native_gemm.cpp). The code is in native_kernels.inc (with native_decode.inc).
#define TUNEKIT_NATIVE_LEVEL v3
#define TUNEKIT_NATIVE_LEVEL_UPPER V3
#define TUNEKIT_NATIVE_LEVEL_NAME "x86-64-v3"
#define TUNEKIT_NATIVE_WIDTH 8
#include "ops/native_kernels.inc"
