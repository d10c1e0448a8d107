// Internals shared by the GEMM candidates: the common candidate skeleton, the BLAS-style driver
// (batch loop, bf16 staging, bias epilogue), library namespaces (dlmopen) and thread syncing.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/hardware.hpp"
#include "tunekit/ops/gemm_candidates.hpp"
#include "tunekit/ops/gemm_params.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define TUNEKIT_OPS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TUNEKIT_OPS_ASAN 1
#endif
#endif
#ifndef TUNEKIT_OPS_ASAN
#define TUNEKIT_OPS_ASAN 0
#endif

namespace tunekit::ops::detail {

/// One non-batched GEMM in BLAS column-major terms; `real` is the element type of a, b and c
/// (kFloat or kDouble; kBFloat16Float for bf16 a and b with float c where the library has a bf16
/// entry point, else they arrive as kFloat after staging). Never kBFloat16: a bf16 C reaches
/// the candidates as a float C (bf16_output.hpp).
struct GemmCall {
  DType real = DType::kFloat;
  char transa = 'n';  ///< lower case
  char transb = 'n';  ///< lower case
  std::int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 0.0;
  const void* a = nullptr;
  std::int64_t lda = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  void* c = nullptr;
  std::int64_t ldc = 0;
};

/// A non-owning reference to a callable `Status(const GemmCall&)`: one indirect call, no
/// allocation (unlike std::function). The callable must outlive the reference.
class GemmCallRef {
 public:
  template <class F>
  GemmCallRef(F& gemm) noexcept  // NOLINT(google-explicit-constructor)
      : object_(&gemm),
        call_([](void* object, const GemmCall& call) { return (*static_cast<F*>(object))(call); }) {
  }
  Status operator()(const GemmCall& call) const { return call_(object_, call); }

 private:
  void* object_;
  Status (*call_)(void*, const GemmCall&);
};

/// The single GemmCall of a plain GEMM (kGemm) whose operands the library takes as they are
/// (not bf16, or bf16 with `native_bf16`).
inline GemmCall plain_gemm_call(const GemmParams& p) noexcept {
  GemmCall call;
  call.real = p.dtype;
  call.transa = p.a_is_n() ? 'n' : 't';
  call.transb = p.b_is_n() ? 'n' : 't';
  call.m = p.m;
  call.n = p.n;
  call.k = p.k;
  call.alpha = p.alpha;
  call.beta = p.beta;
  call.a = p.a;
  call.lda = p.lda;
  call.b = p.b;
  call.ldb = p.ldb;
  call.c = p.c;
  call.ldc = p.ldc;
  return call;
}

/// run_as_gemm_calls() for every problem that is not a plain GEMM: the batch loop, bf16 staging
/// and the bias epilogue.
Status run_as_gemm_call_sequence(const GemmParams& params, bool native_bf16, GemmCallRef gemm);

/// Runs `params` as a sequence of GemmCall: one per batch entry (kStridedBatched), bf16 operands
/// converted to compact float copies first unless `native_bf16` (then `real` is kBFloat16Float
/// and C is float), and for kGemmAndBias the bias added to every column afterwards. Conversions and
/// the bias epilogue are single-threaded, so no second thread pool is woken inside a call.
/// A plain GEMM is one direct call of `gemm` (inline: the dispatch path of small problems).
template <class Gemm>
Status run_as_gemm_calls(const GemmParams& params, bool native_bf16, Gemm&& gemm) {
  if (params.kind == GemmKind::kGemm && (params.dtype != DType::kBFloat16Float || native_bf16)) {
    return gemm(plain_gemm_call(params));
  }
  return run_as_gemm_call_sequence(params, native_bf16, GemmCallRef(gemm));
}

/// 64-byte aligned memory (oneDNN scratchpads, packed weights), grown on demand, freed with its
/// owner.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(data_); }
  /// At least `bytes` bytes; nullptr when out of memory.
  void* get(std::size_t bytes) {
    if (bytes > capacity_) {
      std::free(data_);
      capacity_ = (bytes + 63) / 64 * 64;
      data_ = std::aligned_alloc(64, capacity_);
      if (data_ == nullptr) capacity_ = 0;
    }
    return data_;
  }
  /// The buffer (nullptr before the first get()) and its size in bytes.
  void* data() const noexcept { return data_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// The weights (op(A)) a constant-weights candidate packed on its first run: one instance serves
/// one problem, whose A never changes (ops::Linear). Thread-safe.
class PackedWeights {
 public:
  /// Packs `bytes` bytes with `pack(dest) -> Status` on the first call (and again when
  /// `repack`, e.g. sgemm's pack baked in another alpha), then returns the same buffer.
  /// Errors: kUnsupported for another problem than the first; kRuntimeError when out of memory;
  /// those of `pack`.
  template <class Pack>
  Expected<const void*> get(const GemmParams& p, std::size_t bytes, bool repack, Pack&& pack) {
    std::lock_guard lock(mutex_);
    if (ready_ && !(key_ == p.key())) {
      return Status(StatusCode::kUnsupported,
                    "a constant-weights instance serves the one problem it packed for");
    }
    if (ready_ && !repack) return static_cast<const void*>(buffer_.get(0));
    void* dest = buffer_.get(bytes);
    if (dest == nullptr) return Status(StatusCode::kRuntimeError, "out of memory");
    TUNEKIT_RETURN_IF_ERROR(pack(dest));
    key_ = p.key();
    ready_ = true;
    return static_cast<const void*>(dest);
  }

 private:
  std::mutex mutex_;
  AlignedBuffer buffer_;
  GemmKey key_{};
  bool ready_ = false;
};

/// The status of a GemmCall with bf16 C, which never happens: GemmCandidateBase gives such
/// problems to the candidates as their float-C twin. kInternal.
inline Status bf16_output_call() {
  return Status(StatusCode::kInternal, "a bf16 C reached a float-C entry point");
}

/// Adds bias[i] to C(i, j) for the m x n matrix at `c` (column-major, ldc).
void add_bias(DType output, void* c, std::int64_t ldc, std::int64_t m, std::int64_t n,
              const void* bias);

/// Describes the object holding `entry` (dladdr1 + dlinfo): file and link-map namespace.
LibraryBinding describe_entry(const void* entry, std::string symbol, std::string detail);

/// The skeleton every GEMM candidate shares: supports() validates the shape then asks
/// supports_impl(); prepare() runs prepare_impl() and then, when the last GEMM ran in another
/// OpenMP runtime, settle_threads(); run() validates, re-checks support (so an unsupported
/// problem is a status, never a crash), notes its runtime and calls run_impl(). run_resolved()
/// (a TunableOp hit, whose key was validated) checks only passes_call_checks() before
/// supports_impl(), and runs run()'s full checks (and gives their message) when that fails.
/// A bf16-C problem (DType::kBFloat16) of a candidate that does not write bf16 C itself
/// (writes_bf16_output() false) reaches the *_impl() hooks as its float-C twin
/// (kBFloat16Float): supports_impl() and prepare_impl() see float_output_twin(), and run_impl()
/// runs inside run_with_float_output() (bf16_output.hpp), which rounds the float C to bf16.
class GemmCandidateBase : public GemmCandidate {
 public:
  GemmCandidateBase(std::string name, std::string library)
      : name_(std::move(name)), library_(std::move(library)) {}
  const std::string& name() const final { return name_; }
  std::string_view library() const final { return library_; }
  Status supports(const GemmParams& params) const final;
  Status prepare(const GemmParams& params) final;
  Status run(const GemmParams& params) final;
  Status run_resolved(const GemmParams& params) final;

 protected:
  virtual Status supports_impl(const GemmParams& params) const = 0;
  virtual Status prepare_impl(const GemmParams& params) { return Status::ok(); }
  virtual Status run_impl(const GemmParams& params) = 0;
  /// The thread pool the candidate's threads come from: 0 for the main program's libgomp
  /// (OpenBLAS Default, oneDNN 2 and 3, MKL, Eigen; libxsmm and JIT kernels run on the caller's
  /// thread), the link-map namespace of its library copy, or kWheelOpenblasRuntime.
  virtual long runtime_id() const { return 0; }
  /// True when run_impl() takes kBFloat16 problems as they are and writes bf16 C itself (the
  /// oneDNN matmul primitives); false (the default) sends them through the shared adapter.
  virtual bool writes_bf16_output() const { return false; }
  /// kUnsupported "<name>: <reason>".
  Status unsupported(std::string_view reason) const;

 private:
  /// True when `params` goes through the bf16-output adapter.
  bool adapts(const GemmParams& params) const {
    return params.dtype == DType::kBFloat16 && !writes_bf16_output();
  }
  /// run()'s and run_resolved()'s tail for adapted problems: supports_impl() and run_impl() on
  /// the float-C twin, inside run_with_float_output().
  Status run_adapted(const GemmParams& params);

  std::string name_;
  std::string library_;
};

/// runtime_id() of the scipy-openblas32 wheel's pthreads pool.
constexpr long kWheelOpenblasRuntime = 1L << 20;

/// Makes the calling thread's libgomp thread count (used by OpenBLAS, oneDNN and Eigen in the
/// main namespace) equal num_threads(). Cheap when already equal.
void sync_main_threads() noexcept;
/// Applies `threads` to Eigen (Eigen::setNbThreads); defined beside the Eigen candidate.
void set_eigen_threads(int threads) noexcept;
/// Records that a GEMM is about to run in OpenMP runtime `runtime` (see runtime_id()).
void note_runtime(long runtime) noexcept;
/// The runtime of the last GEMM run through a candidate; -1 before the first.
long last_runtime() noexcept;

/// A shared library loaded into its own link-map namespace (dlmopen(LM_ID_NEWLM)), with its own
/// copies of libc and libgomp and an environment of its own (the process environment plus
/// `overrides`). Loaded copies are never unloaded (their OpenMP threads may still run).
class LibraryNamespace {
 public:
  /// Sets the library's global thread count (e.g. bli_thread_set_num_threads).
  using ThreadSetter = std::function<void(void* handle, int threads)>;

  /// Loads `path` with environment entries `overrides` ("NAME=value", replacing same-named
  /// process entries) plus GOMP_SPINCOUNT=kNamespaceGompSpinCount unless the process sets
  /// GOMP_SPINCOUNT or OMP_WAIT_POLICY. The namespace's libc keeps this environment for good,
  /// so libraries that read variables at their first call (BLIS) see it too. A copy with the
  /// same path and overrides is loaded once per process and shared (candidate lists come and
  /// go; glibc has static TLS for only a few namespaces); `set_threads` of the first load wins.
  /// Errors: kUnsupported under AddressSanitizer or when dlmopen fails (message from dlerror,
  /// e.g. static TLS exhausted).
  static Expected<LibraryNamespace*> load(const std::string& path,
                                          const std::vector<std::string>& overrides,
                                          ThreadSetter set_threads);

  /// dlsym in this namespace (the library and its dependencies); nullptr when absent.
  void* symbol(const char* name) const noexcept;
  /// Link-map namespace id (dlinfo RTLD_DI_LMID).
  long namespace_id() const noexcept { return namespace_id_; }
  /// Applies num_threads() to the library (when changed) and to the calling thread's OpenMP
  /// setting inside this namespace. Cheap when nothing changed.
  void sync_threads() noexcept;

 private:
  LibraryNamespace() = default;
  std::string key_;  // path and overrides
  void* handle_ = nullptr;
  long namespace_id_ = 0;
  ThreadSetter set_threads_;
  std::atomic<int> applied_threads_{0};
  std::mutex set_mutex_;
  int (*omp_get_max_threads_)() = nullptr;
  void (*omp_set_num_threads_)(int) = nullptr;
  std::vector<std::string> env_strings_;  // the namespace's environment, kept alive
  std::vector<pthread_key_t> keys_;       // the namespace's own pthread keys (namespace_open.hpp)
  std::vector<char*> env_;
  friend void sync_all_namespaces() noexcept;
};

/// The process environment with `overrides` ("NAME=value") replacing same-named entries and the
/// rest appended: what a library copy or a wheel library sees while it initialises.
std::vector<std::string> environment_with(const std::vector<std::string>& overrides);

/// Applies num_threads() to every loaded namespace (called by set_num_threads).
void sync_all_namespaces() noexcept;

/// A BLIS 0.9 sub-architecture: its name, its arch_t value (the order of blis.h's `arch_t`
/// enum, which BLIS_ARCH_TYPE must hold as a decimal integer: bli_env_get_var parses it with
/// strtol) and whether a CPU has the instructions of its kernels.
struct BlisArch {
  std::string_view name;
  int id;
  bool (*runs_on)(const hw::CpuInfo&);
};
/// The BLIS 0.9 x86_64 configuration named `name`; nullptr when tunekit does not know it.
const BlisArch* find_blis_arch(std::string_view name);
/// Most BLIS copies per process: each needs static TLS for its own libc and libgomp, and glibc
/// reserves room for only a few namespaces (docs/candidates.md).
constexpr std::size_t kMaxBlisCopies = 4;

/// The x86-64 level an OpenBLAS 0.3.21 core's kernels need (case-insensitive core name):
/// v4 for SkylakeX, Cooperlake, SapphireRapids; v3 for Haswell, Zen, SkylakeX's AVX2 siblings;
/// v2 for Sandybridge (AVX); baseline for Prescott and cores tunekit does not know.
hw::X86Level openblas_core_level(std::string_view core);

/// Logs each of `warnings` (planning's, about TUNEKIT_BLIS_ARCHS) the first time it comes up in
/// the process; candidate lists are made more than once.
void warn_once(const std::vector<std::string>& warnings);

/// Candidate factories (one file per library family).
std::unique_ptr<GemmCandidate> make_openblas_default();
/// OpenBLAS forced to `core` (an OPENBLAS_CORETYPE value, e.g. "SkylakeX") in its own namespace,
/// named "openblas[core=<core in lower case>]". Loading it needs a CPU (host_cpu()) of the core's
/// level; otherwise kUnsupported.
std::unique_ptr<GemmCandidate> make_openblas_core(std::string core);
/// "blis[arch=<arch>]"; nullptr for an unknown arch. Loading it needs a CPU (host_cpu()) that
/// runs the arch's kernels; otherwise kUnsupported.
std::unique_ptr<GemmCandidate> make_blis(std::string arch);
std::unique_ptr<GemmCandidate> make_eigen();
/// How onednn_matmul treats the weights (op(A), oneDNN's weights): as given ("onednn_matmul"),
/// reordered into the layout the primitive prefers on every call ("onednn_matmul[packed_b]"),
/// or reordered once, on the instance's first run, and reused ("onednn_matmul[constant_b]";
/// the constant-weights mode of ops::Linear: such an instance serves one problem whose A never
/// changes, and refuses other problems with kUnsupported).
enum class OnednnWeights { kPlain, kPackedPerCall, kConstant };
std::unique_ptr<GemmCandidate> make_onednn_matmul(OnednnWeights weights);
std::unique_ptr<GemmCandidate> make_onednn_sgemm();
std::unique_ptr<GemmCandidate> make_libxsmm();
/// "scipy_openblas": OpenBLAS of the scipy-openblas32 wheel (prefixed symbols, own pthreads
/// pool); kUnsupported when the wheel is not there.
std::unique_ptr<GemmCandidate> make_scipy_openblas();
/// "mkl": cblas_sgemm / cblas_dgemm / cblas_gemm_bf16bf16f32 of the mkl wheel.
std::unique_ptr<GemmCandidate> make_mkl();
/// "mkl_jit": MKL's JIT kernels (mkl_jit_create_?gemm) for float/double problems up to
/// m*n*k = 128^3, generated once per shape, alpha and beta (a batch runs one kernel per entry).
std::unique_ptr<GemmCandidate> make_mkl_jit();
/// "mkl[constant_b]": op(A) packed once by cblas_sgemm_pack / cblas_gemm_bf16bf16f32_pack on the
/// instance's first run and reused (ops::Linear's constant weights; one problem per instance).
std::unique_ptr<GemmCandidate> make_mkl_constant();
/// "onednn3_matmul" (kPlain) or "onednn3_matmul[constant_b]" (kConstant): the matmul primitive
/// of the oneDNN 3 wheel; kUnsupported when it is not there or tunekit was built without its
/// headers.
std::unique_ptr<GemmCandidate> make_onednn3_matmul(OnednnWeights weights);
/// The library candidates that pack constant weights once, where the plan for this CPU and
/// build offers their plain candidate, in ops::Linear's order: onednn_matmul[constant_b],
/// onednn3_matmul[constant_b], mkl[constant_b].
std::vector<std::unique_ptr<GemmCandidate>> constant_weight_libraries();
/// Whether tunekit was built with the oneDNN 3 wheel's headers (the onednn3 candidates exist).
bool onednn3_built();

}  // namespace tunekit::ops::detail
