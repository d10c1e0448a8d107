// BLIS candidates "blis[arch=<a>]": one copy of libblis per sub-architecture, each in its own
// link-map namespace with BLIS_ARCH_TYPE set before it initialises, called through bli_?gemm.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdint>
#include <mutex>
#include <string_view>

#include "ops/gemm_internal.hpp"

#ifndef TUNEKIT_BLIS_LIBRARY
#define TUNEKIT_BLIS_LIBRARY "libblis.so.4"
#endif

namespace tunekit::ops {
namespace detail {
namespace {

// BLIS 0.9 integer types (blis.h: gint_t is int64_t when BLIS_INT_TYPE_SIZE is 64, the
// automatic choice on x86_64) and the typed level-3 API:
//   void bli_sgemm(trans_t transa, trans_t transb, dim_t m, dim_t n, dim_t k, float* alpha,
//                  float* a, inc_t rs_a, inc_t cs_a, float* b, inc_t rs_b, inc_t cs_b,
//                  float* beta, float* c, inc_t rs_c, inc_t cs_c);
// Transposition is expressed through the strides (rs, cs) of op(A) and op(B), so trans_t is
// always BLIS_NO_TRANSPOSE (0).
using dim_t = std::int64_t;
using inc_t = std::int64_t;
constexpr int kBlisNoTranspose = 0;
using BliSgemm = void (*)(int, int, dim_t, dim_t, dim_t, const float*, const float*, inc_t, inc_t,
                          const float*, inc_t, inc_t, const float*, float*, inc_t, inc_t);
using BliDgemm = void (*)(int, int, dim_t, dim_t, dim_t, const double*, const double*, inc_t, inc_t,
                          const double*, inc_t, inc_t, const double*, double*, inc_t, inc_t);

class BlisGemm final : public GemmCandidateBase {
 public:
  explicit BlisGemm(const BlisArch& arch)
      : GemmCandidateBase(fmt::format("blis[arch={}]", arch.name), "blis"), arch_(arch) {}

  bool own_thread_pool() const override { return true; }

  Expected<LibraryBinding> binding() override {
    TUNEKIT_RETURN_IF_ERROR(load());
    return describe_entry(reinterpret_cast<const void*>(sgemm_), "bli_sgemm",
                          fmt::format("BLIS {} arch={}", version_, active_arch_));
  }

 protected:
  Status supports_impl(const GemmParams&) const override {
    return Status::ok();  // float, double; bf16 staged to float; bias as epilogue
  }

  Status prepare_impl(const GemmParams&) override { return load(); }

  long runtime_id() const override { return namespace_id_.load(std::memory_order_relaxed); }

  Status run_impl(const GemmParams& p) override {
    TUNEKIT_RETURN_IF_ERROR(load());
    ns_->sync_threads();
    return run_as_gemm_calls(p, /*native_bf16=*/false, [this](const GemmCall& c) {
      // op(A) is m x k: element (i, p) at a[i*rs + p*cs].
      const inc_t rs_a = c.transa == 'n' ? 1 : c.lda;
      const inc_t cs_a = c.transa == 'n' ? c.lda : 1;
      const inc_t rs_b = c.transb == 'n' ? 1 : c.ldb;
      const inc_t cs_b = c.transb == 'n' ? c.ldb : 1;
      if (c.real == DType::kDouble) {
        const double alpha = c.alpha, beta = c.beta;
        dgemm_(kBlisNoTranspose, kBlisNoTranspose, c.m, c.n, c.k, &alpha,
               static_cast<const double*>(c.a), rs_a, cs_a, static_cast<const double*>(c.b), rs_b,
               cs_b, &beta, static_cast<double*>(c.c), 1, c.ldc);
      } else {
        const float alpha = static_cast<float>(c.alpha), beta = static_cast<float>(c.beta);
        sgemm_(kBlisNoTranspose, kBlisNoTranspose, c.m, c.n, c.k, &alpha,
               static_cast<const float*>(c.a), rs_a, cs_a, static_cast<const float*>(c.b), rs_b,
               cs_b, &beta, static_cast<float*>(c.c), 1, c.ldc);
      }
      return Status::ok();
    });
  }

 private:
  Status load() {
    std::call_once(once_, [this] { loaded_ = load_now(); });
    return loaded_;
  }

  Status load_now() {
    // The list may be planned for another CPU (TUNEKIT_CPU_FIXTURE): run only what this one can.
    if (!arch_.runs_on(hw::host_cpu())) {
      return unsupported(fmt::format("this CPU ({}) lacks the instructions of BLIS's {} kernels",
                                     hw::host_cpu().describe(), arch_.name));
    }
    auto ns = LibraryNamespace::load(
        TUNEKIT_BLIS_LIBRARY, {fmt::format("BLIS_ARCH_TYPE={}", arch_.id)},
        [](void* handle, int threads) {
          if (auto* set =
                  reinterpret_cast<void (*)(dim_t)>(dlsym(handle, "bli_thread_set_num_threads"))) {
            set(threads);
          }
        });
    if (!ns) return unsupported(ns.status().message());
    ns_ = *ns;
    auto version = reinterpret_cast<const char* (*)()>(ns_->symbol("bli_info_get_version_str"));
    auto init = reinterpret_cast<void (*)()>(ns_->symbol("bli_init"));
    auto query_id = reinterpret_cast<int (*)()>(ns_->symbol("bli_arch_query_id"));
    auto arch_string = reinterpret_cast<const char* (*)(int)>(ns_->symbol("bli_arch_string"));
    sgemm_ = reinterpret_cast<BliSgemm>(ns_->symbol("bli_sgemm"));
    dgemm_ = reinterpret_cast<BliDgemm>(ns_->symbol("bli_dgemm"));
    if (!version || !init || !query_id || !arch_string || !sgemm_ || !dgemm_) {
      return unsupported(fmt::format("{} lacks the BLIS 0.9 typed API", TUNEKIT_BLIS_LIBRARY));
    }
    version_ = version() != nullptr ? version() : "";
    // The arch_t numbering above is BLIS 0.9's; another version could abort on an id it lacks.
    if (!version_.starts_with("0.9")) {
      return unsupported(
          fmt::format("BLIS {} is not 0.9.x, whose arch_t numbering tunekit uses", version_));
    }
    init();  // reads BLIS_ARCH_TYPE from the namespace's environment
    const int active = query_id();
    active_arch_ = arch_string(active) != nullptr ? arch_string(active) : "?";
    if (active != arch_.id) {
      return unsupported(fmt::format("BLIS_ARCH_TYPE={} selected '{}'", arch_.id, active_arch_));
    }
    ns_->sync_threads();
    namespace_id_.store(ns_->namespace_id(), std::memory_order_relaxed);
    return Status::ok();
  }

  const BlisArch& arch_;
  std::atomic<long> namespace_id_{0};
  std::once_flag once_;
  Status loaded_;
  LibraryNamespace* ns_ = nullptr;
  BliSgemm sgemm_ = nullptr;
  BliDgemm dgemm_ = nullptr;
  std::string version_;
  std::string active_arch_;
};

}  // namespace

std::unique_ptr<GemmCandidate> make_blis(std::string arch) {
  const BlisArch* a = find_blis_arch(arch);
  if (a == nullptr) return nullptr;
  return std::make_unique<BlisGemm>(*a);
}

}  // namespace detail
}  // namespace tunekit::ops
