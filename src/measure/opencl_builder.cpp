// OpenClBuilder: cached OpenCL program binaries per configuration.
// See include/tunekit/measure/opencl_builder.hpp.
#include "tunekit/measure/opencl_builder.hpp"

#include <filesystem>

#include "tunekit/measure/opencl_compile.hpp"

namespace tunekit {
namespace {

/// The source's flags plus -I<its directory> (relative #includes).
std::vector<std::string> flags_with_include(const KernelSource& source) {
  std::vector<std::string> flags = source.flags;
  if (!source.path.empty()) {
    std::error_code ec;
    auto dir = std::filesystem::absolute(source.path, ec).parent_path();
    if (!ec && !dir.empty()) flags.push_back("-I" + dir.string());
  }
  return flags;
}

}  // namespace

OpenClBuilder::OpenClBuilder(KernelSource source, BuildOptions options)
    : DeviceBuilder(std::move(source), std::move(options), ".clbin") {}

Expected<std::string> OpenClBuilder::target() { return opencl_device_description(); }

Expected<DeviceCompileOutput> OpenClBuilder::compile(
    std::span<const std::pair<std::string, std::string>> defines) {
  const auto flags = flags_with_include(source());
  return compile_opencl_program(source().text, flags, defines, source().entry);
}

}  // namespace tunekit
