// Loading MKL's entry points from the `mkl` wheel's libmkl_rt. See src/ops/mkl_api.hpp.
#include "ops/mkl_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <regex>

#include "ops/wheel_library.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::ops::detail {
namespace {

// MKL_CBWR_Get_Auto_Branch's codes (mkl_types.h) as the code path's name.
std::string branch_name(int code) {
  struct Branch {
    int code;
    const char* name;
  };
  static constexpr Branch kBranches[] = {{2, "not reported"}, {3, "COMPATIBLE"}, {8, "SSE4_2"},
                                         {10, "AVX2"},        {12, "AVX512"},    {14, "AVX512_E1"},
                                         {15, "AVX10"}};
  for (const Branch& b : kBranches) {
    if (b.code == code) return b.name;
  }
  return fmt::format("branch {}", code);
}

// "2026.2.1" out of "Intel(R) oneAPI Math Kernel Library Version 2026.2.1-Product Build ...".
std::string version_of(const std::string& text) {
  static const std::regex kVersion(R"(Version ([0-9]+(\.[0-9]+)*))");
  std::smatch match;
  return std::regex_search(text, match, kVersion) ? match[1].str() : std::string("unknown");
}

template <class F>
bool bind(void* handle, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  return out != nullptr;
}

// The libraries libmkl_rt opens by itself on its first call, which it cannot survive without:
// it prints "Intel oneMKL FATAL ERROR: Cannot load ..." and ends the process. Checked first.
Status check_complete(const std::string& rt_path) {
  const std::string dir = directory_of(rt_path);
  for (const char* file :
       {"libmkl_core.so.3", "libmkl_gnu_thread.so.3", "libmkl_intel_lp64.so.3"}) {
    if (!is_regular_file(dir + "/" + file)) {
      return Status(
          StatusCode::kUnsupported,
          fmt::format("incomplete MKL: {} is not beside {} (pip install mkl)", file, rt_path));
    }
  }
  for (const char* cpu_file : {"libmkl_def.so.3", "libmkl_avx2.so.3", "libmkl_avx512.so.3"}) {
    if (is_regular_file(dir + "/" + cpu_file)) return Status::ok();
  }
  return Status(StatusCode::kUnsupported,
                fmt::format("incomplete MKL: no libmkl_def/avx2/avx512.so.3 beside {}", rt_path));
}

Expected<MklApi> load() {
  Expected<std::string> path = locate_wheel_library(kMklLibrary);
  if (!path) return Status(StatusCode::kUnsupported, path.status().message());
  TUNEKIT_RETURN_IF_ERROR(check_complete(*path));
  Expected<void*> handle = open_wheel_library(*path);
  if (!handle) return handle.status();
  MklApi api;
  api.path = *path;
  int (*set_threading_layer)(int) = nullptr;
  void (*get_version)(char*, int) = nullptr;
  int (*auto_branch)() = nullptr;
  struct Entry {
    const char* name;
    bool bound;
  };
  void* h = *handle;
  const Entry entries[] = {
      {"MKL_Set_Threading_Layer", bind(h, "MKL_Set_Threading_Layer", set_threading_layer)},
      {"MKL_Get_Version_String", bind(h, "MKL_Get_Version_String", get_version)},
      {"MKL_CBWR_Get_Auto_Branch", bind(h, "MKL_CBWR_Get_Auto_Branch", auto_branch)},
      {"MKL_Set_Num_Threads", bind(h, "MKL_Set_Num_Threads", api.set_num_threads)},
      {"cblas_sgemm", bind(h, "cblas_sgemm", api.sgemm)},
      {"cblas_dgemm", bind(h, "cblas_dgemm", api.dgemm)},
      {"cblas_gemm_bf16bf16f32", bind(h, "cblas_gemm_bf16bf16f32", api.gemm_bf16)},
      {"cblas_sgemm_pack_get_size", bind(h, "cblas_sgemm_pack_get_size", api.sgemm_pack_get_size)},
      {"cblas_sgemm_pack", bind(h, "cblas_sgemm_pack", api.sgemm_pack)},
      {"cblas_sgemm_compute", bind(h, "cblas_sgemm_compute", api.sgemm_compute)},
      {"cblas_gemm_bf16bf16f32_pack_get_size",
       bind(h, "cblas_gemm_bf16bf16f32_pack_get_size", api.bf16_pack_get_size)},
      {"cblas_gemm_bf16bf16f32_pack", bind(h, "cblas_gemm_bf16bf16f32_pack", api.bf16_pack)},
      {"cblas_gemm_bf16bf16f32_compute",
       bind(h, "cblas_gemm_bf16bf16f32_compute", api.bf16_compute)},
      {"mkl_cblas_jit_create_sgemm", bind(h, "mkl_cblas_jit_create_sgemm", api.jit_create_sgemm)},
      {"mkl_cblas_jit_create_dgemm", bind(h, "mkl_cblas_jit_create_dgemm", api.jit_create_dgemm)},
      {"mkl_jit_get_sgemm_ptr", bind(h, "mkl_jit_get_sgemm_ptr", api.jit_get_sgemm_ptr)},
      {"mkl_jit_get_dgemm_ptr", bind(h, "mkl_jit_get_dgemm_ptr", api.jit_get_dgemm_ptr)},
      {"mkl_jit_destroy", bind(h, "mkl_jit_destroy", api.jit_destroy)},
  };
  for (const Entry& e : entries) {
    if (!e.bound) {
      return Status(StatusCode::kUnsupported, fmt::format("{} lacks {}", *path, e.name));
    }
  }
  // Before any other MKL call: afterwards the layer is fixed. GNU OpenMP, so MKL's threads are
  // the program's libgomp pool (the Intel runtime would be a second pool spinning beside it).
  set_threading_layer(mkl::kThreadingGnu);
  char text[256] = {};
  get_version(text, static_cast<int>(sizeof text));
  api.version = version_of(text);
  api.branch = branch_name(auto_branch());
  return api;
}

std::atomic<int> g_applied_threads{0};

}  // namespace

void MklApi::sync_threads() const noexcept {
  const int n = num_threads();
  if (g_applied_threads.load(std::memory_order_relaxed) != n) {
    set_num_threads(n);
    g_applied_threads.store(n, std::memory_order_relaxed);
  }
}

Expected<const MklApi*> mkl_api() {
  static const Expected<MklApi> loaded = load();
  if (!loaded) return loaded.status();
  return &*loaded;
}

}  // namespace tunekit::ops::detail
