// tunekit's own GEMM kernels as TunableOp candidates: the configurations of the two kernel
// families, their solution names, and their configuration spaces built from the CPU's facts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/hardware.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_candidates.hpp"
#include "tunekit/ops/gemm_params.hpp"
#include "tunekit/space/config_space.hpp"

namespace tunekit::ops {

/// Family names (TunableOp solution names start with them).
inline constexpr std::string_view kNativeGemmFamily = "native_f32";
inline constexpr std::string_view kNativeDecodeFamily = "native_decode_f32";
inline constexpr std::string_view kNativeDecodeBf16Family = "native_decode_bf16";

/// One configuration of the blocked GEMM family (GotoBLAS / BLIS structure): an mr x nr
/// register-blocked micro-kernel (mr rows of C in whole vectors, nr broadcast columns), A packed
/// in mc x kc blocks, B in kc x nc panels, the macro-kernel's loop order ("ji": column panels
/// outer, as BLIS; "ij": row panels outer), the OpenMP threads of one call and how they divide
/// it ("shared": they pack each panel of B together and claim blocks of A, a barrier per panel;
/// "own": each thread takes a contiguous share of the rows of C and packs its own panels, no
/// barrier; a call with fewer shares than threads runs "shared").
/// Invariants (parse and space guarantee them): (mr, nr) is a micro-kernel of a build this CPU
/// runs, mc a multiple of mr, nc a multiple of nr, 1 <= kc <= 2^20, 1 <= threads <= 1024, part
/// "shared" or "own".
struct NativeGemmConfig {
  int mr = 16, nr = 6, kc = 256, mc = 144, nc = 4092;
  std::string order = "ji";
  int threads = 1;
  std::string part = "shared";
  friend bool operator==(const NativeGemmConfig&, const NativeGemmConfig&) = default;
};

/// One configuration of the decode family: C = alpha op(A) op(B) + beta C for n <= 16 with A
/// stored row-contiguous (transa 't', the weights of a linear layer in TunableOp's frame); each
/// thread streams `rows` rows of A at once (1, 2, 4 or 8) against up to 8 columns of B.
/// `dtype` is that of A and B: kFloat ("native_decode_f32") or kBFloat16Float
/// ("native_decode_bf16": bf16 weights and activations widened to fp32 as they are loaded, fp32
/// accumulation, float C; parse_native_decode_name() gives kBFloat16Float, and the candidates
/// take kBFloat16 as kBFloat16Float). Either bf16 family also runs bf16-C problems (kBFloat16),
/// through the shared bf16-output adapter.
struct NativeDecodeConfig {
  int rows = 4;
  int threads = 1;
  DType dtype = DType::kFloat;
  friend bool operator==(const NativeDecodeConfig&, const NativeDecodeConfig&) = default;
};

/// "native_f32[mr=16;nr=6;kc=256;mc=144;nc=4092;order=ji;threads=2]"; part "own" adds
/// ";part=own" after threads (the default "shared" is not written, so names stored before the
/// knob existed still name the same configuration). No name has a comma, so that every line of a
/// results file is 4 fields to PyTorch's reader; the parsers also accept the ',' of older names.
std::string solution_name(const NativeGemmConfig& config);
/// "native_decode_f32[rows=4;threads=2]" ("native_decode_bf16[...]" for bf16).
std::string solution_name(const NativeDecodeConfig& config);

/// Parses a blocked-family solution name (fields in the order solution_name() writes them).
/// Errors: kNotFound when `name` does not start with "native_f32["; kParseError naming the field
/// for anything malformed or out of range; kUnsupported for a micro-kernel no build has or this
/// CPU cannot run (hw::host_cpu()).
Expected<NativeGemmConfig> parse_native_gemm_name(std::string_view name);
/// Parses a decode-family solution name (either dtype). Errors as parse_native_gemm_name().
Expected<NativeDecodeConfig> parse_native_decode_name(std::string_view name);

/// The micro-kernels (mr x nr) this CPU runs: the AVX-512 build's (32x12, 48x8, 16x24) where the
/// planned and the host CPU have AVX-512 (x86-64-v4), then the AVX2 build's (16x6, 24x4, 8x12)
/// where they have AVX2 + FMA (x86-64-v3); empty below.
std::vector<std::pair<int, int>> native_tiles();

/// The AMX tile shapes (mr x nr of C; 32x32) this process runs, for bf16 problems only: where
/// the planned and the host CPU have AVX-512, amx_tile and amx_bf16 and Linux granted the tile
/// state (hw::amx_permitted()); empty elsewhere (hw::amx_refusal() says why).
std::vector<std::pair<int, int>> native_amx_tiles();
/// Why native_amx_tiles() is empty, in one line ("" when it is not): the CPU the list is planned
/// for or the host lacks AVX-512 or the AMX flags, TUNEKIT_NATIVE_AMX is 0, or Linux refused the
/// tile state (hw::amx_refusal()). Asks for the tile state as native_amx_tiles() does.
std::string native_amx_refusal();

/// The blocked family's configuration space for `params` on `cpu` with up to `threads` threads.
/// Knobs: tile ("16x6", ...: native_tiles(), and for bf16 problems native_amx_tiles()), kc
/// (64..512; 64..1024 for bf16 problems), mc (48..768, used rounded down to a multiple of mr), nc
/// (256..8192, rounded down to a multiple of nr), order ("ji", "ij"), threads (1 and
/// `threads`) and part ("shared", and "own" when `threads` > 1, for more than one thread only).
/// Values far past the problem's dims are dropped (one value at or above m, n or k is
/// kept). Constraints from the hardware: the accumulators, one vector per mr/W rows and one
/// broadcast fit the vector registers (an AMX tile's 4 accumulator and 4 operand tiles fit the 8
/// tile registers); the kc x nr micro-panel of B fits in half the L1d; the mc x kc block of A fits
/// in L2; the kc x nc panel of B in half the LLC (cpu.l1d_bytes, l2_bytes, llc_bytes; 32 KiB, 512
/// KiB, 16 MiB when unknown), counting 4 bytes per packed element, or 2 where the tile's route
/// packs bf16 problems as bf16 (pairs of depths through AVX512-BF16, AMX tiles; the route of
/// hw::cpu() and the host, not of `cpu`). Errors: kUnsupported for a CPU without micro-kernels
/// (below x86-64-v3).
Expected<std::shared_ptr<const ConfigSpace>> native_gemm_space(const GemmParams& params,
                                                               const hw::CpuInfo& cpu, int threads);
/// The blocked family's starting configuration on `cpu` with `threads` threads, after the
/// analytical blocking of BLIS (Low et al., "Analytical Modeling Is Enough for High-Performance
/// BLIS", ACM TOMS 43(2), 2016): the first micro-kernel of the widest build; the largest kc of
/// the space whose kc x nr micro-panel of B takes at most half the L1d; the largest mc (a
/// multiple of mr, 48..768) whose mc x kc block of A takes at most 60% of L2; and nc up to 4096
/// with the kc x nc panel of B in at most half the LLC. Order "ji". Cache sizes default as in
/// native_gemm_space(). Bytes per packed element are 4, or 2 for bf16 problems where the tile's
/// route packs bf16 (native_gemm_space()); bf16 problems choose kc among 64..1024. The route is
/// that of hw::cpu() and the host, as for native_tiles(). Used as the search's first seed and
/// (float) by run() of the template.
NativeGemmConfig native_gemm_default(const hw::CpuInfo& cpu, int threads,
                                     DType dtype = DType::kFloat);
/// The same analytical blocking for the micro-kernel `mr` x `nr` (a tile of native_tiles()).
NativeGemmConfig native_gemm_default(const hw::CpuInfo& cpu, int threads, DType dtype, int mr,
                                     int nr);
/// The configuration a point of native_gemm_space() stands for (mc, nc rounded).
NativeGemmConfig native_gemm_config(const Config& config);
/// The space's point closest to `config` (same tile, order and threads where offered; nearest
/// kc, mc, nc; the same part, or "shared" where the point has one thread), if it is valid.
std::optional<Config> nearest_point(const ConfigSpace& space, const NativeGemmConfig& config);

/// The decode family's space: rows (1, 2, 4, 8) and threads (1 and `threads`).
Expected<std::shared_ptr<const ConfigSpace>> native_decode_space(int threads);
/// The configuration a point of native_decode_space() stands for, for A and B of `dtype`.
NativeDecodeConfig native_decode_config(const Config& config, DType dtype = DType::kFloat);

/// Runs one GEMM problem (GemmParams semantics, any kind; bf16 A and B through AVX512-BF16 where
/// the CPU has it and `config`'s micro-kernel is of the x86-64-v4 build, otherwise widened to
/// fp32 as they are packed; fp32 accumulation; float C, or a bf16 C (kBFloat16) rounded from a
/// float copy) with `config`.
/// Errors: kInvalidArgument for an invalid problem or a configuration a solution name could not
/// hold (parse_native_gemm_name()'s rules: kc, mc, nc, threads in range, mc and nc multiples of
/// mr and nr, order "ji" or "ij"); kUnsupported for double or a tile this CPU cannot run.
Status native_gemm(const GemmParams& params, const NativeGemmConfig& config);

/// The template candidates (TemplateCandidate<GemmParams>): "native_f32" (every float and bf16
/// problem, bf16 as native_gemm() runs it)
/// and "native_decode_f32" / "native_decode_bf16" (n <= 16, transa 't', float or bf16 problems
/// per `dtype`: kFloat, or kBFloat16Float / kBFloat16 for bf16 A and B). A bf16 C (kBFloat16)
/// runs the float-C kernels into a float copy that is rounded to bf16. Library "native"
/// (TUNEKIT_NATIVE_ENABLED). Each remembers the winning configurations of the problems it was
/// tuned on in this process and measures the nearest problems' winners first (transfer).
/// With `constant_a` (ops::Linear) the blocked family's instances pack op(A) once, on their
/// first run, and serve only that problem (plain GEMMs only).
std::unique_ptr<GemmCandidate> make_native_gemm_template(bool constant_a = false);
std::unique_ptr<GemmCandidate> make_native_decode_template(DType dtype = DType::kFloat);

}  // namespace tunekit::ops
