// Which artefact, entry and parameters give a runner's reference outputs (kConfig, kKernel).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit::measure {

/// The reference a runner measures before its first trial; artifact is empty when the rule
/// (kNone, kFirstValid) needs none.
struct ReferenceEntry {
  std::string artifact;
  std::string entry;
  nlohmann::json params = nlohmann::json::object();
};

/// The reference of `options.verify` for `source`.
/// Errors: kInvalidArgument when kConfig/kKernel is asked without options.reference_artifact.
Expected<ReferenceEntry> reference_entry(const KernelSource& source, const RunnerOptions& options);

}  // namespace tunekit::measure
