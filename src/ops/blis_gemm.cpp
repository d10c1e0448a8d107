// BLIS candidates "blis[arch=<a>]": one copy of libblis per sub-architecture, each in its own
// link-map namespace with BLIS_ARCH_TYPE set before it initialises, called through bli_?gemm.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "ops/gemm_internal.hpp"
#include "tunekit/core/log.hpp"

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

/// A BLIS 0.9 sub-architecture: its arch_t value (the order of blis.h's `arch_t` enum, which
/// BLIS_ARCH_TYPE must hold as a decimal integer: bli_env_get_var parses it with strtol) and
/// whether this CPU can run its kernels.
struct BlisArch {
  std::string_view name;
  int id;
  bool (*cpu_runs)();
};

bool has_avx512_skx() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("fma");
}
bool has_avx2_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool has_avx() { return __builtin_cpu_supports("avx"); }
bool has_ssse3() { return __builtin_cpu_supports("ssse3"); }
bool has_fma_avx() { return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx"); }
bool always() { return true; }
bool never() { return false; }

// Source: blis.h of BLIS 0.9.0 (Debian libblis-openmp-dev 0.9.0-1), `typedef enum { ... }
// arch_t`; configurations compiled into Debian's x86_64 build: BLIS_CONFIG_* in the same header.
// knl needs AVX512PF/ER and bulldozer FMA4 (both die with SIGILL on the project machine); knc
// is not compiled in (BLIS aborts).
constexpr BlisArch kBlisArchs[] = {
    {"skx", 0, has_avx512_skx},      {"knl", 1, never},
    {"haswell", 3, has_avx2_fma},    {"sandybridge", 4, has_avx},
    {"penryn", 5, has_ssse3},        {"zen3", 6, has_avx2_fma},
    {"zen2", 7, has_avx2_fma},       {"zen", 8, has_avx2_fma},
    {"excavator", 9, has_fma_avx},   {"steamroller", 10, has_fma_avx},
    {"piledriver", 11, has_fma_avx}, {"bulldozer", 12, never},
    {"generic", 25, always},
};
constexpr std::string_view kDefaultArchs[] = {"skx", "haswell"};
constexpr std::size_t kMaxBlisCopies = 4;

const BlisArch* find_arch(std::string_view name) {
  for (const BlisArch& a : kBlisArchs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

class BlisGemm final : public GemmCandidateBase {
 public:
  explicit BlisGemm(const BlisArch& arch)
      : GemmCandidateBase(fmt::format("blis[arch={}]", arch.name), "blis"), arch_(arch) {}

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
    if (!arch_.cpu_runs()) {
      return unsupported(
          fmt::format("this CPU lacks the instructions of BLIS's {} kernels", arch_.name));
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
  const BlisArch* a = find_arch(arch);
  if (a == nullptr) return nullptr;
  return std::make_unique<BlisGemm>(*a);
}

}  // namespace detail

std::vector<std::string> blis_archs() {
  std::vector<std::string> out;
  if (TUNEKIT_OPS_ASAN) return out;
  std::vector<std::string> wanted;
  if (const char* env = std::getenv("TUNEKIT_BLIS_ARCHS"); env != nullptr && *env != '\0') {
    std::string_view rest(env);
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      std::string_view name = rest.substr(0, comma);
      while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
      while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
      if (!name.empty()) wanted.emplace_back(name);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  } else {
    for (std::string_view name : detail::kDefaultArchs) wanted.emplace_back(name);
  }
  for (const std::string& name : wanted) {
    const detail::BlisArch* arch = detail::find_arch(name);
    if (arch == nullptr) {
      log::warn(
          fmt::format("TUNEKIT_BLIS_ARCHS: '{}' is not a BLIS 0.9 x86_64 configuration; "
                      "ignored",
                      name));
      continue;
    }
    if (!arch->cpu_runs()) {
      log::warn(
          fmt::format("TUNEKIT_BLIS_ARCHS: this CPU cannot run BLIS's '{}' kernels; "
                      "ignored",
                      name));
      continue;
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) continue;
    if (out.size() == detail::kMaxBlisCopies) {
      log::warn(
          fmt::format("TUNEKIT_BLIS_ARCHS: at most {} BLIS copies (static TLS); '{}' "
                      "ignored",
                      detail::kMaxBlisCopies, name));
      continue;
    }
    out.push_back(name);
  }
  return out;
}

}  // namespace tunekit::ops
