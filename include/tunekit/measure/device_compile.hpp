// What an OpenCL or CUDA device compiler returns (binary bytes or the compiler's log), and the
// `-D` options a configuration's defines become. Shared by the OpenCL and NVRTC compilers.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// Output of one device compilation. A failed compilation of the source (syntax or semantic
/// errors) is `ok == false` with the compiler's log; problems of the runtime itself (no
/// platform, no toolkit) are the caller's Expected error instead.
struct DeviceCompileOutput {
  bool ok = false;
  /// OpenCL: the program binary of the device; CUDA: PTX text (compute_XY) or CUBIN (sm_XY).
  std::string binary;
  /// The compiler's messages (may be non-empty on success: warnings).
  std::string log;
  /// What the code was compiled for: "<platform> / <device>" or the CUDA architecture.
  std::string target;
};

/// The compile options of `defines`: one "-DNAME=value" per pair, in order.
std::vector<std::string> define_options(
    std::span<const std::pair<std::string, std::string>> defines);

/// The first `max_lines` non-empty lines of a compiler log, joined with "; " (error messages).
std::string first_log_lines(const std::string& log, int max_lines = 3);

/// The bytes of a built artefact (program binary, PTX, CUBIN) at `path`.
/// Errors: kNotFound / kIoError naming the artefact (core/file_io.hpp's messages).
Expected<std::string> read_artifact(const std::string& path);

}  // namespace tunekit
