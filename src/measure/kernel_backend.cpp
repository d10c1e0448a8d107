// The kernel backend chosen by language (C/C++ here; OpenCL and CUDA where built).
// See include/tunekit/measure/kernel_backend.hpp.
#include "tunekit/measure/kernel_backend.hpp"

#include <fmt/format.h>

#include "tunekit/measure/device_backends.hpp"
#include "tunekit/measure/nvrtc_compile.hpp"
#include "tunekit/measure/opencl_compile.hpp"

namespace tunekit {

ScalarValue scalar_value_of(const KernelArgument& arg) noexcept {
  ScalarValue v{};
  switch (arg.dtype) {
    case ArgDtype::kFloat32:
      v.f32 = static_cast<float>(arg.scalar_value);
      break;
    case ArgDtype::kFloat64:
      v.f64 = arg.scalar_value;
      break;
    case ArgDtype::kInt32:
      v.i32 = static_cast<std::int32_t>(arg.scalar_value);
      break;
    case ArgDtype::kInt64:
      v.i64 = static_cast<std::int64_t>(arg.scalar_value);
      break;
  }
  return v;
}

bool kernel_backend_available(KernelLanguage language) noexcept {
  switch (language) {
    case KernelLanguage::kCpp:
      return true;
    case KernelLanguage::kOpenCL:
      return opencl_compiled_in();
    case KernelLanguage::kCuda:
      return nvrtc_compiled_in();
  }
  return false;
}

Status kernel_backend_status(KernelLanguage language) {
  if (!kernel_backend_available(language)) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("no {} kernel runner in this build (configure with its toolkit "
                              "found: TUNEKIT_WITH_OPENCL / TUNEKIT_WITH_CUDA)",
                              to_string(language)));
  }
  if (language == KernelLanguage::kCuda) return cuda_runtime_status();
  return Status::ok();
}

Expected<std::unique_ptr<KernelBackend>> make_kernel_backend(KernelLanguage language,
                                                             const KernelProblem& problem,
                                                             const LaunchGeometry& launch) {
  switch (language) {
    case KernelLanguage::kCpp:
      return make_cpp_backend(problem);
    case KernelLanguage::kOpenCL:
      return make_opencl_backend(problem, launch);
    case KernelLanguage::kCuda:
      return make_cuda_backend(problem, launch);
  }
  return Status(StatusCode::kUnsupported,
                fmt::format("no {} kernel backend in this build", to_string(language)));
}

}  // namespace tunekit
