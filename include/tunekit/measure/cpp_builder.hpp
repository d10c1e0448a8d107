// CppBuilder: compiles a C/C++ kernel source once per configuration into a shared object, with
// the configuration as -D definitions, through the artefact cache.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tunekit/measure/artifact_cache.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit {

/// Builds C/C++ kernels with the system compiler:
///   <compiler> <flags...> [-x c] -shared -fPIC -march=<march> -I<source dir> -D<NAME>=<value>...
///   <source> -o <artefact>.so
/// `-x c` when the source path ends in ".c"; the source text is written into the cache
/// directory behind a `#line 1 "<path>"` line, so diagnostics name the original file and line.
/// Artefacts and failed builds' diagnostics are kept in the ArtifactCache under a key over the
/// language, source text, source directory, flags, definitions, march, compiler command and the
/// compiler's `--version` output (run once per builder): a configuration built before is not
/// compiled again, and one that failed reports the same failure again without compiling.
/// Headers the source includes are not part of the key.
/// Thread safety: build() may be called from one thread at a time; it runs n_parallel()
/// compilers at once on threads of its own.
class CppBuilder : public Builder {
 public:
  /// A builder of `source` (language kCpp) with `options`. Nothing runs until the first build.
  CppBuilder(KernelSource source, BuildOptions options);

  /// One result per input, in order: artifact = the cached .so path, time_cost_s = seconds
  /// spent on that input (about 0 for a cache hit).
  /// Errors (as results): kCompileHost with the first diagnostic lines (at most 2 KiB; the
  /// whole text is in the cache directory) for a failed compile, an unusable cache directory,
  /// a compiler that cannot be run or a parameter name that is not a C identifier;
  /// kBuildTimeout "build ran past the 60 s timeout".
  std::vector<BuildResult> build(std::span<const MeasureInput> inputs) override;
  /// BuildOptions::n_parallel, or the number of online CPUs for 0.
  int n_parallel() const override { return n_parallel_; }

  /// Builds one configuration (an empty Config: no definitions, e.g. a reference kernel).
  BuildResult build_config(const Config& config);
  /// The compiler command: BuildOptions::compiler, else $CXX, else "c++", split at spaces
  /// (so "ccache g++" works).
  const std::vector<std::string>& compiler() const noexcept { return compiler_; }

 private:
  /// The compiler's `--version` output, run once; an error when it cannot be run.
  const Expected<std::string>& compiler_version();
  Expected<std::string> key_of(const std::vector<std::string>& defines);
  std::vector<std::string> command(const std::vector<std::string>& defines,
                                   const std::string& source_file,
                                   const std::string& output_file) const;
  BuildResult compile(const ArtifactCache& cache, const std::string& key,
                      const std::vector<std::string>& defines);
  BuildResult build_with(const ArtifactCache& cache, const Config& config);

  KernelSource source_;
  BuildOptions options_;
  std::vector<std::string> compiler_;
  int n_parallel_ = 1;
  std::once_flag version_once_;
  std::optional<Expected<std::string>> version_;
};

/// True when CppBuilder compiles `source` as C (`-x c`): its path ends in ".c", whatever its
/// spec's "language" says ("c", "c++" and "cpp" all name the C/C++ builder).
bool compiles_as_c(const KernelSource& source) noexcept;

}  // namespace tunekit
