// Loading oneDNN 3's CPU build with GNU OpenMP from the `onednn-cpu-gomp` wheel.
// See src/ops/onednn3_api.hpp.
#if TUNEKIT_HAVE_ONEDNN3

#include "ops/onednn3_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "ops/wheel_library.hpp"

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
  // Only the GNU OpenMP build shares the program's thread pool and thread count. The `onednn`
  // wheels (2024 on) run CPU primitives on SYCL's CPU device, which needs Intel's OpenCL CPU
  // runtime registered with the OpenCL loader the process already uses; TBB and threadpool
  // builds bring pools tunekit cannot size.
  if (v->cpu_runtime != DNNL_RUNTIME_OMP) {
    const char* runtime = v->cpu_runtime == DNNL_RUNTIME_SYCL  ? "SYCL"
                          : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                                                               : "a non-OpenMP runtime";
    return Status(StatusCode::kUnsupported,
                  fmt::format("{} is oneDNN {} for {}; tunekit takes the CPU build with GNU "
                              "OpenMP (pip install onednn-cpu-gomp onednn-devel-cpu-gomp)",
                              *path, api.version, runtime));
  }
  api.isa = isa_name(api.dnnl_get_effective_cpu_isa());
  if (api.dnnl_engine_create(&api.engine, dnnl_cpu, 0) != dnnl_success) {
    return Status(StatusCode::kUnsupported, "oneDNN 3 cannot create a CPU engine");
  }
  return api;
}

}  // namespace

Expected<const Onednn3Api*> onednn3_api() {
  static const Expected<Onednn3Api> loaded = load();
  if (!loaded) return loaded.status();
  return &*loaded;
}

}  // namespace tunekit::ops::detail

#endif  // TUNEKIT_HAVE_ONEDNN3
