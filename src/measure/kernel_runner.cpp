// make_kernel_runner (isolated or in-process) and the search for the worker program.
// See include/tunekit/measure/kernel_runner.hpp.
#include "tunekit/measure/kernel_runner.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "measure/in_process_runner.hpp"
#include "measure/isolated_runner.hpp"
#include "tunekit/measure/kernel_backend.hpp"

namespace tunekit {
namespace {

constexpr const char* kWorkerName = "tunekit-kernel-worker";

/// Directory of the binary (library or program) holding this function.
std::filesystem::path own_binary_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&find_kernel_worker), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  auto path = std::filesystem::weakly_canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : path.parent_path();
}

}  // namespace

Expected<std::string> find_kernel_worker() {
  if (const char* env = std::getenv("TUNEKIT_KERNEL_WORKER"); env != nullptr && *env != '\0') {
    if (::access(env, X_OK) == 0) return std::string(env);
    return Status(StatusCode::kNotFound, std::string("$TUNEKIT_KERNEL_WORKER names '") + env +
                                             "', which is not an executable file");
  }
  const std::filesystem::path dir = own_binary_dir();
  const std::vector<std::filesystem::path> tried = {
      dir / kWorkerName, (dir / TUNEKIT_WORKER_FROM_LIBDIR / kWorkerName).lexically_normal()};
  std::string list;
  for (const auto& path : tried) {
    if (::access(path.c_str(), X_OK) == 0) return path.string();
    list += (list.empty() ? "" : ", ") + path.string();
  }
  return Status(StatusCode::kNotFound,
                std::string("cannot find the kernel worker program (tried ") + list +
                    "; set $TUNEKIT_KERNEL_WORKER)");
}

Expected<std::shared_ptr<Runner>> make_kernel_runner(const KernelSource& source,
                                                     const KernelProblem& problem,
                                                     const RunnerOptions& options) {
  if (!kernel_backend_available(source.language)) {
    return Status(StatusCode::kUnsupported,
                  std::string("no ") + std::string(to_string(source.language)) +
                      " kernel runner in this build (OpenCL and CUDA backends are not built)");
  }
  if (options.isolation == Isolation::kInProcess) {
    auto runner = measure::InProcessRunner::create(source, problem, options);
    if (!runner) return runner.status();
    return std::shared_ptr<Runner>(std::move(*runner));
  }
  std::string worker = options.worker_path;
  if (worker.empty()) {
    auto found = find_kernel_worker();
    if (!found) return found.status();
    worker = std::move(*found);
  }
  auto runner = measure::IsolatedRunner::create(source, problem, options, worker);
  if (!runner) return runner.status();
  return std::shared_ptr<Runner>(std::move(*runner));
}

}  // namespace tunekit
