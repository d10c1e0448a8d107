// NvrtcBuilder: CUDA kernels compiled per configuration by NVRTC into cached PTX or CUBIN
// modules for the CUDA driver backend.
#pragma once

#include <string>

#include "tunekit/measure/device_builder.hpp"

namespace tunekit {

/// Compiles a CUDA source (`extern "C" __global__` entry) with its flags, `-I<source dir>` and
/// the configuration's `-D` definitions for BuildOptions::cuda_arch (empty: default_cuda_arch())
/// into `<key>.ptx` (compute_XY) or `<key>.cubin` (sm_XY). The key's target is the architecture
/// and NVRTC's version. Needs no GPU.
class NvrtcBuilder final : public DeviceBuilder {
 public:
  NvrtcBuilder(KernelSource source, BuildOptions options);
  /// The architecture compiled for.
  const std::string& arch() const noexcept { return arch_; }

 protected:
  Expected<std::string> target() override;
  Expected<DeviceCompileOutput> compile(
      std::span<const std::pair<std::string, std::string>> defines) override;

 private:
  std::string arch_;
};

}  // namespace tunekit
