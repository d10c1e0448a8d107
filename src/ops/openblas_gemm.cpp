// OpenBLAS candidates: "Default" (CBLAS of the OpenBLAS the program links),
// "openblas[core=<core>]" (a second copy in its own namespace with OPENBLAS_CORETYPE forced) and
// "scipy_openblas" (the newer OpenBLAS of the scipy-openblas32 wheel, whose symbols are prefixed).
#include <cblas.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "ops/gemm_internal.hpp"
#include "ops/wheel_library.hpp"

namespace tunekit::ops {

std::string openblas_core_name() {
  const char* core = openblas_get_corename();
  return core != nullptr ? core : "";
}

namespace detail {
namespace {

using SgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         float, const float*, blasint, const float*, blasint, float, float*,
                         blasint);
using DgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                         double, const double*, blasint, const double*, blasint, double, double*,
                         blasint);
// cblas_sbgemm (OpenBLAS >= 0.3.10 builds with BUILD_BFLOAT16): bf16 A/B, float C.
using SbgemmFn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                          float, const void*, blasint, const void*, blasint, float, float*,
                          blasint);

/// The OpenBLAS entry points one candidate calls.
struct OpenBlasApi {
  SgemmFn sgemm = nullptr;
  DgemmFn dgemm = nullptr;
  SbgemmFn sbgemm = nullptr;  ///< null when the build has no bf16 GEMM (0.3.21 in Debian 12)
  char* (*get_config)() = nullptr;
  void (*set_threads)(int) = nullptr;  ///< the wheel's own thread count (its pthreads pool)
  LibraryNamespace* ns = nullptr;      ///< null for the linked OpenBLAS and the wheel
};

/// Which OpenBLAS a candidate runs.
enum class OpenBlasSource { kLinked, kCore, kWheel };

/// OPENBLAS_THREAD_TIMEOUT for the wheel's pthreads pool: its idle workers spin 2^20 cycles
/// (about 0.4 ms here) instead of 2^28 (about 0.1 s) before sleeping, so they stop competing
/// with the next library as soon as kNamespaceGompSpinCount lets libgomp's workers stop; calls
/// back to back still find them awake. Source: OpenBLAS's USAGE.md (the variable takes the
/// exponent, 4-30); the 0.5 ms target is docs/candidates.md, "Thread-pool interference".
constexpr int kWheelThreadTimeout = 20;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string candidate_name(OpenBlasSource source, const std::string& core) {
  switch (source) {
    case OpenBlasSource::kLinked:
      return "Default";
    case OpenBlasSource::kWheel:
      return "scipy_openblas";
    default:
      break;
  }
  return fmt::format("openblas[core={}]", lower(core));
}

// Path of the linked OpenBLAS (the file holding cblas_sgemm).
std::string linked_openblas_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cblas_sgemm), &info) != 0 && info.dli_fname) {
    return info.dli_fname;
  }
  return {};
}

CBLAS_TRANSPOSE cblas_trans(char t) { return t == 'n' ? CblasNoTrans : CblasTrans; }

class OpenBlasGemm final : public GemmCandidateBase {
 public:
  /// kLinked: the linked OpenBLAS ("Default"); kCore: a namespaced copy forced to `core` (an
  /// OPENBLAS_CORETYPE value such as "SkylakeX"); kWheel: scipy-openblas32's library.
  OpenBlasGemm(OpenBlasSource source, std::string core)
      : GemmCandidateBase(candidate_name(source, core),
                          source == OpenBlasSource::kWheel ? "scipy_openblas" : "openblas"),
        source_(source),
        core_(std::move(core)) {
    if (source_ == OpenBlasSource::kLinked) {
      api_.sgemm = &cblas_sgemm;
      api_.dgemm = &cblas_dgemm;
      api_.get_config = &openblas_get_config;
      // A newer OpenBLAS may export cblas_sbgemm; look it up in the linked library itself.
      const std::string path = linked_openblas_path();
      if (void* self = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
        api_.sbgemm = reinterpret_cast<SbgemmFn>(dlsym(self, "cblas_sbgemm"));
        dlclose(self);
      }
      loaded_ = Status::ok();
      load_once_flag_done_ = true;
    }
  }

  Expected<LibraryBinding> binding() override {
    TUNEKIT_RETURN_IF_ERROR(load());
    const char* config = api_.get_config != nullptr ? api_.get_config() : "";
    return describe_entry(reinterpret_cast<const void*>(api_.sgemm),
                          source_ == OpenBlasSource::kWheel ? "scipy_cblas_sgemm" : "cblas_sgemm",
                          config != nullptr ? config : "");
  }

 protected:
  Status supports_impl(const GemmParams&) const override {
    return Status::ok();  // float, double natively; bf16 natively or staged; bias as epilogue
  }

  Status prepare_impl(const GemmParams&) override { return load(); }

  bool own_thread_pool() const override { return source_ != OpenBlasSource::kLinked; }

  long runtime_id() const override {
    return source_ == OpenBlasSource::kWheel ? kWheelOpenblasRuntime
                                             : namespace_id_.load(std::memory_order_relaxed);
  }

  Status run_impl(const GemmParams& p) override {
    TUNEKIT_RETURN_IF_ERROR(load());
    if (api_.ns != nullptr) {
      api_.ns->sync_threads();
    } else if (api_.set_threads != nullptr) {
      sync_wheel_threads();
    } else {
      sync_main_threads();
    }
    const bool native_bf16 = api_.sbgemm != nullptr;
    return run_as_gemm_calls(p, native_bf16, [this](const GemmCall& c) {
      const auto m = static_cast<blasint>(c.m), n = static_cast<blasint>(c.n),
                 k = static_cast<blasint>(c.k);
      const auto lda = static_cast<blasint>(c.lda), ldb = static_cast<blasint>(c.ldb),
                 ldc = static_cast<blasint>(c.ldc);
      switch (c.real) {
        case DType::kFloat:
          api_.sgemm(CblasColMajor, cblas_trans(c.transa), cblas_trans(c.transb), m, n, k,
                     static_cast<float>(c.alpha), static_cast<const float*>(c.a), lda,
                     static_cast<const float*>(c.b), ldb, static_cast<float>(c.beta),
                     static_cast<float*>(c.c), ldc);
          break;
        case DType::kDouble:
          api_.dgemm(CblasColMajor, cblas_trans(c.transa), cblas_trans(c.transb), m, n, k, c.alpha,
                     static_cast<const double*>(c.a), lda, static_cast<const double*>(c.b), ldb,
                     c.beta, static_cast<double*>(c.c), ldc);
          break;
        case DType::kBFloat16:
          return bf16_output_call();
        case DType::kBFloat16Float:
          api_.sbgemm(CblasColMajor, cblas_trans(c.transa), cblas_trans(c.transb), m, n, k,
                      static_cast<float>(c.alpha), c.a, lda, c.b, ldb, static_cast<float>(c.beta),
                      static_cast<float*>(c.c), ldc);
          break;
      }
      return Status::ok();
    });
  }

 private:
  Status load() {
    if (load_once_flag_done_) return loaded_;
    std::call_once(load_once_, [this] {
      loaded_ = source_ == OpenBlasSource::kWheel ? load_wheel() : load_namespaced();
    });
    return loaded_;
  }

  void sync_wheel_threads() {
    const int n = num_threads();
    if (applied_threads_.load(std::memory_order_relaxed) != n) {
      api_.set_threads(n);
      applied_threads_.store(n, std::memory_order_relaxed);
    }
  }

  Status load_wheel() {
    Expected<std::string> path = locate_wheel_library(kScipyOpenblasLibrary);
    if (!path) return unsupported(path.status().message());
    Expected<void*> handle =
        open_wheel_library(*path, {fmt::format("OPENBLAS_THREAD_TIMEOUT={}", kWheelThreadTimeout)});
    if (!handle) return unsupported(handle.status().message());
    auto sym = [&](const char* name) { return dlsym(*handle, name); };
    api_.sgemm = reinterpret_cast<SgemmFn>(sym("scipy_cblas_sgemm"));
    api_.dgemm = reinterpret_cast<DgemmFn>(sym("scipy_cblas_dgemm"));
    api_.sbgemm = reinterpret_cast<SbgemmFn>(sym("scipy_cblas_sbgemm"));
    api_.get_config = reinterpret_cast<char* (*)()>(sym("scipy_openblas_get_config"));
    api_.set_threads = reinterpret_cast<void (*)(int)>(sym("scipy_openblas_set_num_threads"));
    if (api_.sgemm == nullptr || api_.dgemm == nullptr || api_.get_config == nullptr ||
        api_.set_threads == nullptr) {
      return unsupported(fmt::format(
          "{} lacks scipy_cblas_sgemm/dgemm or scipy_openblas_get_config/set_num_threads", *path));
    }
    sync_wheel_threads();
    return Status::ok();
  }

  Status load_namespaced() {
    // The list may be planned for another CPU (TUNEKIT_CPU_FIXTURE): run only what this one can.
    if (hw::host_cpu().x86_level() < openblas_core_level(core_)) {
      return unsupported(fmt::format("this CPU ({}) lacks {}, which OpenBLAS's {} kernels need",
                                     hw::host_cpu().describe(),
                                     hw::x86_level_name(openblas_core_level(core_)), core_));
    }
    const std::string path = linked_openblas_path();
    if (path.empty()) return unsupported("cannot find the file of the linked OpenBLAS");
    auto ns =
        LibraryNamespace::load(path, {"OPENBLAS_CORETYPE=" + core_}, [](void* handle, int threads) {
          if (auto* set =
                  reinterpret_cast<void (*)(int)>(dlsym(handle, "openblas_set_num_threads"))) {
            set(threads);
          }
        });
    if (!ns) return unsupported(ns.status().message());
    api_.ns = *ns;
    api_.sgemm = reinterpret_cast<SgemmFn>(api_.ns->symbol("cblas_sgemm"));
    api_.dgemm = reinterpret_cast<DgemmFn>(api_.ns->symbol("cblas_dgemm"));
    api_.sbgemm = reinterpret_cast<SbgemmFn>(api_.ns->symbol("cblas_sbgemm"));
    api_.get_config = reinterpret_cast<char* (*)()>(api_.ns->symbol("openblas_get_config"));
    auto corename = reinterpret_cast<char* (*)()>(api_.ns->symbol("openblas_get_corename"));
    if (api_.sgemm == nullptr || api_.dgemm == nullptr || corename == nullptr) {
      return unsupported(
          fmt::format("{} lacks cblas_sgemm/cblas_dgemm/openblas_get_corename", path));
    }
    // OpenBLAS ignores an OPENBLAS_CORETYPE it does not know; make sure the core took effect.
    const std::string got = lower(corename() != nullptr ? corename() : "");
    if (got != lower(core_)) {
      return unsupported(
          fmt::format("OPENBLAS_CORETYPE={} selected core '{}' instead", core_, got));
    }
    api_.ns->sync_threads();
    namespace_id_.store(api_.ns->namespace_id(), std::memory_order_relaxed);
    return Status::ok();
  }

  OpenBlasSource source_;
  std::string core_;
  OpenBlasApi api_;
  std::atomic<int> applied_threads_{0};  // the wheel's thread count as last set
  std::once_flag load_once_;
  bool load_once_flag_done_ = false;
  Status loaded_;
  std::atomic<long> namespace_id_{0};
};

}  // namespace

std::unique_ptr<GemmCandidate> make_openblas_default() {
  return std::make_unique<OpenBlasGemm>(OpenBlasSource::kLinked, std::string());
}

std::unique_ptr<GemmCandidate> make_openblas_core(std::string core) {
  return std::make_unique<OpenBlasGemm>(OpenBlasSource::kCore, std::move(core));
}

std::unique_ptr<GemmCandidate> make_scipy_openblas() {
  return std::make_unique<OpenBlasGemm>(OpenBlasSource::kWheel, std::string());
}

hw::X86Level openblas_core_level(std::string_view core) {
  // Source: OpenBLAS 0.3.21 kernel/x86_64/KERNEL.<CORE> (which SIMD kernels each core uses).
  struct CoreLevel {
    std::string_view core;  // lower case
    hw::X86Level level;
  };
  static constexpr CoreLevel kCores[] = {
      {"skylakex", hw::X86Level::kV4},
      {"cooperlake", hw::X86Level::kV4},
      {"sapphirerapids", hw::X86Level::kV4},
      {"haswell", hw::X86Level::kV3},
      {"zen", hw::X86Level::kV3},
      {"sandybridge", hw::X86Level::kV2},
  };
  const std::string name = lower(std::string(core));
  for (const CoreLevel& c : kCores) {
    if (c.core == name) return c.level;
  }
  return hw::X86Level::kBaseline;  // Prescott, Nehalem, ... and names tunekit does not know
}

}  // namespace detail
}  // namespace tunekit::ops
