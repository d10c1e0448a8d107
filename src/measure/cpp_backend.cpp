// The C/C++ kernel backend: a shared object loaded with dlopen, its entry called through libffi.
// See include/tunekit/measure/kernel_backend.hpp.
#include <dlfcn.h>
#include <ffi.h>
#include <fmt/format.h>
#include <link.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunekit/measure/kernel_backend.hpp"

namespace tunekit {
namespace {

ffi_type* ffi_type_of(ArgDtype dtype) {
  switch (dtype) {
    case ArgDtype::kFloat32:
      return &ffi_type_float;
    case ArgDtype::kFloat64:
      return &ffi_type_double;
    case ArgDtype::kInt32:
      return &ffi_type_sint32;
    case ArgDtype::kInt64:
      return &ffi_type_sint64;
  }
  return &ffi_type_double;
}

class CppBackend final : public KernelBackend {
 public:
  explicit CppBackend(KernelProblem problem) : problem_(std::move(problem)) {}
  ~CppBackend() override { unload(); }

  Status prepare(const ArgumentBuffers& pristine) override {
    auto buffers = ArgumentBuffers::allocate(problem_);
    if (!buffers) return buffers.status();
    buffers_ = std::move(*buffers);
    buffers_.copy_from(pristine);
    return prepare_call();
  }

  Status load(const std::string& artifact, const std::string& entry,
              const nlohmann::json& /*params*/) override {
    unload();
    handle_ = ::dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = ::dlerror();
      return Status(StatusCode::kRuntimeError,
                    fmt::format("cannot load '{}': {}", artifact, why ? why : "unknown error"));
    }
    ::dlerror();
    void* symbol = ::dlsym(handle_, entry.c_str());
    if (symbol == nullptr) {
      unload();
      return Status(
          StatusCode::kRuntimeError,
          fmt::format("'{}' has no function '{}' (declare it extern \"C\")", artifact, entry));
    }
    function_ = symbol;
    pin_dependencies(handle_);
    return Status::ok();
  }

  Status launch() override {
    if (function_ == nullptr) return Status(StatusCode::kInternal, "launch() before load()");
    ffi_call(&cif_, FFI_FN(function_), nullptr, values_.data());
    return Status::ok();
  }

  Status restore(const ArgumentBuffers& pristine, bool outputs_only) override {
    buffers_.copy_from(pristine, outputs_only);
    return Status::ok();
  }

  Status read_outputs(ArgumentBuffers& host) override {
    host.copy_from(buffers_, /*outputs_only=*/true);
    return Status::ok();
  }

  std::vector<measure::MemoryRange> flush_ranges() const override { return buffers_.ranges(); }
  bool fork_per_trial() const override { return true; }

 private:
  /// Builds the call interface once: argument types, and one value slot per argument (a pointer
  /// to the array's pointer, or to the scalar's value).
  Status prepare_call() {
    const std::size_t n = problem_.arguments.size();
    types_.resize(n);
    values_.resize(n);
    pointers_.resize(n);
    scalars_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const KernelArgument& arg = problem_.arguments[i];
      if (arg.is_scalar) {
        scalars_[i] = scalar_value_of(arg);
        types_[i] = ffi_type_of(arg.dtype);
        values_[i] = &scalars_[i];
      } else {
        pointers_[i] = buffers_.data(i);
        types_[i] = &ffi_type_pointer;
        values_[i] = &pointers_[i];
      }
    }
    if (ffi_prep_cif(&cif_, FFI_DEFAULT_ABI, static_cast<unsigned>(n), &ffi_type_void,
                     types_.data()) != FFI_OK) {
      return Status(StatusCode::kInternal, "libffi could not prepare the kernel's call");
    }
    return Status::ok();
  }

  /// Keeps the libraries `handle` brought in (libgomp, ...) loaded after it is closed: a
  /// runtime unloaded under its own threads (an OpenMP pool spinning or sleeping in it) would
  /// crash the process during a later configuration, or leave those threads behind; kept, its
  /// thread pool stays warm for the next configuration.
  static void pin_dependencies(void* handle) noexcept {
    link_map* map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return;
    for (const link_map* dep = map->l_next; dep != nullptr; dep = dep->l_next) {
      if (dep->l_name == nullptr || dep->l_name[0] == '\0') continue;
      (void)::dlopen(dep->l_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);  // never closed
    }
  }

  void unload() noexcept {
    function_ = nullptr;
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = nullptr;
  }

  KernelProblem problem_;
  ArgumentBuffers buffers_;
  ffi_cif cif_{};
  std::vector<ffi_type*> types_;
  std::vector<void*> values_;
  std::vector<void*> pointers_;
  std::vector<ScalarValue> scalars_;
  void* handle_ = nullptr;
  void* function_ = nullptr;
};

}  // namespace

std::unique_ptr<KernelBackend> make_cpp_backend(const KernelProblem& problem) {
  return std::make_unique<CppBackend>(problem);
}

}  // namespace tunekit
