// plan_gemm_candidates(): which GEMM candidates a machine gets, as a pure function of its CPU
// facts, the core the linked OpenBLAS picked and the build, so other machines' lists are testable.
#pragma once

#include <string>
#include <vector>

#include "tunekit/core/hardware.hpp"

namespace tunekit::ops {

/// What a GEMM candidate list depends on besides the CPU.
struct GemmBuildFacts {
  /// The core the linked OpenBLAS runs (openblas_get_corename()), e.g. "Prescott", "Zen".
  std::string openblas_core;
  /// Library copies in dlmopen namespaces work (false under AddressSanitizer): BLIS and
  /// OpenBLAS-core candidates need them.
  bool namespaces = true;
  /// TUNEKIT_BLIS_ARCHS (comma-separated BLIS 0.9 configuration names); empty: unset, the
  /// planned list for the CPU applies.
  std::string blis_archs;
  /// Why the PyPI wheels' libraries cannot be used in this process (not installed, not found,
  /// no headers at build time, AddressSanitizer); empty: usable. MKL (`mkl`, `mkl_jit`), oneDNN 3
  /// (`onednn3_matmul`) and scipy-openblas32 (`scipy_openblas`).
  std::string mkl_missing, onednn3_missing, scipy_openblas_missing;
};

/// The facts of this process: the linked OpenBLAS's core, AddressSanitizer or not,
/// TUNEKIT_BLIS_ARCHS, which wheel libraries can be located (without loading them).
GemmBuildFacts this_build();

/// The candidate families of make_gemm_candidates(), in list order.
enum class GemmFamily {
  kOpenblasDefault,   ///< "Default"
  kOpenblasCore,      ///< "openblas[core=<core>]", setting: the OPENBLAS_CORETYPE value
  kBlis,              ///< "blis[arch=<arch>]", setting: the BLIS 0.9 configuration
  kEigen,             ///< "eigen", setting: the ISA build, "x86-64-v4" or "x86-64-v3"
  kOnednnMatmul,      ///< "onednn_matmul"
  kOnednnSgemm,       ///< "onednn_sgemm"
  kLibxsmm,           ///< "libxsmm"
  kScipyOpenblas,     ///< "scipy_openblas": OpenBLAS of the scipy-openblas32 wheel
  kOnednn3Matmul,     ///< "onednn3_matmul": the matmul primitive of the oneDNN 3 wheel
  kMkl,               ///< "mkl": MKL's CBLAS (sgemm, dgemm, gemm_bf16bf16f32)
  kMklJit,            ///< "mkl_jit": MKL's JIT kernels for small problems
  kNativeGemm,        ///< "native_f32": tunekit's blocked kernels, a template (native_gemm.hpp)
  kNativeDecode,      ///< "native_decode_f32": tunekit's decode kernels, a template
  kNativeDecodeBf16,  ///< "native_decode_bf16": the decode kernels on bf16 weights, a template
};

/// One planned candidate.
struct PlannedGemmCandidate {
  std::string name;  ///< canonical name: CSV value, CLI filter, log token
  GemmFamily family = GemmFamily::kOpenblasDefault;
  std::string setting;  ///< see GemmFamily; empty for families without one
};

/// A candidate the CPU would get but this process cannot offer, and why.
struct AbsentGemmCandidate {
  std::string name;
  std::string reason;
};

/// The planned list (Default first), the candidates left out for want of their library, and the
/// warnings planning produced (TUNEKIT_BLIS_ARCHS entries that were dropped, one line each).
struct GemmPlan {
  std::vector<PlannedGemmCandidate> candidates;
  std::vector<AbsentGemmCandidate> absent;
  std::vector<std::string> warnings;

  /// The candidates' names in order.
  std::vector<std::string> names() const;
  /// The settings of the candidates of `family` in order (e.g. the BLIS configurations).
  std::vector<std::string> settings(GemmFamily family) const;
  /// Whether a candidate of `family` is planned.
  bool offers(GemmFamily family) const;
};

/// The GEMM candidates for a machine with CPU `cpu` and build `build`, in list order. Rules
/// (measurements behind them in docs/candidates.md, "Candidates per CPU"):
///   * Default always; oneDNN matmul, dnnl_sgemm and libxsmm always (they dispatch on the CPU
///     themselves).
///   * openblas[core=<c>]: the best core the CPU can run (SkylakeX with AVX-512, Haswell with
///     AVX2+FMA) when the linked OpenBLAS runs a core of a lower ISA class (0.3.21 falls back to
///     Prescott on CPUs it does not know), or a core measured faster than the linked one (Haswell
///     where it runs Zen); only when namespaces work.
///   * blis[arch=<a>]: per CPU family (Intel AVX-512: skx, haswell; AMD family 25, Zen 3 and
///     Zen 4: zen3, what BLIS picks there; other AVX2+FMA CPUs: haswell), or
///     TUNEKIT_BLIS_ARCHS (names the CPU cannot run or BLIS 0.9 lacks are dropped with a
///     warning; at most 4 copies); none without namespaces.
///   * eigen: with x86-64-v4 or v3 (the build of that level), else not offered.
///   * scipy_openblas, onednn3_matmul, mkl, mkl_jit (the PyPI wheels): where their library is
///     usable, except where measured never to win: mkl_jit on Intel CPUs only (MKL makes no JIT
///     kernels on AMD), neither mkl nor scipy_openblas on AMD Zen 4 (family 25 with AVX-512);
///     each one left out is in `absent` with the reason.
///   * native_f32 and native_decode_f32 (tunekit's own kernels, searched per problem): with
///     x86-64-v3 or v4, last.
GemmPlan plan_gemm_candidates(const hw::CpuInfo& cpu, const GemmBuildFacts& build);

}  // namespace tunekit::ops
