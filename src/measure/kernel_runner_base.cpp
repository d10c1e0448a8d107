// Failed-build pass-through, timestamps and wall time of the kernel runners.
// See src/measure/kernel_runner_base.hpp.
#include "measure/kernel_runner_base.hpp"

#include "tunekit/core/clock.hpp"

namespace tunekit::measure {

std::vector<MeasureResult> KernelRunnerBase::run(std::span<const MeasureInput> inputs,
                                                 std::span<const BuildResult> builds) {
  std::vector<MeasureResult> out;
  out.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::int64_t start = now_ns();
    MeasureResult r;
    if (i >= builds.size()) {
      r.error_no = MeasureErrorNo::kUnknownError;
      r.error_msg = "a kernel runner needs the builder's artefacts (no build result for input)";
    } else if (builds[i].error_no != MeasureErrorNo::kNoError) {
      r.error_no = builds[i].error_no;
      r.error_msg = builds[i].error_msg;
    } else {
      r = measure_one(inputs[i], builds[i]);
    }
    if (r.error_no != MeasureErrorNo::kNoError) r.costs_s.clear();
    r.all_cost_s = static_cast<double>(now_ns() - start) * 1e-9;
    r.timestamp_s = unix_time_s();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tunekit::measure
