// DeviceBuilder: the shared build loop of OpenCL and CUDA kernels (one device compile per
// configuration, artefacts and failures kept in the artefact cache, builds on threads).
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/measure/artifact_cache.hpp"
#include "tunekit/measure/device_compile.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit {

/// Builds device kernels configuration by configuration through the ArtifactCache: the key
/// covers the language, source text, flags, definitions, entry and target() (device or
/// architecture plus compiler version), so a configuration built before is not compiled again
/// and one that failed reports the same log again.
/// Errors (as results): kCompileDevice "kernel '<name>': <first lines of the log>" for a source
/// that does not compile (the whole log is in the cache directory); kCompileHost for an unusable
/// cache directory, a missing runtime or a parameter name that is not a C identifier.
/// Limits: compiles run inside this process (OpenCL runtime, NVRTC), so BuildOptions::timeout_s
/// is not enforced.
/// Thread safety: build() from one thread at a time; it runs n_parallel() compiles at once.
class DeviceBuilder : public Builder {
 public:
  /// One result per input, in order: artifact = the cached binary's path.
  std::vector<BuildResult> build(std::span<const MeasureInput> inputs) override;
  /// BuildOptions::n_parallel, or the number of online CPUs for 0.
  int n_parallel() const override { return n_parallel_; }
  /// Builds one configuration (an empty Config: no definitions).
  BuildResult build_config(const Config& config);

 protected:
  /// A builder of `source` whose artefacts end in `suffix` (".clbin", ".ptx", ".cubin").
  DeviceBuilder(KernelSource source, BuildOptions options, std::string suffix);
  /// What this builder compiles for, as part of the cache key (runtime, device, versions).
  virtual Expected<std::string> target() = 0;
  /// One device compile of the source with `defines` after the source's flags.
  virtual Expected<DeviceCompileOutput> compile(
      std::span<const std::pair<std::string, std::string>> defines) = 0;

  const KernelSource& source() const noexcept { return source_; }
  const BuildOptions& options() const noexcept { return options_; }

 private:
  BuildResult build_with(const ArtifactCache& cache, const std::string& target,
                         const Config& config);

  KernelSource source_;
  BuildOptions options_;
  std::string suffix_;
  int n_parallel_ = 1;
};

}  // namespace tunekit
