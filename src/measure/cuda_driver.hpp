// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1") so that tunekit loads on
// machines without a GPU driver. Internal; only built with TUNEKIT_HAVE_CUDA (needs cuda.h).
#pragma once

#if TUNEKIT_HAVE_CUDA
#include <cuda.h>

#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit::cuda {

/// The driver entry points tunekit calls (names as in cuda.h without the "cu" prefix).
struct DriverApi {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
};

/// Loads `library` (dlopen, RTLD_NOW | RTLD_LOCAL), resolves every entry point and calls cuInit.
/// The handle is never closed. Errors: kUnsupported "no CUDA driver (<library> not found)",
/// or naming the missing symbol or cuInit's error.
Expected<DriverApi> load_driver(const std::string& library);

/// The process's driver: $TUNEKIT_CUDA_DRIVER when set, else "libcuda.so.1"; loaded once.
/// Errors: as load_driver (the same error on every call).
Expected<const DriverApi*> driver();

/// Status kRuntimeError "<what>: CUDA error <code> (<name>)".
Status call_failed(const DriverApi& api, const char* what, CUresult code);

}  // namespace tunekit::cuda
#endif
