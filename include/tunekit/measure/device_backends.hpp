// The OpenCL and CUDA kernel backends: device buffers of a problem's arguments, a built program
// or module loaded per configuration, launches over the configuration's launch geometry.
#pragma once

#include <memory>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/kernel_backend.hpp"
#include "tunekit/measure/kernel_problem.hpp"

namespace tunekit {

/// The OpenCL backend on the device of $TUNEKIT_OPENCL_PLATFORM / $TUNEKIT_OPENCL_DEVICE: one
/// context and in-order queue; a cl_mem per array (scalars by value in their dtype, in argument
/// order); load() creates the program from the binary (OpenClBuilder's .clbin) and evaluates
/// `launch` (launch_dims.hpp) over the configuration; launch() enqueues the NDRange and waits
/// (clFinish). Not fork-safe: runs in a persistent worker.
/// Errors: kUnsupported when OpenCL is not built in (also from prepare(): no platform).
Expected<std::unique_ptr<KernelBackend>> make_opencl_backend(const KernelProblem& problem,
                                                             const LaunchGeometry& launch);

/// The CUDA driver backend on device 0: the primary context, a device allocation per array,
/// load() = cuModuleLoadData of the PTX/CUBIN file and cuModuleGetFunction(entry), launch() =
/// cuLaunchKernel with grid = ceil(global / local), block = local, then cuCtxSynchronize.
/// Errors: kUnsupported "no CUDA driver (libcuda.so.1 not found)" where the driver is absent,
/// or when CUDA is not built in.
Expected<std::unique_ptr<KernelBackend>> make_cuda_backend(const KernelProblem& problem,
                                                           const LaunchGeometry& launch);

/// Ok when a CUDA kernel can run here (NVRTC built in and the driver loads); else the reason
/// (kUnsupported "no CUDA driver (libcuda.so.1 not found)").
Status cuda_runtime_status();

}  // namespace tunekit
