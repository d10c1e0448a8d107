// The reference artefact of a kernel runner. See src/measure/reference_entry.hpp.
#include "measure/reference_entry.hpp"

namespace tunekit::measure {

Expected<ReferenceEntry> reference_entry(const KernelSource& source, const RunnerOptions& options) {
  using Reference = VerifyRule::Reference;
  const Reference rule = options.verify.reference;
  ReferenceEntry out;
  if (rule == Reference::kNone || rule == Reference::kFirstValid) return out;
  if (options.reference_artifact.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string("verification against a reference ") +
                      (rule == Reference::kConfig ? "configuration" : "kernel") +
                      " needs its built artefact (RunnerOptions::reference_artifact)");
  }
  out.artifact = options.reference_artifact;
  if (rule == Reference::kConfig) {
    out.entry = source.entry;
    out.params = options.verify.reference_params;
  } else {
    const std::string& entry = options.verify.reference_source.entry;
    out.entry = entry.empty() ? source.entry : entry;
  }
  return out;
}

}  // namespace tunekit::measure
