// Builders of kernel configurations: the compile-time definitions a configuration becomes, the
// options shared by every language's builder, and the factory choosing a builder by language.
#pragma once

#include <memory>
#include <string>
#include <string_view>
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
/// a knob, range or power2 parameter gives NAME=value (integers in decimal, other numbers as
/// JSON writes them, booleans 1/0, strings as written); a split gives NAME_0..NAME_{n-1} with
/// its sizes, the outer -1 replaced by ceil(length / product of the other sizes); a reorder
/// NAME_0.. with the axis order; an annotate NAME_0.. with its annotation words (or anchor
/// indices). A string that is no valid preprocessor token sequence (an unmatched quote) is
/// passed as written: the compiler reports it where the macro is used.
/// An empty config gives no definitions. Names are not checked here: see check_define_names.
std::vector<std::pair<std::string, std::string>> config_defines(const Config& config);

/// True when `name` is a C identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_c_identifier(std::string_view name) noexcept;

/// Checks that every knob of `space` can become a -D name (a C identifier).
/// Errors: kInvalidArgument "parameter 'tile-x' is not a C identifier, so it cannot be a
/// preprocessor definition" for the first knob that is not.
Status check_define_names(const ConfigSpace& space);

/// A builder for `source`'s language (C/C++ shared objects, OpenCL program binaries, CUDA
/// modules through NVRTC).
/// Errors: kUnsupported when the language's toolchain is absent from this build (OpenCL or CUDA
/// headers missing at configure time), naming it.
Expected<std::shared_ptr<Builder>> make_kernel_builder(const KernelSource& source,
                                                       const BuildOptions& options);

}  // namespace tunekit
