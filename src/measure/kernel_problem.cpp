// Names of kernel languages and argument dtypes, and KernelProblem's byte count.
// See include/tunekit/measure/kernel_problem.hpp.
#include "tunekit/measure/kernel_problem.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace tunekit {

std::string_view to_string(KernelLanguage language) noexcept {
  switch (language) {
    case KernelLanguage::kCpp:
      return "c++";
    case KernelLanguage::kOpenCL:
      return "opencl";
    case KernelLanguage::kCuda:
      return "cuda";
  }
  return "c++";
}

Expected<KernelLanguage> kernel_language_from_string(std::string_view text) {
  if (text == "c++" || text == "cpp" || text == "c" || text == "C") return KernelLanguage::kCpp;
  if (text == "opencl") return KernelLanguage::kOpenCL;
  if (text == "cuda") return KernelLanguage::kCuda;
  return Status(StatusCode::kInvalidArgument, "unknown kernel language '" + std::string(text) +
                                                  "' (expected c++, cpp, c, opencl or cuda)");
}

std::string_view to_string(ArgDtype dtype) noexcept {
  switch (dtype) {
    case ArgDtype::kFloat32:
      return "float32";
    case ArgDtype::kFloat64:
      return "float64";
    case ArgDtype::kInt32:
      return "int32";
    case ArgDtype::kInt64:
      return "int64";
  }
  return "float32";
}

Expected<ArgDtype> arg_dtype_from_string(std::string_view text) {
  if (text == "float32" || text == "float") return ArgDtype::kFloat32;
  if (text == "float64" || text == "double") return ArgDtype::kFloat64;
  if (text == "int32" || text == "int") return ArgDtype::kInt32;
  if (text == "int64") return ArgDtype::kInt64;
  return Status(StatusCode::kInvalidArgument,
                "unknown dtype '" + std::string(text) +
                    "' (expected float32, float, float64, double, int32, int or int64)");
}

std::size_t dtype_bytes(ArgDtype dtype) noexcept {
  return dtype == ArgDtype::kFloat32 || dtype == ArgDtype::kInt32 ? 4 : 8;
}

std::size_t KernelProblem::array_bytes() const noexcept {
  std::size_t total = 0;
  for (const KernelArgument& arg : arguments) {
    if (!arg.is_scalar) total += arg.size * dtype_bytes(arg.dtype);
  }
  return total;
}

Status check_fill_files(const KernelProblem& problem) {
  for (const KernelArgument& arg : problem.arguments) {
    if (arg.is_scalar || arg.fill.kind != FillKind::kFile) continue;
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(arg.fill.path, ec);
    if (ec) {
      return Status(StatusCode::kIoError,
                    fmt::format("cannot read data file '{}' of argument '{}': {}", arg.fill.path,
                                arg.name, ec.message()));
    }
    const std::size_t need = arg.size * dtype_bytes(arg.dtype);
    if (bytes != need) {
      return Status(
          StatusCode::kInvalidArgument,
          fmt::format("data file '{}' of argument '{}' holds {} bytes; {} {} elements "
                      "need {}",
                      arg.fill.path, arg.name, bytes, arg.size, to_string(arg.dtype), need));
    }
  }
  return Status::ok();
}

}  // namespace tunekit
