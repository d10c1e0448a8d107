// OpenCL device selection from $TUNEKIT_OPENCL_PLATFORM / $TUNEKIT_OPENCL_DEVICE, contexts on it,
// and OpenCL error messages.
#include "opencl_handles.hpp"

#if TUNEKIT_HAVE_OPENCL
#include <fmt/format.h>

#include <vector>

#include "tunekit/core/env.hpp"

namespace tunekit::opencl {
namespace {

const char* error_name(cl_int code) {
  switch (code) {
    case CL_DEVICE_NOT_FOUND:
      return "CL_DEVICE_NOT_FOUND";
    case CL_OUT_OF_RESOURCES:
      return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY:
      return "CL_OUT_OF_HOST_MEMORY";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
      return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_BUILD_PROGRAM_FAILURE:
      return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE:
      return "CL_INVALID_VALUE";
    case CL_INVALID_BINARY:
      return "CL_INVALID_BINARY";
    case CL_INVALID_BUILD_OPTIONS:
      return "CL_INVALID_BUILD_OPTIONS";
    case CL_INVALID_KERNEL_NAME:
      return "CL_INVALID_KERNEL_NAME";
    case CL_INVALID_ARG_INDEX:
      return "CL_INVALID_ARG_INDEX";
    case CL_INVALID_ARG_VALUE:
      return "CL_INVALID_ARG_VALUE";
    case CL_INVALID_ARG_SIZE:
      return "CL_INVALID_ARG_SIZE";
    case CL_INVALID_KERNEL_ARGS:
      return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_DIMENSION:
      return "CL_INVALID_WORK_DIMENSION";
    case CL_INVALID_WORK_GROUP_SIZE:
      return "CL_INVALID_WORK_GROUP_SIZE";
    case CL_INVALID_WORK_ITEM_SIZE:
      return "CL_INVALID_WORK_ITEM_SIZE";
    case CL_INVALID_GLOBAL_WORK_SIZE:
      return "CL_INVALID_GLOBAL_WORK_SIZE";
    case CL_INVALID_BUFFER_SIZE:
      return "CL_INVALID_BUFFER_SIZE";
    default:
      return "see CL/cl.h";
  }
}

std::string platform_info(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS) return "?";
  std::string text(size, '\0');
  clGetPlatformInfo(platform, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string device_info(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS) return "?";
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

/// Index from `variable` (default 0) below `count`.
Expected<cl_uint> pick_index(const char* variable, cl_uint count, const char* what) {
  auto value = env::get_int(variable);
  if (!value) return value.status();
  const long long index = value->value_or(0);
  if (index < 0 || index >= static_cast<long long>(count)) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{}={}: there are {} OpenCL {}(s), numbered from 0", variable, index,
                              count, what));
  }
  return static_cast<cl_uint>(index);
}

}  // namespace

Status call_failed(const char* what, cl_int code) {
  return Status(StatusCode::kRuntimeError,
                fmt::format("{}: OpenCL error {} ({})", what, code, error_name(code)));
}

Expected<Device> select_device() {
  cl_uint n_platforms = 0;
  if (clGetPlatformIDs(0, nullptr, &n_platforms) != CL_SUCCESS || n_platforms == 0) {
    return Status(StatusCode::kUnsupported, "no OpenCL platform (no ICD installed)");
  }
  std::vector<cl_platform_id> platforms(n_platforms);
  clGetPlatformIDs(n_platforms, platforms.data(), nullptr);
  auto p = pick_index("TUNEKIT_OPENCL_PLATFORM", n_platforms, "platform");
  if (!p) return p.status();
  cl_uint n_devices = 0;
  clGetDeviceIDs(platforms[*p], CL_DEVICE_TYPE_ALL, 0, nullptr, &n_devices);
  if (n_devices == 0) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("OpenCL platform {} ({}) has no device", *p,
                              platform_info(platforms[*p], CL_PLATFORM_NAME)));
  }
  std::vector<cl_device_id> devices(n_devices);
  clGetDeviceIDs(platforms[*p], CL_DEVICE_TYPE_ALL, n_devices, devices.data(), nullptr);
  auto d = pick_index("TUNEKIT_OPENCL_DEVICE", n_devices, "device");
  if (!d) return d.status();
  Device device{platforms[*p], devices[*d], {}};
  device.description = fmt::format("{} / {} / {}", platform_info(device.platform, CL_PLATFORM_NAME),
                                   device_info(device.device, CL_DEVICE_NAME),
                                   device_info(device.device, CL_DRIVER_VERSION));
  return device;
}

Expected<Context> make_context(const Device& device) {
  const cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform), 0};
  cl_int err = CL_SUCCESS;
  Context context(clCreateContext(properties, 1, &device.device, nullptr, nullptr, &err));
  if (err != CL_SUCCESS) return call_failed("clCreateContext", err);
  return context;
}

std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace tunekit::opencl
#endif
