// load_best: the apply half of kernel tuning. The best configuration of a spec's task in a log,
// built through the artefact cache and loaded as a callable function.
#pragma once

#include <cstring>
#include <memory>
#include <string>

#include "tunekit/core/status.hpp"
#include "tunekit/kernel/kernel_spec.hpp"

namespace tunekit {

/// A loaded C/C++ kernel entry. Holds the shared object open while any copy lives.
class KernelFunction {
 public:
  /// An entry `entry` of the loaded object `handle` (dlopen handle; closed with the last copy).
  KernelFunction(std::shared_ptr<void> handle, void* entry, std::string symbol,
                 std::string artifact, std::string config_text, double mean_cost_s)
      : handle_(std::move(handle)),
        entry_(entry),
        symbol_(std::move(symbol)),
        artifact_(std::move(artifact)),
        config_text_(std::move(config_text)),
        mean_cost_s_(mean_cost_s) {}

  /// Calls the entry as `void entry(Args...)`: pass the arguments exactly in the kernel's
  /// types (pointers for arrays, `int` for int32 scalars, ...); nothing checks them.
  template <class... Args>
  void operator()(Args... args) const {
    using Fn = void (*)(Args...);
    Fn fn = nullptr;
    static_assert(sizeof(fn) == sizeof(entry_));
    std::memcpy(&fn, &entry_, sizeof(fn));
    fn(args...);
  }

  /// The entry's name (the spec's "entry").
  const std::string& symbol() const noexcept { return symbol_; }
  /// The shared object loaded (in the artefact cache).
  const std::string& artifact() const noexcept { return artifact_; }
  /// The configuration, Config::to_string form ("tile=32,unroll=4").
  const std::string& config_text() const noexcept { return config_text_; }
  /// The configuration's mean cost in the log. Units: seconds.
  double mean_cost_s() const noexcept { return mean_cost_s_; }
  /// The entry's address.
  void* address() const noexcept { return entry_; }

 private:
  std::shared_ptr<void> handle_;
  void* entry_ = nullptr;
  std::string symbol_;
  std::string artifact_;
  std::string config_text_;
  double mean_cost_s_ = 0.0;
};

/// The best successful record of `spec`'s task (make_kernel_task: same name and arguments) in
/// the log at `log_path` (among current_definition_records), rebuilt with spec.build (a cache
/// hit when the tuning run built it) and loaded with dlopen.
/// Errors: load_records' (kNotFound for a missing log); kNotFound "<log>: no successful record
///   of task '<name>' ..." ; kInvalidArgument when the best record was written for another
///   definition of the space or names a configuration outside it; kCompileError with the
///   build's message; kRuntimeError with dlopen's or dlsym's message; kUnsupported for OpenCL
///   and CUDA kernels (no host entry to call). Every message names the log and the task.
Expected<KernelFunction> load_best(const std::string& log_path, const KernelSpec& spec);

}  // namespace tunekit
