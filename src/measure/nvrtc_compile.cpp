// NVRTC compiles of CUDA kernels into PTX (compute_XY) or CUBIN (sm_XY), and the architecture
// chosen for them (the device's compute capability when a CUDA driver is present).
#include "tunekit/measure/nvrtc_compile.hpp"

#include "cuda_driver.hpp"
#include "tunekit/core/env.hpp"

#if TUNEKIT_HAVE_CUDA
#include <fmt/format.h>
#include <nvrtc.h>

#include <memory>
#endif

namespace tunekit {

#if TUNEKIT_HAVE_CUDA
namespace {

struct ProgramDestroy {
  void operator()(nvrtcProgram p) const noexcept { nvrtcDestroyProgram(&p); }
};
using NvrtcProgram = std::unique_ptr<_nvrtcProgram, ProgramDestroy>;

Status nvrtc_failed(const char* what, nvrtcResult result) {
  return Status(StatusCode::kRuntimeError,
                fmt::format("{}: {}", what, nvrtcGetErrorString(result)));
}

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

/// PTX text for compute_XY, CUBIN bytes for sm_XY.
Expected<std::string> program_code(nvrtcProgram program, bool cubin) {
  std::size_t size = 0;
  nvrtcResult r = cubin ? nvrtcGetCUBINSize(program, &size) : nvrtcGetPTXSize(program, &size);
  if (r != NVRTC_SUCCESS) return nvrtc_failed("nvrtcGet(PTX|CUBIN)Size", r);
  std::string code(size, '\0');
  r = cubin ? nvrtcGetCUBIN(program, code.data()) : nvrtcGetPTX(program, code.data());
  if (r != NVRTC_SUCCESS) return nvrtc_failed("nvrtcGet(PTX|CUBIN)", r);
  return code;
}

/// "sm_XY" of device 0 when a driver and a device are present.
std::string device_arch() {
  auto api = cuda::driver();
  if (!api) return {};
  CUdevice device = 0;
  int major = 0;
  int minor = 0;
  if ((*api)->device_get(&device, 0) != CUDA_SUCCESS ||
      (*api)->device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) !=
          CUDA_SUCCESS ||
      (*api)->device_get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) !=
          CUDA_SUCCESS) {
    return {};
  }
  return fmt::format("sm_{}{}", major, minor);
}

}  // namespace

bool nvrtc_compiled_in() noexcept { return true; }

Expected<std::string> nvrtc_version() {
  int major = 0;
  int minor = 0;
  const nvrtcResult r = nvrtcVersion(&major, &minor);
  if (r != NVRTC_SUCCESS) return nvrtc_failed("nvrtcVersion", r);
  return fmt::format("{}.{}", major, minor);
}

std::string default_cuda_arch() {
  if (auto forced = env::get_string("TUNEKIT_CUDA_ARCH")) return *forced;
  std::string arch = device_arch();
  return arch.empty() ? std::string(TUNEKIT_CUDA_ARCH) : arch;
}

Expected<DeviceCompileOutput> compile_nvrtc(
    std::string_view source, std::string_view name, std::span<const std::string> flags,
    std::span<const std::pair<std::string, std::string>> defines, std::string_view arch) {
  const std::string text(source);
  const std::string file(name.empty() ? "kernel.cu" : name);
  nvrtcProgram raw = nullptr;
  nvrtcResult r = nvrtcCreateProgram(&raw, text.c_str(), file.c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return nvrtc_failed("nvrtcCreateProgram", r);
  NvrtcProgram program(raw);
  std::vector<std::string> options{"--gpu-architecture=" + std::string(arch)};
  options.insert(options.end(), flags.begin(), flags.end());
  for (auto& option : define_options(defines)) options.push_back(std::move(option));
  std::vector<const char*> argv;
  for (const auto& option : options) argv.push_back(option.c_str());
  r = nvrtcCompileProgram(raw, static_cast<int>(argv.size()), argv.data());
  DeviceCompileOutput out;
  out.target = std::string(arch);
  out.log = program_log(raw);
  if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) {
    if (out.log.empty()) out.log = fmt::format("error: {}", nvrtcGetErrorString(r));
    return out;
  }
  if (r != NVRTC_SUCCESS) return nvrtc_failed("nvrtcCompileProgram", r);
  auto code = program_code(raw, arch.starts_with("sm_"));
  if (!code) return code.status();
  out.binary = std::move(*code);
  out.ok = true;
  return out;
}

#else

bool nvrtc_compiled_in() noexcept { return false; }

Expected<std::string> nvrtc_version() {
  return Status(StatusCode::kUnsupported, "CUDA is not built into tunekit (TUNEKIT_WITH_CUDA)");
}

std::string default_cuda_arch() {
  return env::get_string("TUNEKIT_CUDA_ARCH").value_or("compute_80");
}

Expected<DeviceCompileOutput> compile_nvrtc(std::string_view, std::string_view,
                                            std::span<const std::string>,
                                            std::span<const std::pair<std::string, std::string>>,
                                            std::string_view) {
  return nvrtc_version().status();
}

#endif

}  // namespace tunekit
