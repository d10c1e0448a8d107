// make_kernel_builder: the builder of a kernel source's language.
// See include/tunekit/measure/kernel_build.hpp.
#include <fmt/format.h>

#include "tunekit/measure/cpp_builder.hpp"
#include "tunekit/measure/kernel_build.hpp"

namespace tunekit {

Expected<std::shared_ptr<Builder>> make_kernel_builder(const KernelSource& source,
                                                       const BuildOptions& options) {
  switch (source.language) {
    case KernelLanguage::kCpp:
      return std::shared_ptr<Builder>(std::make_shared<CppBuilder>(source, options));
    case KernelLanguage::kOpenCL:
      return Status(
          StatusCode::kUnsupported,
          fmt::format("kernel '{}': no builder for OpenCL kernels in this build", source.name));
    case KernelLanguage::kCuda:
      return Status(
          StatusCode::kUnsupported,
          fmt::format("kernel '{}': no builder for CUDA kernels in this build", source.name));
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("kernel '{}': unknown kernel language", source.name));
}

}  // namespace tunekit
