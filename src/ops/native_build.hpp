// The builds of tunekit's GEMM kernels this CPU may enter (src/ops/native_kernels.hpp).
#pragma once

#include <string>
#include <vector>

#include "ops/native_kernels.hpp"

namespace tunekit::ops::detail {

/// The kernel builds the planned CPU (hw::cpu()) and the host CPU (hw::host_cpu()) both run,
/// highest level first: x86-64-v4 (AVX-512) and x86-64-v3 (AVX2 + FMA). Empty below v3.
const std::vector<const NativeKernels*>& native_builds();
/// The build with micro-kernel mr x nr among native_builds(), or the build whose AMX route
/// (native_amx_route()) has that tile; null when neither.
const NativeKernels* native_build_for(int mr, int nr);
/// The bf16 blocked GEMM on AMX tiles when the x86-64-v4 build is among native_builds(), the
/// planned and the host CPU both have amx_tile and amx_bf16, and the process may use the tiles
/// (hw::amx_permitted()); else null. Its tiles serve bf16 problems only.
const NativeBf16Kernels* native_amx_route();
/// Whether mr x nr is a tile of native_amx_route() (false when there is none). Asks for the
/// tile state (native_amx_route()) only for an AMX shape.
bool is_amx_tile(int mr, int nr);
/// Whether mr x nr is a shape of the AMX route as built (32x32), whatever this CPU runs.
bool is_amx_shape(int mr, int nr);
/// Why native_amx_route() is null, in one line ("" when it is not).
std::string native_amx_refusal();
/// The build the decode kernels run from (the highest of native_builds()), or null.
const NativeKernels* native_decode_build();
/// The bf16 blocked GEMM of build `k` for tile mr x nr: native_amx_route() for its tiles;
/// through AVX512-BF16 when the build has it and the planned and the host CPU both have the
/// avx512_bf16 flag; else widened to fp32 as packed.
const NativeBf16Kernels* native_bf16_kernels(const NativeKernels* k, int mr, int nr);
/// The bf16 decode kernel of build `k`: gemv_rows_bf16_pairs (AVX512-BF16) when the build has it
/// and the planned and the host CPU both have the avx512_bf16 flag, else gemv_rows_bf16.
using NativeDecodeBf16 = bool (*)(const NativeBf16Call& call, int rows, int threads);
NativeDecodeBf16 native_decode_bf16_kernel(const NativeKernels* k);
/// Bytes per packed element of tile mr x nr for problems of `bf16` or float operands: 2 where
/// bf16 is packed as bf16 (pairs of depths through AVX512-BF16, or AMX tiles), else 4 (fp32, or
/// bf16 widened as packed).
int native_packed_bytes(bool bf16, int mr, int nr);

}  // namespace tunekit::ops::detail
