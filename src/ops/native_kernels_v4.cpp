// tunekit's fp32 GEMM kernels built for x86-64-v4 (src/CMakeLists.txt), entered only on CPUs of
// that level (native_gemm.cpp), with the bf16 routes through AVX512-BF16 and AMX tiles (entered
// only where the CPU has those). The code is in native_kernels.inc (with native_decode.inc) and
// native_amx.inc.
#define TUNEKIT_NATIVE_LEVEL v4
#define TUNEKIT_NATIVE_LEVEL_UPPER V4
#define TUNEKIT_NATIVE_LEVEL_NAME "x86-64-v4"
#define TUNEKIT_NATIVE_WIDTH 16
#define TUNEKIT_NATIVE_AMX 1
#include "ops/native_kernels.inc"
