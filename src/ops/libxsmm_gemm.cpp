// The "libxsmm" candidate: libxsmm 1.17 JIT kernels for small float/double GEMMs, generated once
// per shape (in prepare) and cached; single-threaded, as libxsmm's small-matrix kernels are.
#include <fmt/format.h>
#include <libxsmm.h>

#include <mutex>

#include "ops/gemm_internal.hpp"
#include "tunekit/tunable/result_table.hpp"

namespace tunekit::ops::detail {
namespace {

/// Largest m*n*k offered: libxsmm targets small matrices; beyond 128^3 the threaded libraries
/// win (measured on the Intel Xeon: at 64^3 OpenBLAS and libxsmm lead).
constexpr double kMaxMnk = 128.0 * 128.0 * 128.0;

struct KernelKey {
  DType dtype = DType::kFloat;
  char transa = 'n', transb = 'n';
  bool beta_one = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  friend bool operator==(const KernelKey&, const KernelKey&) = default;
};
std::uint64_t kernel_key_hash(const KernelKey& k) noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(k.dtype) * 31 + static_cast<std::uint64_t>(k.transa);
  for (std::int64_t v :
       {std::int64_t{k.transb}, std::int64_t{k.beta_one}, k.m, k.n, k.k, k.lda, k.ldb, k.ldc}) {
    h = (h ^ static_cast<std::uint64_t>(v)) * 0x100000001b3ULL;
  }
  return h;
}

void init_libxsmm() {
  static std::once_flag once;
  std::call_once(once, [] { libxsmm_init(); });  // ~5 ms (Intel Xeon)
}

class LibxsmmGemm final : public GemmCandidateBase {
 public:
  LibxsmmGemm() : GemmCandidateBase("libxsmm", "libxsmm") {}

  Expected<LibraryBinding> binding() override {
    init_libxsmm();
    const char* target = libxsmm_get_target_arch();
    return describe_entry(reinterpret_cast<const void*>(&libxsmm_smmdispatch),
                          "libxsmm_smmdispatch",
                          fmt::format("libxsmm {}.{} target={}", LIBXSMM_VERSION_MAJOR,
                                      LIBXSMM_VERSION_MINOR, target != nullptr ? target : "?"));
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (p.dtype == DType::kBFloat16Float) {
      return unsupported("libxsmm 1.17's bf16 kernels need VNNI-packed operands");
    }
    if (static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) > kMaxMnk) {
      return unsupported(
          fmt::format("m*n*k = {}*{}*{} exceeds 128^3 (small problems only)", p.m, p.n, p.k));
    }
    if (!p.a_is_n()) return unsupported("libxsmm 1.17 JIT kernels cannot transpose A");
    if (p.alpha != 1.0) return unsupported("libxsmm 1.17 JIT kernels need alpha == 1");
    if (p.beta != 0.0 && p.beta != 1.0) {
      return unsupported("libxsmm 1.17 JIT kernels need beta 0 or 1");
    }
    return Status::ok();
  }

  Status prepare_impl(const GemmParams& p) override { return kernel(p).status(); }

  Status run_impl(const GemmParams& p) override {
    Expected<void*> k = kernel(p);
    if (!k) return k.status();
    void* fn = *k;
    return run_as_gemm_calls(p, /*native_bf16=*/false, [fn](const GemmCall& c) {
      if (c.real == DType::kDouble) {
        reinterpret_cast<libxsmm_dmmfunction>(fn)(static_cast<const double*>(c.a),
                                                  static_cast<const double*>(c.b),
                                                  static_cast<double*>(c.c));
      } else {
        reinterpret_cast<libxsmm_smmfunction>(fn)(static_cast<const float*>(c.a),
                                                  static_cast<const float*>(c.b),
                                                  static_cast<float*>(c.c));
      }
      return Status::ok();
    });
  }

 private:
  // The JIT kernel for `p` (dispatched once per shape, cached, failures too).
  Expected<void*> kernel(const GemmParams& p) {
    KernelKey key;
    key.dtype = p.dtype;
    key.transa = p.a_is_n() ? 'n' : 't';
    key.transb = p.b_is_n() ? 'n' : 't';
    key.beta_one = p.beta == 1.0;
    key.m = p.m;
    key.n = p.n;
    key.k = p.k;
    key.lda = p.lda;
    key.ldb = p.ldb;
    key.ldc = p.ldc;
    void* fn = nullptr;
    // One lock-free probe (a reader lock's shared counter would bounce between threads calling
    // at once and double the call time of a 4x4x4 GEMM).
    if (const auto* e = kernels_.find(key); e != nullptr) {
      fn = e->target;
    } else {
      init_libxsmm();
      const auto m = static_cast<libxsmm_blasint>(p.m), n = static_cast<libxsmm_blasint>(p.n),
                 k = static_cast<libxsmm_blasint>(p.k);
      const auto lda = static_cast<libxsmm_blasint>(p.lda),
                 ldb = static_cast<libxsmm_blasint>(p.ldb),
                 ldc = static_cast<libxsmm_blasint>(p.ldc);
      const int flags = (key.transa == 't' ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) |
                        (key.transb == 't' ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
      const int prefetch = LIBXSMM_PREFETCH_NONE;
      if (p.dtype == DType::kDouble) {
        const double alpha = 1.0, beta = key.beta_one ? 1.0 : 0.0;
        fn = reinterpret_cast<void*>(
            libxsmm_dmmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch));
      } else {
        const float alpha = 1.0f, beta = key.beta_one ? 1.0f : 0.0f;
        fn = reinterpret_cast<void*>(
            libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, &prefetch));
      }
      std::lock_guard lock(mutex_);  // serialises publishers; a failure (null) is cached too
      kernels_.publish(CachedSolution<KernelKey>{key, 0, CachedKind::kResult, 0, fn});
    }
    if (fn == nullptr) {
      return unsupported(
          fmt::format("libxsmm has no kernel for {} {}", p.op_signature(), p.signature()));
    }
    return fn;
  }

  std::mutex mutex_;
  ResultTable<KernelKey, &kernel_key_hash> kernels_;  // shape -> JIT kernel (target)
};

}  // namespace

std::unique_ptr<GemmCandidate> make_libxsmm() { return std::make_unique<LibxsmmGemm>(); }

}  // namespace tunekit::ops::detail
