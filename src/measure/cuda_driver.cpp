// Run-time loading of the CUDA driver API (dlopen "libcuda.so.1", dlsym of each entry point).
#include "cuda_driver.hpp"

#if TUNEKIT_HAVE_CUDA
#include <dlfcn.h>
#include <fmt/format.h>

#include "tunekit/core/env.hpp"

namespace tunekit::cuda {
namespace {

template <class F>
bool resolve(void* handle, const char* symbol, F& target, std::string& missing) {
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    if (missing.empty()) missing = symbol;
    return false;
  }
  target = reinterpret_cast<F>(address);
  return true;
}

/// Resolves every entry point; the name of the first missing symbol, or empty.
std::string resolve_all(void* h, DriverApi& api) {
  std::string m;
  resolve(h, "cuInit", api.init, m);
  resolve(h, "cuDeviceGet", api.device_get, m);
  resolve(h, "cuDeviceGetCount", api.device_get_count, m);
  resolve(h, "cuDeviceGetAttribute", api.device_get_attribute, m);
  resolve(h, "cuDeviceGetName", api.device_get_name, m);
  resolve(h, "cuDevicePrimaryCtxRetain", api.primary_ctx_retain, m);
  resolve(h, "cuDevicePrimaryCtxRelease_v2", api.primary_ctx_release, m);
  resolve(h, "cuCtxSetCurrent", api.ctx_set_current, m);
  resolve(h, "cuCtxSynchronize", api.ctx_synchronize, m);
  resolve(h, "cuModuleLoadData", api.module_load_data, m);
  resolve(h, "cuModuleUnload", api.module_unload, m);
  resolve(h, "cuModuleGetFunction", api.module_get_function, m);
  resolve(h, "cuMemAlloc_v2", api.mem_alloc, m);
  resolve(h, "cuMemFree_v2", api.mem_free, m);
  resolve(h, "cuMemcpyHtoD_v2", api.memcpy_htod, m);
  resolve(h, "cuMemcpyDtoH_v2", api.memcpy_dtoh, m);
  resolve(h, "cuLaunchKernel", api.launch_kernel, m);
  resolve(h, "cuGetErrorString", api.get_error_string, m);
  return m;
}

}  // namespace

Expected<DriverApi> load_driver(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    return Status(StatusCode::kUnsupported, fmt::format("no CUDA driver ({} not found)", library));
  }
  DriverApi api;
  const std::string missing = resolve_all(handle, api);
  if (!missing.empty()) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("CUDA driver {} lacks {} (driver too old)", library, missing));
  }
  const CUresult result = api.init(0);
  if (result != CUDA_SUCCESS) {
    return Status(
        StatusCode::kUnsupported,
        fmt::format("no usable CUDA device: {}", call_failed(api, "cuInit", result).message()));
  }
  return api;
}

Expected<const DriverApi*> driver() {
  static const Expected<DriverApi> loaded =
      load_driver(env::get_string("TUNEKIT_CUDA_DRIVER").value_or("libcuda.so.1"));
  if (!loaded) return loaded.status();
  return &*loaded;
}

Status call_failed(const DriverApi& api, const char* what, CUresult code) {
  const char* text = nullptr;
  if (api.get_error_string == nullptr || api.get_error_string(code, &text) != CUDA_SUCCESS ||
      text == nullptr) {
    text = "unknown";
  }
  return Status(StatusCode::kRuntimeError,
                fmt::format("{}: CUDA error {} ({})", what, static_cast<int>(code), text));
}

}  // namespace tunekit::cuda
#endif
