// The interface through which runners launch one built kernel configuration: C/C++ shared
// objects here, OpenCL and CUDA backends elsewhere; and the factory choosing one by language.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/argument_buffers.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/kernel_problem.hpp"

namespace tunekit {

/// Launches a kernel on a problem's arguments. One backend serves one problem and loads one
/// artefact at a time. Used by one thread; never shared between processes, except that a
/// backend whose fork_per_trial() is true is used by forked children of the process that
/// prepared it (memory copy-on-write, loaded artefacts included).
class KernelBackend {
 public:
  /// Releases buffers, loaded artefacts and device contexts.
  virtual ~KernelBackend() = default;

  /// Creates the launch buffers (on the device where there is one) holding `pristine`'s arrays.
  /// Called once, before any load().
  virtual Status prepare(const ArgumentBuffers& pristine) = 0;

  /// Loads the artefact of one configuration (C/C++: a shared object path; OpenCL: a program
  /// binary; CUDA: a module) and finds `entry` in it. `params` holds the configuration's
  /// parameters as {"name": value} (launch geometry of OpenCL/CUDA). Replaces a loaded one.
  /// Errors: kRuntimeError naming the artefact and the loader's message.
  virtual Status load(const std::string& artifact, const std::string& entry,
                      const nlohmann::json& params) = 0;

  /// Calls the loaded entry once on the launch buffers and waits for it to finish.
  /// Errors: kRuntimeError with the runtime's message (a crash in C/C++ never returns).
  virtual Status launch() = 0;

  /// Writes `pristine`'s arrays back into the launch buffers (outputs_only: only the outputs).
  virtual Status restore(const ArgumentBuffers& pristine, bool outputs_only) = 0;

  /// Copies the outputs of the last launch into `host`'s output arrays.
  virtual Status read_outputs(ArgumentBuffers& host) = 0;

  /// Host byte ranges a data-cache flush before each timed call evicts (empty on devices).
  virtual std::vector<measure::MemoryRange> flush_ranges() const = 0;

  /// True when each trial may run in a forked child of the prepared process (C/C++); false
  /// when a device context does not survive fork (OpenCL, CUDA: one persistent worker).
  virtual bool fork_per_trial() const = 0;
};

/// A scalar argument's value in its own dtype: what a backend passes by value (libffi, OpenCL's
/// clSetKernelArg, CUDA's cuLaunchKernel read it through a pointer to the member in use).
union ScalarValue {
  float f32;
  double f64;
  std::int32_t i32;
  std::int64_t i64;
};

/// The value of the scalar argument `arg`, converted to its dtype.
ScalarValue scalar_value_of(const KernelArgument& arg) noexcept;

/// True when this build has a backend for `language`.
bool kernel_backend_available(KernelLanguage language) noexcept;

/// Ok when kernels of `language` can run here: a backend is built in and, for CUDA, the driver
/// loads. Errors: kUnsupported with the reason ("no CUDA driver (libcuda.so.1 not found)").
Status kernel_backend_status(KernelLanguage language);

/// A backend for `language` on `problem` (not yet prepared); `launch` is the launch geometry of
/// OpenCL and CUDA kernels (unused for C/C++).
/// Errors: kUnsupported naming the language when this build has no backend for it.
Expected<std::unique_ptr<KernelBackend>> make_kernel_backend(KernelLanguage language,
                                                             const KernelProblem& problem,
                                                             const LaunchGeometry& launch = {});

/// The C/C++ backend: dlopen()s a shared object and calls its `extern "C"` entry through libffi
/// with the arguments in order (arrays as pointers to their first element, scalars by value in
/// their dtype).
std::unique_ptr<KernelBackend> make_cpp_backend(const KernelProblem& problem);

}  // namespace tunekit
