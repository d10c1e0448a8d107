// OpenCL program builds: the device chosen by $TUNEKIT_OPENCL_PLATFORM / $TUNEKIT_OPENCL_DEVICE
// and clBuildProgram of a source with flags and a configuration's defines into a program binary.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/device_compile.hpp"

namespace tunekit {

/// True when this build of tunekit includes OpenCL (TUNEKIT_WITH_OPENCL and OpenCL found).
bool opencl_compiled_in() noexcept;

/// "<platform name> / <device name> / <driver version>" of the selected device: platform index
/// $TUNEKIT_OPENCL_PLATFORM, device index $TUNEKIT_OPENCL_DEVICE within it (both default 0).
/// Errors: kUnsupported without OpenCL in this build or with no platform; kInvalidArgument for
/// an index out of range or not a number (naming the variable and the count).
Expected<std::string> opencl_device_description();

/// Builds `source` for the selected device with options `flags`; `defines` go in front of the
/// source as `#define NAME value` lines, then `#line 1` (a value may hold spaces).
/// A program that does not compile (or lacks a kernel named `entry`, when `entry` is not empty)
/// comes back as ok == false with the build log; else ok with the program binary.
/// Errors: as opencl_device_description(); kRuntimeError when the runtime fails otherwise.
Expected<DeviceCompileOutput> compile_opencl_program(
    std::string_view source, std::span<const std::string> flags,
    std::span<const std::pair<std::string, std::string>> defines, std::string_view entry = {});

}  // namespace tunekit
