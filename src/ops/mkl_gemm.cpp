// MKL candidates (libmkl_rt of the `mkl` wheel): "mkl" (cblas_sgemm, cblas_dgemm and
// cblas_gemm_bf16bf16f32), "mkl_jit" (MKL's JIT kernels for small float/double problems) and
// "mkl[constant_b]" (the weights packed once by cblas_*_pack, for ops::Linear).
#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <vector>

#include "ops/gemm_internal.hpp"
#include "ops/mkl_api.hpp"
#include "tunekit/tunable/result_table.hpp"

namespace tunekit::ops::detail {
namespace {

int mkl_trans(char t) { return t == 'n' ? mkl::kNoTrans : mkl::kTrans; }

// "MKL 2026.2.1 ..." (the validator reads the second word as the version).
LibraryBinding mkl_binding(const MklApi& api, const void* entry, std::string symbol,
                           std::string_view what) {
  return describe_entry(
      entry, std::move(symbol),
      fmt::format("MKL {} ({}GNU OpenMP threading, code path {})", api.version, what, api.branch));
}

// MKL's first GEMM in a process costs about 35 ms (MKL_VERBOSE on the AMD EPYC Zen 4: 35.3 ms
// for a 512^3 call that takes 1.8 ms afterwards): paid once, untimed, in prepare().
Status warm_up() {
  static const Status warmed = [] {
    Expected<const MklApi*> api = mkl_api();
    if (!api) return api.status();
    sync_main_threads();
    (*api)->sync_threads();
    constexpr int kN = 32;
    std::vector<float> a(kN * kN, 0.5f), b(kN * kN, 0.5f), c(kN * kN, 0.0f);
    (*api)->sgemm(mkl::kColMajor, mkl::kNoTrans, mkl::kNoTrans, kN, kN, kN, 1.0f, a.data(), kN,
                  b.data(), kN, 0.0f, c.data(), kN);
    return Status::ok();
  }();
  return warmed;
}

// The shared start of every MKL candidate's run: the library and both thread settings.
Expected<const MklApi*> ready_api() {
  Expected<const MklApi*> api = mkl_api();
  if (!api) return api;
  sync_main_threads();
  (*api)->sync_threads();
  return api;
}

// ---------------------------------------------------------------------------------------------
// mkl

class MklGemm final : public GemmCandidateBase {
 public:
  MklGemm() : GemmCandidateBase("mkl", "mkl") {}

  Expected<LibraryBinding> binding() override {
    Expected<const MklApi*> api = mkl_api();
    if (!api) return api.status();
    return mkl_binding(**api, reinterpret_cast<const void*>((*api)->sgemm), "cblas_sgemm", "");
  }

 protected:
  Status supports_impl(const GemmParams&) const override {
    return Status::ok();  // float, double and bf16 natively; batches and bias as the others
  }

  Status prepare_impl(const GemmParams&) override { return warm_up(); }

  Status run_impl(const GemmParams& p) override {
    Expected<const MklApi*> ready = ready_api();
    if (!ready) return ready.status();
    const MklApi& api = **ready;
    return run_as_gemm_calls(p, /*native_bf16=*/true, [&api](const GemmCall& c) {
      const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), k = static_cast<int>(c.k);
      const int lda = static_cast<int>(c.lda), ldb = static_cast<int>(c.ldb),
                ldc = static_cast<int>(c.ldc);
      const int ta = mkl_trans(c.transa), tb = mkl_trans(c.transb);
      switch (c.real) {
        case DType::kFloat:
          api.sgemm(mkl::kColMajor, ta, tb, m, n, k, static_cast<float>(c.alpha),
                    static_cast<const float*>(c.a), lda, static_cast<const float*>(c.b), ldb,
                    static_cast<float>(c.beta), static_cast<float*>(c.c), ldc);
          break;
        case DType::kDouble:
          api.dgemm(mkl::kColMajor, ta, tb, m, n, k, c.alpha, static_cast<const double*>(c.a), lda,
                    static_cast<const double*>(c.b), ldb, c.beta, static_cast<double*>(c.c), ldc);
          break;
        case DType::kBFloat16Float:
          api.gemm_bf16(mkl::kColMajor, ta, tb, m, n, k, static_cast<float>(c.alpha),
                        static_cast<const std::uint16_t*>(c.a), lda,
                        static_cast<const std::uint16_t*>(c.b), ldb, static_cast<float>(c.beta),
                        static_cast<float*>(c.c), ldc);
          break;
        case DType::kBFloat16:
          return bf16_output_call();
      }
      return Status::ok();
    });
  }
};

// ---------------------------------------------------------------------------------------------
// mkl_jit

/// Largest m*n*k offered to MKL's JIT: it generates kernels for small problems only (larger
/// ones get MKL_NO_JIT, a jitter that calls the standard GEMM); the same bound as libxsmm's.
constexpr double kMaxJitMnk = 128.0 * 128.0 * 128.0;

/// What a JIT kernel is generated for: the shape, layouts and the alpha and beta it bakes in.
struct JitKey {
  GemmKey problem;
  std::uint64_t alpha_bits = 0, beta_bits = 0;
  friend bool operator==(const JitKey&, const JitKey&) = default;
};
std::uint64_t jit_key_hash(const JitKey& k) noexcept {
  return (GemmParams::hash(k.problem) ^ k.alpha_bits * 0x9e3779b97f4a7c15ULL) * 0x100000001b3ULL ^
         k.beta_bits;
}

/// A generated kernel and the jitter that owns it (MKL_NO_JIT or a failure: fn null).
struct JitKernel {
  void* jitter = nullptr;
  void* fn = nullptr;
};

class MklJit final : public GemmCandidateBase {
 public:
  MklJit() : GemmCandidateBase("mkl_jit", "mkl") {}
  ~MklJit() override {
    if (Expected<const MklApi*> api = mkl_api()) {
      for (const JitKernel& k : generated_) {
        if (k.jitter != nullptr) (*api)->jit_destroy(k.jitter);
      }
    }
  }
  MklJit(const MklJit&) = delete;
  MklJit& operator=(const MklJit&) = delete;

  Expected<LibraryBinding> binding() override {
    Expected<const MklApi*> api = mkl_api();
    if (!api) return api.status();
    return mkl_binding(**api, reinterpret_cast<const void*>((*api)->jit_create_sgemm),
                       "mkl_cblas_jit_create_sgemm", "JIT kernels, ");
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (p.dtype == DType::kBFloat16Float) return unsupported("MKL has no bf16 JIT GEMM");
    if (static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) >
        kMaxJitMnk) {
      return unsupported(
          fmt::format("m*n*k = {}*{}*{} exceeds 128^3 (small problems only)", p.m, p.n, p.k));
    }
    return Status::ok();
  }

  Status prepare_impl(const GemmParams& p) override { return kernel(p).status(); }

  Status run_impl(const GemmParams& p) override {
    Expected<const JitKernel*> k = kernel(p);
    if (!k) return k.status();
    // One kernel serves every batch entry (same shape, alpha and beta); the bias is added after,
    // as for the other candidates. JIT kernels take non-const operands but read A and B only.
    using Kernel = void (*)(void*, void*, void*, void*);
    const auto fn = reinterpret_cast<Kernel>((*k)->fn);
    void* jitter = (*k)->jitter;
    return run_as_gemm_calls(p, /*native_bf16=*/false, [fn, jitter](const GemmCall& c) {
      fn(jitter, const_cast<void*>(c.a), const_cast<void*>(c.b), c.c);
      return Status::ok();
    });
  }

 private:
  // The JIT kernel for `p`, generated once per key (failures cached too). One lock-free probe
  // on the call path.
  Expected<const JitKernel*> kernel(const GemmParams& p) {
    const JitKey key{p.key(), std::bit_cast<std::uint64_t>(p.alpha),
                     std::bit_cast<std::uint64_t>(p.beta)};
    const CachedSolution<JitKey>* e = kernels_.find(key);
    const auto* k = static_cast<const JitKernel*>(e != nullptr ? e->target : generate(p, key));
    if (k->fn == nullptr) {
      return unsupported(fmt::format("MKL has no JIT kernel for {} {} (alpha {}, beta {})",
                                     p.op_signature(), p.signature(), p.alpha, p.beta));
    }
    return k;
  }

  const JitKernel* generate(const GemmParams& p, const JitKey& key) {
    std::lock_guard lock(mutex_);
    if (const auto* e = kernels_.find(key)) return static_cast<const JitKernel*>(e->target);
    JitKernel& made = generated_.emplace_back();
    if (Expected<const MklApi*> api = mkl_api()) {
      const int ta = mkl_trans(p.a_is_n() ? 'n' : 't'), tb = mkl_trans(p.b_is_n() ? 'n' : 't');
      const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
      const int lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb),
                ldc = static_cast<int>(p.ldc);
      const int status = p.dtype == DType::kDouble
                             ? (*api)->jit_create_dgemm(&made.jitter, mkl::kColMajor, ta, tb, m, n,
                                                        k, p.alpha, lda, ldb, p.beta, ldc)
                             : (*api)->jit_create_sgemm(&made.jitter, mkl::kColMajor, ta, tb, m, n,
                                                        k, static_cast<float>(p.alpha), lda, ldb,
                                                        static_cast<float>(p.beta), ldc);
      if (status == mkl::kJitSuccess) {
        made.fn = p.dtype == DType::kDouble ? (*api)->jit_get_dgemm_ptr(made.jitter)
                                            : (*api)->jit_get_sgemm_ptr(made.jitter);
      }
    }
    kernels_.publish(CachedSolution<JitKey>{key, 0, CachedKind::kResult, 0, &made});
    return &made;
  }

  std::mutex mutex_;                            // serialises generate()
  std::deque<JitKernel> generated_;             // stable addresses; jitters destroyed with it
  ResultTable<JitKey, &jit_key_hash> kernels_;  // key -> JitKernel (target)
};

// ---------------------------------------------------------------------------------------------
// mkl[constant_b]

class MklConstant final : public GemmCandidateBase {
 public:
  MklConstant() : GemmCandidateBase("mkl[constant_b]", "mkl") {}

  Expected<LibraryBinding> binding() override {
    Expected<const MklApi*> api = mkl_api();
    if (!api) return api.status();
    return mkl_binding(**api, reinterpret_cast<const void*>((*api)->sgemm_compute),
                       "cblas_sgemm_compute", "weights packed once, ");
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (p.kind == GemmKind::kStridedBatched) return unsupported("one weight matrix, no batches");
    if (p.dtype == DType::kDouble) return unsupported("float and bf16 weights only");
    return Status::ok();
  }

  Status prepare_impl(const GemmParams&) override { return warm_up(); }

  Status run_impl(const GemmParams& p) override {
    Expected<const MklApi*> ready = ready_api();
    if (!ready) return ready.status();
    const MklApi& api = **ready;
    Expected<const void*> packed = packed_weights(api, p);
    if (!packed) return packed.status();
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int tb = mkl_trans(p.b_is_n() ? 'n' : 't');
    if (p.dtype == DType::kBFloat16Float) {
      api.bf16_compute(mkl::kColMajor, mkl::kPacked, tb, m, n, k, static_cast<float>(p.alpha),
                       static_cast<const std::uint16_t*>(*packed), static_cast<int>(p.lda),
                       static_cast<const std::uint16_t*>(p.b), static_cast<int>(p.ldb),
                       static_cast<float>(p.beta), static_cast<float*>(p.c),
                       static_cast<int>(p.ldc));
    } else {
      api.sgemm_compute(
          mkl::kColMajor, mkl::kPacked, tb, m, n, k, static_cast<const float*>(*packed),
          static_cast<int>(p.lda), static_cast<const float*>(p.b), static_cast<int>(p.ldb),
          static_cast<float>(p.beta), static_cast<float*>(p.c), static_cast<int>(p.ldc));
    }
    if (p.kind == GemmKind::kGemmAndBias) add_bias(DType::kFloat, p.c, p.ldc, p.m, p.n, p.bias);
    return Status::ok();
  }

 private:
  // The weights (op(A)) packed on this instance's first run. sgemm's pack bakes alpha in, so a
  // float problem with another alpha packs again.
  Expected<const void*> packed_weights(const MklApi& api, const GemmParams& p) {
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int ta = mkl_trans(p.a_is_n() ? 'n' : 't'), lda = static_cast<int>(p.lda);
    const bool bf16 = p.dtype == DType::kBFloat16Float;
    const std::size_t bytes = bf16 ? api.bf16_pack_get_size(mkl::kAMatrix, m, n, k)
                                   : api.sgemm_pack_get_size(mkl::kAMatrix, m, n, k);
    const bool repack = !bf16 && packed_alpha_.exchange(p.alpha) != p.alpha;
    return packed_.get(p, bytes, repack, [&](void* dest) {
      if (bf16) {
        api.bf16_pack(mkl::kColMajor, mkl::kAMatrix, ta, m, n, k,
                      static_cast<const std::uint16_t*>(p.a), lda,
                      static_cast<std::uint16_t*>(dest));
      } else {
        api.sgemm_pack(mkl::kColMajor, mkl::kAMatrix, ta, m, n, k, static_cast<float>(p.alpha),
                       static_cast<const float*>(p.a), lda, static_cast<float*>(dest));
      }
      return Status::ok();
    });
  }

  PackedWeights packed_;
  std::atomic<double> packed_alpha_{1.0};  // the alpha the float pack baked in
};

}  // namespace

std::unique_ptr<GemmCandidate> make_mkl() { return std::make_unique<MklGemm>(); }
std::unique_ptr<GemmCandidate> make_mkl_jit() { return std::make_unique<MklJit>(); }
std::unique_ptr<GemmCandidate> make_mkl_constant() { return std::make_unique<MklConstant>(); }

}  // namespace tunekit::ops::detail
