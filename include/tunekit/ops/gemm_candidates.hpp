// GEMM candidates backed by real libraries (OpenBLAS, BLIS per sub-architecture, Eigen, oneDNN,
// libxsmm) and the ordered list a TunableOp<GemmParams> starts from.
#pragma once

#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_params.hpp"
#include "tunekit/tunable/candidate.hpp"

namespace tunekit::ops {

/// Where a candidate's computation runs: the entry point it calls and what the library reports
/// about itself. Used by tests (each candidate runs its own library) and reports.
struct LibraryBinding {
  std::string symbol;     ///< entry point called for float problems, e.g. "bli_sgemm"
  std::string file;       ///< object the entry point lives in (dladdr), e.g. ".../libblis.so.4"
  long namespace_id = 0;  ///< link-map namespace of that object (0: the main program's)
  std::string detail;     ///< library-reported configuration, e.g. "BLIS 0.9.0 arch=skx"
};

/// A GEMM candidate: Candidate<GemmParams> plus a description of the library it runs.
/// supports() is cheap and shape-only: kUnsupported (with the reason) for dtypes, kinds or
/// settings the library cannot do, kInvalidArgument for an invalid problem. prepare()
/// loads/initialises the library (first-call costs, JIT, primitive creation) and, when the last
/// GEMM ran in another OpenMP runtime, waits for that runtime's idle workers to stop spinning
/// (settle_threads()). run() validates (kInvalidArgument, e.g. null operands), then calls the
/// library; kUnsupported when the problem or the library is not available here, kRuntimeError when
/// it reports a failure. Thread-safe: run() may be called concurrently once prepare() has succeeded
/// for the problem.
class GemmCandidate : public Candidate<GemmParams> {
 public:
  /// The library entry point this candidate calls (loads the library when needed).
  /// Errors: kUnsupported when the library cannot be loaded on this machine or in this build.
  virtual Expected<LibraryBinding> binding() = 0;
  /// What the library runs for `params`, e.g. oneDNN's implementation name
  /// ("brg:avx512_core_amx_bf16"); by default binding().detail. May create/JIT the kernel.
  /// Errors: those of supports() and prepare().
  virtual Expected<std::string> implementation(const GemmParams& params);
  /// True when the library runs its threads in a pool of its own (a copy of libgomp in its
  /// link-map namespace: BLIS copies, OpenBLAS forced to another core; the scipy-openblas
  /// wheel's pthreads pool), whose idle workers spin against the program's own pool after each
  /// call (docs/candidates.md, "Thread-pool interference"); false for libraries on the
  /// program's libgomp or on the calling thread.
  virtual bool own_thread_pool() const { return false; }
};

/// The GEMM candidates of this machine in a stable order: plan_gemm_candidates() (gemm_plan.hpp)
/// for hw::cpu() and this build, which says which families and settings a CPU gets. Entry 0 is
/// "Default" (CBLAS through the OpenBLAS the program links, as a user would call it), then:
///   "openblas[core=<core>]"    the same OpenBLAS forced to another core (OPENBLAS_CORETYPE) in its
///                              own namespace, where that core measurably beats the linked one
///                              (skylakex where 0.3.21 falls back to Prescott on an AVX-512 CPU,
///                              haswell where it runs Zen);
///   "blis[arch=<a>]"           BLIS's typed API (bli_?gemm) with sub-architecture <a> forced, one
///                              library copy per namespace (see blis_archs());
///   "eigen"                    Eigen 3 products on mapped matrices (float, double), kernels built
///                              for x86-64-v4 and x86-64-v3 and chosen from the CPU; not offered
///                              below AVX2+FMA;
///   "onednn_matmul"            oneDNN's matmul primitive, cached per problem (float; bf16 native
///                              from AVX-512 up, staged to float below);
///   "onednn_sgemm"             oneDNN's dnnl_sgemm (float);
///   "libxsmm"                  libxsmm JIT kernels for small problems (m*n*k <= 128^3).
/// Library copies are left out where dlmopen namespaces do not work (AddressSanitizer). A list
/// planned for another CPU (TUNEKIT_CPU_FIXTURE, tests only) never runs instructions this CPU
/// lacks: such candidates answer kUnsupported. Creating the list is cheap: libraries are loaded
/// on first prepare()/run()/binding().
CandidateList<GemmParams> make_gemm_candidates();

/// BLIS sub-architectures offered on this CPU, in candidate order: plan_gemm_candidates()'s
/// (Intel AVX-512: skx, haswell; AMD family 25: zen3; other AVX2+FMA CPUs: haswell).
/// TUNEKIT_BLIS_ARCHS (comma-separated names of BLIS 0.9 configurations: skx, haswell, zen,
/// zen2, zen3, sandybridge, penryn, excavator, steamroller, piledriver, generic) replaces that
/// list; names the CPU cannot run (knl, bulldozer, skx without AVX-512) or BLIS does not know are
/// dropped with a warning. Empty under AddressSanitizer. The list is capped at 4 copies: each
/// needs static TLS for its own libc and libgomp, and glibc reserves room for only a few
/// namespaces.
std::vector<std::string> blis_archs();

/// The OpenBLAS core the linked OpenBLAS uses (openblas_get_corename(), e.g. "Prescott").
std::string openblas_core_name();

}  // namespace tunekit::ops
