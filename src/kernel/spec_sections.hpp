// The sections of a kernel spec that configure measurement and search: launch, verify, timing,
// build, isolation, strategy, budget and log.
#pragma once

#include <string>
#include <string_view>

#include "spec_fields.hpp"
#include "tunekit/kernel/kernel_spec.hpp"

namespace tunekit::kernel_detail {

/// `path` resolved against `directory` unless absolute, lexically normalised.
std::string resolve_path(const std::string& directory, const std::string& path);

/// The text of the kernel source `path`; errors name `field`.
Expected<std::string> read_source(const SpecFields& f, const std::string& path,
                                  std::string_view field);

/// Reads the measurement and search sections of `root` into `spec` (whose source, problem and
/// space are already read).
class SectionReader {
 public:
  SectionReader(const Json& root, const SpecFields& f, KernelSpec& spec,
                const ScalarValues& scalars)
      : root_(root), f_(f), spec_(spec), scalars_(scalars) {}

  /// Every section, in a fixed order; the first error.
  Status read_all();

 private:
  Status read_launch();
  Status read_verify();
  Status read_reference(const Json& ref);
  Status read_reference_params(const Json& params);
  Status read_reference_kernel(const Json& ref);
  Status read_verify_function(const Json& fn);
  /// A C/C++ source beside the kernel ({"source", "entry", "flags"}) into `out`.
  Status read_side_source(const Json& obj, const std::string& where, KernelSource& out);
  Status read_timing();
  Status read_build();
  Status read_isolation();
  Status read_strategy();
  Status read_budget();
  Status read_log();

  const Json& root_;
  const SpecFields& f_;
  KernelSpec& spec_;
  const ScalarValues& scalars_;
};

}  // namespace tunekit::kernel_detail
