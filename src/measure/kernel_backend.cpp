// The kernel backend chosen by language (C/C++ here; OpenCL and CUDA where built).
// See include/tunekit/measure/kernel_backend.hpp.
#include "tunekit/measure/kernel_backend.hpp"

#include <fmt/format.h>

namespace tunekit {

bool kernel_backend_available(KernelLanguage language) noexcept {
  return language == KernelLanguage::kCpp;
}

Expected<std::unique_ptr<KernelBackend>> make_kernel_backend(KernelLanguage language,
                                                             const KernelProblem& problem) {
  if (language == KernelLanguage::kCpp) return make_cpp_backend(problem);
  return Status(StatusCode::kUnsupported,
                fmt::format("no {} kernel backend in this build", to_string(language)));
}

}  // namespace tunekit
