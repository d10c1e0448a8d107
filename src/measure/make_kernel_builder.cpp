// make_kernel_builder: the builder of a kernel source's language.
// See include/tunekit/measure/kernel_build.hpp.
#include <fmt/format.h>

#include "tunekit/measure/cpp_builder.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/measure/nvrtc_builder.hpp"
#include "tunekit/measure/nvrtc_compile.hpp"
#include "tunekit/measure/opencl_builder.hpp"
#include "tunekit/measure/opencl_compile.hpp"

namespace tunekit {

Expected<std::shared_ptr<Builder>> make_kernel_builder(const KernelSource& source,
                                                       const BuildOptions& options) {
  switch (source.language) {
    case KernelLanguage::kCpp:
      return std::shared_ptr<Builder>(std::make_shared<CppBuilder>(source, options));
    case KernelLanguage::kOpenCL:
      if (opencl_compiled_in()) {
        return std::shared_ptr<Builder>(std::make_shared<OpenClBuilder>(source, options));
      }
      return Status(StatusCode::kUnsupported,
                    fmt::format("kernel '{}': no builder for OpenCL kernels in this build "
                                "(configure with OpenCL found and TUNEKIT_WITH_OPENCL=ON)",
                                source.name));
    case KernelLanguage::kCuda:
      if (nvrtc_compiled_in()) {
        return std::shared_ptr<Builder>(std::make_shared<NvrtcBuilder>(source, options));
      }
      return Status(StatusCode::kUnsupported,
                    fmt::format("kernel '{}': no builder for CUDA kernels in this build "
                                "(configure with the CUDA toolkit found and TUNEKIT_WITH_CUDA=ON)",
                                source.name));
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("kernel '{}': unknown kernel language", source.name));
}

}  // namespace tunekit
