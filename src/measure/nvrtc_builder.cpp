// NvrtcBuilder: cached PTX/CUBIN modules per configuration.
// See include/tunekit/measure/nvrtc_builder.hpp.
#include "tunekit/measure/nvrtc_builder.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "tunekit/measure/nvrtc_compile.hpp"

namespace tunekit {
namespace {

std::string resolve_arch(const BuildOptions& options) {
  return options.cuda_arch.empty() ? default_cuda_arch() : options.cuda_arch;
}

std::string suffix_of(const std::string& arch) {
  return arch.starts_with("sm_") ? ".cubin" : ".ptx";
}

}  // namespace

NvrtcBuilder::NvrtcBuilder(KernelSource source, BuildOptions options)
    : DeviceBuilder(std::move(source), options, suffix_of(resolve_arch(options))),
      arch_(resolve_arch(options)) {}

Expected<std::string> NvrtcBuilder::target() {
  auto version = nvrtc_version();
  if (!version) return version.status();
  return fmt::format("{} / NVRTC {}", arch_, *version);
}

Expected<DeviceCompileOutput> NvrtcBuilder::compile(
    std::span<const std::pair<std::string, std::string>> defines) {
  std::vector<std::string> flags = source().flags;
  std::string name = source().name + ".cu";
  if (!source().path.empty()) {
    name = source().path;
    std::error_code ec;
    auto dir = std::filesystem::absolute(source().path, ec).parent_path();
    if (!ec && !dir.empty()) flags.push_back("-I" + dir.string());
  }
  return compile_nvrtc(source().text, name, flags, defines, arch_);
}

}  // namespace tunekit
