// CUDA kernels compiled by NVRTC: the target architecture (the device's compute capability when
// a CUDA driver is present) and the compile of a source with options and defines into PTX/CUBIN.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/device_compile.hpp"

namespace tunekit {

/// True when this build of tunekit includes NVRTC (TUNEKIT_WITH_CUDA and the toolkit found).
bool nvrtc_compiled_in() noexcept;

/// NVRTC's version as "major.minor". Errors: kUnsupported without NVRTC in this build.
Expected<std::string> nvrtc_version();

/// The architecture CUDA kernels are compiled for: $TUNEKIT_CUDA_ARCH when set; else "sm_XY"
/// of device 0 when a CUDA driver is present (CUBIN for exactly that device); else the build's
/// TUNEKIT_CUDA_ARCH option (default "compute_80": PTX, JIT-compiled by the driver).
std::string default_cuda_arch();

/// Compiles `source` (file name `name` in messages) with `--gpu-architecture=<arch>`, `flags`
/// and `define_options(defines)`. `arch` "compute_XY" gives PTX, "sm_XY" gives CUBIN.
/// A source that does not compile comes back as ok == false with NVRTC's log.
/// Errors: kUnsupported without NVRTC in this build; kRuntimeError when NVRTC fails otherwise
/// (e.g. an unknown architecture is reported by NVRTC as an invalid option: ok == false).
Expected<DeviceCompileOutput> compile_nvrtc(
    std::string_view source, std::string_view name, std::span<const std::string> flags,
    std::span<const std::pair<std::string, std::string>> defines, std::string_view arch);

}  // namespace tunekit
