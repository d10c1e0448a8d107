// A user verification function loaded from a shared object. See verify_function.hpp.
#include "measure/verify_function.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <vector>

#include "tunekit/measure/kernel_backend.hpp"

namespace tunekit::measure {

Expected<VerifyFunction> VerifyFunction::load(const std::string& artifact,
                                              const std::string& entry) {
  void* raw = dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) {
    return Status(
        StatusCode::kNotFound,
        fmt::format("cannot load the verification function '{}': {}", artifact, dlerror()));
  }
  VerifyFunction f;
  f.handle_ = std::shared_ptr<void>(raw, [](void* h) { dlclose(h); });
  void* symbol = dlsym(raw, entry.c_str());
  if (symbol == nullptr) {
    return Status(StatusCode::kNotFound,
                  fmt::format("'{}' has no verification function '{}'", artifact, entry));
  }
  static_assert(sizeof(f.fn_) == sizeof(symbol));
  std::memcpy(&f.fn_, &symbol, sizeof(symbol));
  f.entry_ = entry;
  return f;
}

Status VerifyFunction::check(const ArgumentBuffers& outputs,
                             const ArgumentBuffers* reference) const {
  const auto& arguments = outputs.problem().arguments;
  std::vector<ScalarValue> scalars(arguments.size());
  std::vector<void*> args(arguments.size(), nullptr);
  std::vector<const void*> refs(arguments.size(), nullptr);
  std::vector<long long> elements(arguments.size(), 0);
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const KernelArgument& arg = arguments[i];
    if (arg.is_scalar) {
      scalars[i] = scalar_value_of(arg);
      args[i] = &scalars[i];
      continue;
    }
    args[i] = const_cast<void*>(outputs.data(i));
    elements[i] = static_cast<long long>(arg.size);
    if (reference != nullptr && arg.is_output) refs[i] = reference->data(i);
  }
  std::array<char, 512> why{};
  const int rc = fn_(static_cast<int>(arguments.size()), args.data(), refs.data(), elements.data(),
                     why.data(), static_cast<int>(why.size()));
  if (rc == 0) return Status::ok();
  why.back() = '\0';
  const std::string reason =
      why[0] != '\0' ? std::string(why.data()) : fmt::format("returned {}", rc);
  return Status(StatusCode::kWrongResult,
                fmt::format("verification function '{}' rejected the outputs: {}", entry_, reason));
}

}  // namespace tunekit::measure
