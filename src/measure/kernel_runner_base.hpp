// What both kernel runners share: failed builds passed through, wall time and timestamps
// recorded, one configuration measured at a time.
#pragma once

#include <span>
#include <vector>

#include "tunekit/measure/measure_types.hpp"

namespace tunekit::measure {

/// A Runner measuring one built configuration at a time through measure_one().
class KernelRunnerBase : public Runner {
 public:
  /// One result per input. A failed build comes back with its error_no and error_msg; inputs
  /// without builds are kUnknownError (kernel runners need the builder's artefacts).
  std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                 std::span<const BuildResult> builds) override;

 protected:
  /// Measures `input` from the artefact `build.artifact` (a successful build). Sets costs_s,
  /// error_no and error_msg.
  virtual MeasureResult measure_one(const MeasureInput& input, const BuildResult& build) = 0;
};

}  // namespace tunekit::measure
