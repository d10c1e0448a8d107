// The OpenCL kernel backend: buffers on the selected device, program binaries loaded per
// configuration, NDRange launches. See include/tunekit/measure/device_backends.hpp.
#include "opencl_handles.hpp"
#include "tunekit/measure/device_backends.hpp"

#if TUNEKIT_HAVE_OPENCL
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tunekit/measure/device_compile.hpp"
#include "tunekit/measure/launch_dims.hpp"
#endif

namespace tunekit {

#if TUNEKIT_HAVE_OPENCL
namespace {

class OpenClBackend final : public KernelBackend {
 public:
  OpenClBackend(KernelProblem problem, LaunchGeometry launch)
      : problem_(std::move(problem)), launch_(std::move(launch)) {}

  Status prepare(const ArgumentBuffers& pristine) override {
    auto device = opencl::select_device();
    if (!device) return device.status();
    device_ = std::move(*device);
    auto context = opencl::make_context(device_);
    if (!context) return context.status();
    context_ = std::move(*context);
    cl_int err = CL_SUCCESS;
    queue_.reset(clCreateCommandQueue(context_.get(), device_.device, 0, &err));
    if (err != CL_SUCCESS) return opencl::call_failed("clCreateCommandQueue", err);
    buffers_.clear();
    for (std::size_t i = 0; i < problem_.arguments.size(); ++i) {
      if (problem_.arguments[i].is_scalar) {
        buffers_.emplace_back();
        continue;
      }
      buffers_.emplace_back(
          clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, pristine.bytes(i), nullptr, &err));
      if (err != CL_SUCCESS) return opencl::call_failed("clCreateBuffer", err);
    }
    return restore(pristine, /*outputs_only=*/false);
  }

  Status load(const std::string& artifact, const std::string& entry,
              const nlohmann::json& params) override {
    kernel_.reset();
    program_.reset();
    auto dims = evaluate_launch(launch_, problem_, params);
    if (!dims) return Status(StatusCode::kRuntimeError, dims.status().message());
    dims_ = *dims;
    TUNEKIT_RETURN_IF_ERROR(load_program(artifact));
    cl_int err = CL_SUCCESS;
    kernel_.reset(clCreateKernel(program_.get(), entry.c_str(), &err));
    if (err != CL_SUCCESS) {
      return opencl::call_failed(fmt::format("kernel '{}' in '{}'", entry, artifact).c_str(), err);
    }
    return set_arguments();
  }

  Status launch() override {
    const cl_int err = clEnqueueNDRangeKernel(
        queue_.get(), kernel_.get(), static_cast<cl_uint>(dims_.dims), nullptr, dims_.global.data(),
        dims_.has_local ? dims_.local.data() : nullptr, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return opencl::call_failed("clEnqueueNDRangeKernel", err);
    const cl_int done = clFinish(queue_.get());
    if (done != CL_SUCCESS) return opencl::call_failed("clFinish", done);
    return Status::ok();
  }

  Status restore(const ArgumentBuffers& pristine, bool outputs_only) override {
    for (std::size_t i = 0; i < problem_.arguments.size(); ++i) {
      const KernelArgument& arg = problem_.arguments[i];
      if (arg.is_scalar || (outputs_only && !arg.is_output)) continue;
      const cl_int err =
          clEnqueueWriteBuffer(queue_.get(), buffers_[i].get(), CL_TRUE, 0, pristine.bytes(i),
                               pristine.data(i), 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return opencl::call_failed("clEnqueueWriteBuffer", err);
    }
    return Status::ok();
  }

  Status read_outputs(ArgumentBuffers& host) override {
    for (std::size_t i = 0; i < problem_.arguments.size(); ++i) {
      if (!problem_.arguments[i].is_output) continue;
      const cl_int err = clEnqueueReadBuffer(queue_.get(), buffers_[i].get(), CL_TRUE, 0,
                                             host.bytes(i), host.data(i), 0, nullptr, nullptr);
      if (err != CL_SUCCESS) return opencl::call_failed("clEnqueueReadBuffer", err);
    }
    return Status::ok();
  }

  std::vector<measure::MemoryRange> flush_ranges() const override { return {}; }
  bool fork_per_trial() const override { return false; }

 private:
  Status load_program(const std::string& artifact) {
    auto binary = read_artifact(artifact);
    if (!binary) return Status(StatusCode::kRuntimeError, binary.status().message());
    const auto* bytes = reinterpret_cast<const unsigned char*>(binary->data());
    const std::size_t size = binary->size();
    cl_int status = CL_SUCCESS;
    cl_int err = CL_SUCCESS;
    program_.reset(clCreateProgramWithBinary(context_.get(), 1, &device_.device, &size, &bytes,
                                             &status, &err));
    if (err != CL_SUCCESS) {
      return opencl::call_failed(fmt::format("program binary '{}'", artifact).c_str(), err);
    }
    err = clBuildProgram(program_.get(), 1, &device_.device, nullptr, nullptr, nullptr);
    if (err != CL_SUCCESS) {
      return Status(
          StatusCode::kRuntimeError,
          fmt::format("program binary '{}' does not load: {}", artifact,
                      first_log_lines(opencl::build_log(program_.get(), device_.device))));
    }
    return Status::ok();
  }

  Status set_arguments() {
    for (std::size_t i = 0; i < problem_.arguments.size(); ++i) {
      const KernelArgument& arg = problem_.arguments[i];
      const auto index = static_cast<cl_uint>(i);
      cl_int err = CL_SUCCESS;
      if (arg.is_scalar) {
        const ScalarValue value = scalar_value_of(arg);
        err = clSetKernelArg(kernel_.get(), index, dtype_bytes(arg.dtype), &value);
      } else {
        cl_mem mem = buffers_[i].get();
        err = clSetKernelArg(kernel_.get(), index, sizeof(cl_mem), &mem);
      }
      if (err != CL_SUCCESS) {
        return opencl::call_failed(fmt::format("argument {} '{}'", i, arg.name).c_str(), err);
      }
    }
    return Status::ok();
  }

  KernelProblem problem_;
  LaunchGeometry launch_;
  opencl::Device device_;
  opencl::Context context_;
  opencl::Queue queue_;
  std::vector<opencl::Mem> buffers_;
  opencl::Program program_;
  opencl::Kernel kernel_;
  LaunchDims dims_;
};

}  // namespace

Expected<std::unique_ptr<KernelBackend>> make_opencl_backend(const KernelProblem& problem,
                                                             const LaunchGeometry& launch) {
  return std::unique_ptr<KernelBackend>(std::make_unique<OpenClBackend>(problem, launch));
}

#else

Expected<std::unique_ptr<KernelBackend>> make_opencl_backend(const KernelProblem&,
                                                             const LaunchGeometry&) {
  return Status(StatusCode::kUnsupported, "OpenCL is not built into tunekit (TUNEKIT_WITH_OPENCL)");
}

#endif

}  // namespace tunekit
