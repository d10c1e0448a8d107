// Loading oneDNN 3 from the `onednn` wheel and limiting its TBB workers to tunekit's thread
// count. See src/ops/onednn3_api.hpp.
#if TUNEKIT_HAVE_ONEDNN3

#include "ops/onednn3_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "ops/gemm_internal.hpp"
#include "ops/wheel_library.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::ops::detail {
namespace {

// dnnl_get_effective_cpu_isa() in dnnl_types.h's words.
std::string isa_name(dnnl_cpu_isa_t isa) {
  struct IsaName {
    dnnl_cpu_isa_t isa;
    const char* name;
  };
  static constexpr IsaName kNames[] = {
      {dnnl_cpu_isa_sse41, "sse41"},
      {dnnl_cpu_isa_avx, "avx"},
      {dnnl_cpu_isa_avx2, "avx2"},
      {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
      {dnnl_cpu_isa_avx2_vnni_2, "avx2_vnni_2"},
      {dnnl_cpu_isa_avx512_core, "avx512_core"},
      {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
      {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
      {dnnl_cpu_isa_avx512_core_fp16, "avx512_core_fp16"},
      {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"},
      {dnnl_cpu_isa_avx512_core_amx_fp16, "avx512_core_amx_fp16"},
  };
  for (const IsaName& n : kNames) {
    if (n.isa == isa) return n.name;
  }
  return fmt::format("isa {:#x}", static_cast<unsigned>(isa));
}

/// The layout of oneTBB's tbb::detail::d1::global_control (oneapi/tbb/global_control.h of oneTBB
/// 2021-2023, interface 12): the value, a reserved word and the parameter.
struct TbbGlobalControl {
  std::size_t value = 0;
  std::intptr_t reserved = 0;
  int parameter = 0;  ///< 0: max_allowed_parallelism
};

/// tbb::detail::r1::create / destroy (global_control&), resolved from the loaded libtbb.so.12.
struct TbbControlApi {
  void (*create)(TbbGlobalControl&) = nullptr;
  void (*destroy)(TbbGlobalControl&) = nullptr;
};

TbbControlApi g_tbb;
std::mutex g_tbb_mutex;
TbbGlobalControl g_tbb_limit;  // active while g_tbb_applied > 0
std::atomic<int> g_tbb_applied{0};

Status bind_tbb_control() {
  void* tbb = dlopen("libtbb.so.12", RTLD_LAZY | RTLD_NOLOAD);
  if (tbb == nullptr) return Status(StatusCode::kUnsupported, "libtbb.so.12 is not loaded");
  g_tbb.create = reinterpret_cast<void (*)(TbbGlobalControl&)>(
      dlsym(tbb, "_ZN3tbb6detail2r16createERNS0_2d114global_controlE"));
  g_tbb.destroy = reinterpret_cast<void (*)(TbbGlobalControl&)>(
      dlsym(tbb, "_ZN3tbb6detail2r17destroyERNS0_2d114global_controlE"));
  if (g_tbb.create == nullptr || g_tbb.destroy == nullptr) {
    return Status(StatusCode::kUnsupported, "libtbb.so.12 lacks global_control's create/destroy");
  }
  return Status::ok();
}

Expected<Onednn3Api> load() {
  Expected<std::string> path = locate_wheel_library(kOnednn3Library);
  if (!path) return Status(StatusCode::kUnsupported, path.status().message());
  Expected<void*> handle = open_wheel_library(*path);
  if (!handle) return handle.status();
  Onednn3Api api;
  api.path = *path;
  const char* missing = nullptr;
#define TUNEKIT_DNNL3_BIND(name)                                          \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(*handle, #name)); \
  if (api.name == nullptr && missing == nullptr) missing = #name;
  TUNEKIT_DNNL3_ENTRIES(TUNEKIT_DNNL3_BIND)
#undef TUNEKIT_DNNL3_BIND
  if (missing != nullptr) {
    return Status(StatusCode::kUnsupported, fmt::format("{} lacks {}", *path, missing));
  }
  const dnnl_version_t* v = api.dnnl_version();
  if (v == nullptr || v->major != 3) {
    return Status(StatusCode::kUnsupported, fmt::format("{} is not oneDNN 3", *path));
  }
  api.version = fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
  // The `onednn` wheels (2024 on) run CPU primitives on SYCL's CPU device, which needs Intel's
  // OpenCL CPU runtime registered with the OpenCL loader the process already uses.
  if (v->cpu_runtime == DNNL_RUNTIME_SYCL) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("{} is oneDNN {} for SYCL; tunekit takes the CPU build (pip "
                              "install onednn-cpu-gomp onednn-devel-cpu-gomp)",
                              *path, api.version));
  }
  api.threading = v->cpu_runtime == DNNL_RUNTIME_TBB   ? "TBB"
                  : v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP"
                                                       : "sequential";
  api.tbb = v->cpu_runtime == DNNL_RUNTIME_TBB;
  if (api.tbb) TUNEKIT_RETURN_IF_ERROR(bind_tbb_control());
  api.isa = isa_name(api.dnnl_get_effective_cpu_isa());
  if (api.dnnl_engine_create(&api.engine, dnnl_cpu, 0) != dnnl_success) {
    return Status(StatusCode::kUnsupported, "oneDNN 3 cannot create a CPU engine");
  }
  return api;
}

}  // namespace

void Onednn3Api::sync_threads() const noexcept {
  if (!tbb) {
    sync_main_threads();  // an OpenMP build shares the program's libgomp
    return;
  }
  const int n = num_threads();
  if (g_tbb_applied.load(std::memory_order_acquire) == n) return;
  std::lock_guard lock(g_tbb_mutex);
  if (g_tbb_applied.load(std::memory_order_relaxed) == n) return;
  if (g_tbb_applied.load(std::memory_order_relaxed) > 0) g_tbb.destroy(g_tbb_limit);
  g_tbb_limit = TbbGlobalControl{static_cast<std::size_t>(n), 0, 0};
  g_tbb.create(g_tbb_limit);
  g_tbb_applied.store(n, std::memory_order_release);
}

Expected<const Onednn3Api*> onednn3_api() {
  static const Expected<Onednn3Api> loaded = load();
  if (!loaded) return loaded.status();
  return &*loaded;
}

}  // namespace tunekit::ops::detail

#endif  // TUNEKIT_HAVE_ONEDNN3
