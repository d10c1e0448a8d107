// tunekit's own GEMM kernels (fp32; bf16 decode; bf16 widened or through AVX512-BF16), one ISA
// build per x86-64 level: native_kernels_v3.cpp (AVX2 + FMA) and native_kernels_v4.cpp (AVX-512),
// each compiled from native_kernels.inc with its own -march (src/CMakeLists.txt). Plain types only:
// those translation units include nothing of tunekit's but this header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tunekit::ops::detail {

/// One column-major GEMM, C = alpha op(A) op(B) + beta C (BLAS semantics: with beta == 0, C is
/// not read). op(A) is m x k, op(B) is k x n; leading dimensions in elements. A and B hold `T`
/// (float, or std::uint16_t holding bf16 bits: the upper half of a float); C is float.
template <class T>
struct NativeCallOf {
  char transa = 'n';  ///< 'n' or 't'
  char transb = 'n';  ///< 'n' or 't'
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const T* a = nullptr;
  std::int64_t lda = 0;
  const T* b = nullptr;
  std::int64_t ldb = 0;
  float* c = nullptr;
  std::int64_t ldc = 0;
};
/// fp32 A, B and C.
using NativeCall = NativeCallOf<float>;
/// bf16 A and B (bits), fp32 C; products are accumulated in fp32.
using NativeBf16Call = NativeCallOf<std::uint16_t>;

/// Loop order of the macro-kernel inside one MC x KC block of A and KC x NC panel of B.
enum class NativeOrder : std::uint8_t {
  kJI = 0,  ///< NR column panels outer, MR row panels inner (B micro-panel stays in L1; BLIS)
  kIJ = 1,  ///< MR row panels outer, NR column panels inner (A micro-panel stays in L1)
};

/// The blocking of one run (GotoBLAS / BLIS structure; Goto and van de Geijn, "Anatomy of
/// high-performance matrix multiplication", ACM TOMS 34(3), 2008): the micro-kernel computes an
/// mr x nr tile of C from packed panels; A is packed in mc x kc blocks, B in kc x nc panels.
/// Invariants (checked by parse_native_gemm_name(), which native_gemm() applies to its
/// configuration too): (mr, nr) is a micro-kernel of the build,
/// mc a positive multiple of mr, nc a positive multiple of nr, kc > 0, threads >= 1.
struct NativeBlocking {
  int mr = 16, nr = 6;
  int kc = 256, mc = 96, nc = 4032;
  NativeOrder order = NativeOrder::kJI;
  int threads = 1;
  /// How `threads` > 1 threads divide a call. false: they pack each kc x nc panel of B together
  /// and claim mc blocks of A (or split the nr panels of each block when there are fewer than 4
  /// blocks per thread), one barrier per round. true: each thread takes a contiguous share of
  /// the rows of C (whole mr panels; whole mc blocks when A is packed already) and multiplies
  /// it as one thread would, packing its own panels of B and blocks of A: no barrier, B packed
  /// once per thread.
  bool own_rows = false;
};

/// A micro-kernel shape a build offers.
struct NativeTile {
  int mr, nr;
};

/// The blocked GEMM on bf16 A and B (bits), fp32 C and accumulation, by one of three routes:
///  * widened: each element is converted to fp32 as it is packed, then the fp32 micro-kernels
///    run (every build);
///  * pairs: both operands are packed as pairs of consecutive depths and each k-step is one
///    VDPBF16PS per accumulator (AVX512-BF16: two products per fp32 lane; bf16 denormal inputs
///    and denormal results are flushed to zero). The x86-64-v4 build has it; call it only on a
///    CPU with the avx512_bf16 flag;
///  * tiles: the same pairs, 32 depths per TDPBF16PS on AMX tile registers, each 32 x 32 tile of
///    C four accumulator tiles (src/ops/native_amx.inc; bf16 denormals flushed as by
///    VDPBF16PS). The x86-64-v4 build has it; call it only on a CPU with the amx_tile and
///    amx_bf16 flags in a process the kernel has permitted the tile state (hw::amx_permitted()).
struct NativeBf16Kernels {
  /// The tile shapes (mr x nr of C) of the route: the build's micro-kernels (widened, pairs) or
  /// its own (tiles: 32 x 32).
  const NativeTile* tiles;
  int tile_count;
  /// As NativeKernels::gemm; `packed_a` comes from this struct's pack_a().
  bool (*gemm)(const NativeBf16Call& call, const NativeBlocking& blocking, const float* packed_a);
  /// 32-bit words pack_a() writes for an m x k op(A) (a depth or a pair of depths per word).
  std::size_t (*packed_a_words)(std::int64_t m, std::int64_t k, const NativeBlocking& blocking);
  /// As NativeKernels::pack_a, into packed_a_words() words.
  bool (*pack_a)(const NativeBf16Call& call, const NativeBlocking& blocking, float* out);
};

/// Entry points of one build. Call them only on a CPU of the build's level.
struct NativeKernels {
  const char* level;        ///< "x86-64-v3" or "x86-64-v4"
  const NativeTile* tiles;  ///< micro-kernel shapes, first = the build's default
  int tile_count;
  int vector_floats;     ///< floats per vector register (8 or 16)
  int vector_registers;  ///< architectural vector registers (16 or 32)
  /// Runs `call` with `blocking`; `packed_a` (may be null) is op(A) packed by pack_a() with the
  /// same mr, mc and kc (constant weights: call.a is then not read). Returns false when the
  /// blocking's tile is not one of this build's (nothing is computed then).
  bool (*gemm)(const NativeCall& call, const NativeBlocking& blocking, const float* packed_a);
  /// Floats pack_a() writes for an m x k op(A) with this blocking.
  std::size_t (*packed_a_floats)(std::int64_t m, std::int64_t k, const NativeBlocking& blocking);
  /// Packs op(A) of `call` (its a, lda, transa, m, k) into `out` (packed_a_floats() floats), in
  /// the mc x kc blocks of mr-row panels the driver reads. False for a tile not of this build.
  bool (*pack_a)(const NativeCall& call, const NativeBlocking& blocking, float* out);
  /// Decode kernel for few columns (n <= 16) with A stored k-contiguous per row of op(A)
  /// (transa 't'): each output row is a dot product streaming its row of A once; `rows` rows
  /// of A are read together, `threads` threads split the rows. Returns false when n > 16 or
  /// transa is 'n'.
  bool (*gemv_rows)(const NativeCall& call, int rows, int threads);
  /// gemv_rows for bf16 A and B: each vector of A is widened to fp32 as it is loaded (the weights
  /// stream as 2 bytes per element), B is widened once; fp32 accumulation and C.
  bool (*gemv_rows_bf16)(const NativeBf16Call& call, int rows, int threads);
  /// gemv_rows for bf16 A and B through AVX512-BF16 (VDPBF16PS on the bf16 rows and columns as
  /// they are; denormals flushed to zero), or null (x86-64-v3). Only for CPUs with avx512_bf16.
  bool (*gemv_rows_bf16_pairs)(const NativeBf16Call& call, int rows, int threads);
  /// The bf16 blocked GEMM, widened as packed.
  const NativeBf16Kernels* bf16_widened;
  /// The bf16 blocked GEMM through AVX512-BF16, or null (x86-64-v3).
  const NativeBf16Kernels* bf16_pairs;
  /// The bf16 blocked GEMM on AMX tiles, or null (x86-64-v3).
  const NativeBf16Kernels* bf16_tiles;
};

extern const NativeKernels kNativeKernelsV3;
extern const NativeKernels kNativeKernelsV4;

}  // namespace tunekit::ops::detail
