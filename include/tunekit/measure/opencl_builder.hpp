// OpenClBuilder: OpenCL kernels built per configuration into cached program binaries for the
// device chosen by $TUNEKIT_OPENCL_PLATFORM / $TUNEKIT_OPENCL_DEVICE.
#pragma once

#include "tunekit/measure/device_builder.hpp"

namespace tunekit {

/// Builds an OpenCL source with its flags, `-I<source dir>` and the configuration's `-D`
/// definitions (compile_opencl_program) into `<key>.clbin` program binaries; a program without
/// a kernel named `entry` is a compile error. The key's target is the device description
/// (platform, device, driver version).
class OpenClBuilder final : public DeviceBuilder {
 public:
  OpenClBuilder(KernelSource source, BuildOptions options);

 protected:
  Expected<std::string> target() override;
  Expected<DeviceCompileOutput> compile(
      std::span<const std::pair<std::string, std::string>> defines) override;
};

}  // namespace tunekit
