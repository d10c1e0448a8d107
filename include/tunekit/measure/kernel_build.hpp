// Builders of kernel configurations: the compile-time definitions a configuration becomes, the
// options shared by every language's builder, and the factory choosing a builder by language.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit {

/// Options of every kernel builder.
struct BuildOptions {
  /// Directory of the artefact cache; empty = $TUNEKIT_CACHE_DIR, else
  /// $XDG_CACHE_HOME/tunekit/kernels, else ~/.cache/tunekit/kernels.
  std::string cache_dir;
  /// Configurations built at once; 0 = the number of online CPUs.
  int n_parallel = 0;
  /// A build taking longer is stopped: kBuildTimeout. Units: seconds.
  double timeout_s = 60.0;
  /// C/C++ compiler; empty = $CXX, else "c++".
  std::string compiler;
  /// -march= value of C/C++ builds; "native" targets the building machine.
  std::string march = "native";
};

/// The preprocessor definitions of a configuration, in knob order, as (name, value) text:
/// a knob, range or power2 parameter gives NAME=value (booleans 1/0, strings as written);
/// a split gives NAME_0..NAME_{n-1} with its factors; a reorder NAME_0.. with the axis order;
/// an annotate NAME_0.. with its annotation words.
std::vector<std::pair<std::string, std::string>> config_defines(const Config& config);

/// A builder for `source`'s language (C/C++ shared objects, OpenCL program binaries, CUDA
/// modules through NVRTC).
/// Errors: kUnsupported when the language's toolchain is absent from this build (OpenCL or CUDA
/// headers missing at configure time), naming it.
Expected<std::shared_ptr<Builder>> make_kernel_builder(const KernelSource& source,
                                                       const BuildOptions& options);

}  // namespace tunekit
