// OpenCL handles owned by unique_ptr (released with clRelease*) and the device selection shared
// by the OpenCL compiler and backend. Internal; only built with TUNEKIT_HAVE_OPENCL.
#pragma once

#if TUNEKIT_HAVE_OPENCL
#include <CL/cl.h>

#include <memory>
#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit::opencl {

struct ContextRelease {
  void operator()(cl_context h) const noexcept { clReleaseContext(h); }
};
struct QueueRelease {
  void operator()(cl_command_queue h) const noexcept { clReleaseCommandQueue(h); }
};
struct ProgramRelease {
  void operator()(cl_program h) const noexcept { clReleaseProgram(h); }
};
struct KernelRelease {
  void operator()(cl_kernel h) const noexcept { clReleaseKernel(h); }
};
struct MemRelease {
  void operator()(cl_mem h) const noexcept { clReleaseMemObject(h); }
};
using Context = std::unique_ptr<_cl_context, ContextRelease>;
using Queue = std::unique_ptr<_cl_command_queue, QueueRelease>;
using Program = std::unique_ptr<_cl_program, ProgramRelease>;
using Kernel = std::unique_ptr<_cl_kernel, KernelRelease>;
using Mem = std::unique_ptr<_cl_mem, MemRelease>;

/// The device kernels run on and its description "<platform> / <device> / <driver version>".
struct Device {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  std::string description;
};

/// Platform $TUNEKIT_OPENCL_PLATFORM, device $TUNEKIT_OPENCL_DEVICE (both default 0).
/// Errors: kUnsupported with no platform or device; kInvalidArgument for a bad index.
Expected<Device> select_device();

/// A context holding only `device`. Errors: kRuntimeError naming the OpenCL error code.
Expected<Context> make_context(const Device& device);

/// Status kRuntimeError "<what>: OpenCL error <code> (<name>)" for a failed call.
Status call_failed(const char* what, cl_int code);

/// The build log of `program` on `device`.
std::string build_log(cl_program program, cl_device_id device);

}  // namespace tunekit::opencl
#endif
