// OpenCL program builds: clBuildProgram of a source with flags and defines on the selected device,
// returning the program binary or the build log.
#include "tunekit/measure/opencl_compile.hpp"

#include "opencl_handles.hpp"

#if TUNEKIT_HAVE_OPENCL
#include <fmt/format.h>
#endif

namespace tunekit {

#if TUNEKIT_HAVE_OPENCL
namespace {

std::string join_options(std::span<const std::string> flags) {
  std::string options;
  for (const auto& flag : flags) {
    if (!options.empty()) options += ' ';
    options += flag;
  }
  return options;
}

/// The source with the configuration's definitions in front, as `#define` lines followed by
/// `#line 1` (diagnostics keep the file's own line numbers). Build options would split a value
/// holding a space ("+ 0") into two options; a `#define` line takes any value.
std::string defined_source(std::string_view source,
                           std::span<const std::pair<std::string, std::string>> defines) {
  if (defines.empty()) return std::string(source);
  std::string text;
  for (const auto& [name, value] : defines) text += fmt::format("#define {} {}\n", name, value);
  text += "#line 1\n";
  text += source;
  return text;
}

/// The binary of a program built for exactly one device.
Expected<std::string> program_binary(cl_program program) {
  std::size_t size = 0;
  cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
  if (err != CL_SUCCESS) return opencl::call_failed("clGetProgramInfo(BINARY_SIZES)", err);
  std::string binary(size, '\0');
  unsigned char* data = reinterpret_cast<unsigned char*>(binary.data());
  err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr);
  if (err != CL_SUCCESS) return opencl::call_failed("clGetProgramInfo(BINARIES)", err);
  return binary;
}

/// Log line for a program that compiled but has no kernel `entry`.
std::string missing_entry(cl_program program, std::string_view entry) {
  const std::string name(entry);
  cl_int err = CL_SUCCESS;
  opencl::Kernel kernel(clCreateKernel(program, name.c_str(), &err));
  if (err == CL_SUCCESS) return {};
  return fmt::format("error: no kernel named '{}' in the program (clCreateKernel: {})", name, err);
}

}  // namespace

bool opencl_compiled_in() noexcept { return true; }

Expected<std::string> opencl_device_description() {
  auto device = opencl::select_device();
  if (!device) return device.status();
  return device->description;
}

Expected<DeviceCompileOutput> compile_opencl_program(
    std::string_view source, std::span<const std::string> flags,
    std::span<const std::pair<std::string, std::string>> defines, std::string_view entry) {
  auto device = opencl::select_device();
  if (!device) return device.status();
  auto context = opencl::make_context(*device);
  if (!context) return context.status();
  const std::string full = defined_source(source, defines);
  const char* text = full.data();
  const std::size_t length = full.size();
  cl_int err = CL_SUCCESS;
  opencl::Program program(clCreateProgramWithSource(context->get(), 1, &text, &length, &err));
  if (err != CL_SUCCESS) return opencl::call_failed("clCreateProgramWithSource", err);
  const std::string options = join_options(flags);
  err = clBuildProgram(program.get(), 1, &device->device, options.c_str(), nullptr, nullptr);
  DeviceCompileOutput out;
  out.target = device->description;
  out.log = opencl::build_log(program.get(), device->device);
  if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS) {
    if (out.log.empty()) out.log = fmt::format("error: clBuildProgram failed ({})", err);
    return out;
  }
  if (err != CL_SUCCESS) return opencl::call_failed("clBuildProgram", err);
  if (!entry.empty()) {
    std::string missing = missing_entry(program.get(), entry);
    if (!missing.empty()) {
      out.log = missing + (out.log.empty() ? "" : "\n" + out.log);
      return out;
    }
  }
  auto binary = program_binary(program.get());
  if (!binary) return binary.status();
  out.binary = std::move(*binary);
  out.ok = true;
  return out;
}

#else

bool opencl_compiled_in() noexcept { return false; }

Expected<std::string> opencl_device_description() {
  return Status(StatusCode::kUnsupported, "OpenCL is not built into tunekit (TUNEKIT_WITH_OPENCL)");
}

Expected<DeviceCompileOutput> compile_opencl_program(
    std::string_view, std::span<const std::string>,
    std::span<const std::pair<std::string, std::string>>, std::string_view) {
  return opencl_device_description().status();
}

#endif

}  // namespace tunekit
