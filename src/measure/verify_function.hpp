// A user verification function loaded from a shared object (VerifyRule::function).
#pragma once

#include <memory>
#include <string>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/argument_buffers.hpp"

namespace tunekit::measure {

/// The loaded function `int entry(int count, void* const* args, const void* const* reference,
/// const long long* elements, char* why, int why_size)` (kernel_problem.hpp, VerifyRule).
class VerifyFunction {
 public:
  /// dlopen()s `artifact` and finds `entry`.
  /// Errors: kNotFound naming the file or the symbol (with dlerror's text).
  static Expected<VerifyFunction> load(const std::string& artifact, const std::string& entry);

  /// Calls the function on `outputs` (every argument of the problem; arrays as the kernel left
  /// them) and, when not null, the reference outputs.
  /// Errors: kWrongResult "verification function
  ///   '<entry>' rejected the outputs: <why>" (or "... returned <n>" when it wrote no reason).
  Status check(const ArgumentBuffers& outputs, const ArgumentBuffers* reference) const;

 private:
  using Fn = int (*)(int, void* const*, const void* const*, const long long*, char*, int);
  std::shared_ptr<void> handle_;
  Fn fn_ = nullptr;
  std::string entry_;
};

}  // namespace tunekit::measure
