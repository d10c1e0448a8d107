// The CUDA driver kernel backend: device allocations, PTX/CUBIN modules loaded per
// configuration, cuLaunchKernel. See include/tunekit/measure/device_backends.hpp.
#include "cuda_driver.hpp"
#include "tunekit/measure/device_backends.hpp"

#if TUNEKIT_HAVE_CUDA
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tunekit/measure/device_compile.hpp"
#include "tunekit/measure/launch_dims.hpp"
#endif

namespace tunekit {

#if TUNEKIT_HAVE_CUDA
namespace {

class CudaBackend final : public KernelBackend {
 public:
  CudaBackend(const cuda::DriverApi& api, KernelProblem problem, LaunchGeometry launch)
      : api_(api), problem_(std::move(problem)), launch_(std::move(launch)) {}

  ~CudaBackend() override {
    if (context_ == nullptr) return;
    api_.ctx_set_current(context_);
    if (module_ != nullptr) api_.module_unload(module_);
    for (CUdeviceptr p : device_) {
      if (p != 0) api_.mem_free(p);
    }
    api_.primary_ctx_release(ordinal_);
  }

  Status prepare(const ArgumentBuffers& pristine) override {
    TUNEKIT_RETURN_IF_ERROR(check(api_.device_get(&ordinal_, 0), "cuDeviceGet"));
    TUNEKIT_RETURN_IF_ERROR(
        check(api_.primary_ctx_retain(&context_, ordinal_), "cuDevicePrimaryCtxRetain"));
    TUNEKIT_RETURN_IF_ERROR(check(api_.ctx_set_current(context_), "cuCtxSetCurrent"));
    device_.assign(problem_.arguments.size(), 0);
    scalars_.assign(problem_.arguments.size(), ScalarValue{});
    pointers_.assign(problem_.arguments.size(), nullptr);
    for (std::size_t i = 0; i < problem_.arguments.size(); ++i) {
      const KernelArgument& arg = problem_.arguments[i];
      if (arg.is_scalar) {
        scalars_[i] = scalar_value_of(arg);
        pointers_[i] = &scalars_[i];
        continue;
      }
      TUNEKIT_RETURN_IF_ERROR(check(api_.mem_alloc(&device_[i], pristine.bytes(i)), "cuMemAlloc"));
      pointers_[i] = &device_[i];
    }
    return restore(pristine, /*outputs_only=*/false);
  }

  Status load(const std::string& artifact, const std::string& entry,
              const nlohmann::json& params) override {
    if (module_ != nullptr) api_.module_unload(module_);
    module_ = nullptr;
    function_ = nullptr;
    auto dims = evaluate_launch(launch_, problem_, params);
    if (!dims) return Status(StatusCode::kRuntimeError, dims.status().message());
    dims_ = *dims;
    auto image = read_artifact(artifact);
    if (!image) return Status(StatusCode::kRuntimeError, image.status().message());
    image->push_back('\0');  // PTX is loaded as a NUL-terminated string
    const std::string what = fmt::format("cuModuleLoadData('{}')", artifact);
    TUNEKIT_RETURN_IF_ERROR(check(api_.module_load_data(&module_, image->data()), what.c_str()));
    const std::string find = fmt::format("cuModuleGetFunction('{}')", entry);
    return check(api_.module_get_function(&function_, module_, entry.c_str()), find.c_str());
  }

  Status launch() override {
    const auto grid = dims_.groups();
    const auto& block = dims_.local;
    TUNEKIT_RETURN_IF_ERROR(check(
        api_.launch_kernel(function_, static_cast<unsigned>(grid[0]),
                           static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
                           static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]),
                           static_cast<unsigned>(block[2]), 0, nullptr, pointers_.data(), nullptr),
        "cuLaunchKernel"));
    return check(api_.ctx_synchronize(), "cuCtxSynchronize");
  }

  Status restore(const ArgumentBuffers& pristine, bool outputs_only) override {
    for (std::size_t i = 0; i < problem_.arguments.size(); ++i) {
      const KernelArgument& arg = problem_.arguments[i];
      if (arg.is_scalar || (outputs_only && !arg.is_output)) continue;
      TUNEKIT_RETURN_IF_ERROR(
          check(api_.memcpy_htod(device_[i], pristine.data(i), pristine.bytes(i)), "cuMemcpyHtoD"));
    }
    return Status::ok();
  }

  Status read_outputs(ArgumentBuffers& host) override {
    for (std::size_t i = 0; i < problem_.arguments.size(); ++i) {
      if (!problem_.arguments[i].is_output) continue;
      TUNEKIT_RETURN_IF_ERROR(
          check(api_.memcpy_dtoh(host.data(i), device_[i], host.bytes(i)), "cuMemcpyDtoH"));
    }
    return Status::ok();
  }

  std::vector<measure::MemoryRange> flush_ranges() const override { return {}; }
  bool fork_per_trial() const override { return false; }

 private:
  Status check(CUresult result, const char* what) const {
    return result == CUDA_SUCCESS ? Status::ok() : cuda::call_failed(api_, what, result);
  }

  const cuda::DriverApi& api_;
  KernelProblem problem_;
  LaunchGeometry launch_;
  CUdevice ordinal_ = 0;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  std::vector<CUdeviceptr> device_;
  std::vector<ScalarValue> scalars_;
  std::vector<void*> pointers_;
  LaunchDims dims_;
};

}  // namespace

Status cuda_runtime_status() {
  auto api = cuda::driver();
  return api ? Status::ok() : api.status();
}

Expected<std::unique_ptr<KernelBackend>> make_cuda_backend(const KernelProblem& problem,
                                                           const LaunchGeometry& launch) {
  auto api = cuda::driver();
  if (!api) return api.status();
  return std::unique_ptr<KernelBackend>(std::make_unique<CudaBackend>(**api, problem, launch));
}

#else

Status cuda_runtime_status() {
  return Status(StatusCode::kUnsupported, "CUDA is not built into tunekit (TUNEKIT_WITH_CUDA)");
}

Expected<std::unique_ptr<KernelBackend>> make_cuda_backend(const KernelProblem&,
                                                           const LaunchGeometry&) {
  return cuda_runtime_status();
}

#endif

}  // namespace tunekit
