// The kernel side of remote measurement. See include/tunekit/distributed/remote_kernel.hpp.
#include "tunekit/distributed/remote_kernel.hpp"

#include <fmt/format.h>

#include "tunekit/kernel/kernel_task.hpp"
#include "tunekit/kernel/tune_kernel.hpp"

namespace tunekit::distributed {

Expected<RemoteMeasureFn> local_kernel_measure(const KernelSpec& spec) {
  std::shared_ptr<const Task> task = make_kernel_task(spec);
  auto measure = make_kernel_measure(spec, task);
  if (!measure) return measure.status();
  return RemoteMeasureFn([task, options = *measure](std::uint64_t index) {
    auto config = task->space->get(index);
    if (!config) {
      MeasureResult failed;
      failed.error_no = MeasureErrorNo::kInstantiationError;
      failed.error_msg = fmt::format("config {}: {}", index, config.status().message());
      return failed;
    }
    const MeasureInput input{task, *config};
    return measure_batch(options, std::span(&input, 1)).at(0);
  });
}

double remote_reply_timeout_s(const KernelSpec& spec) noexcept {
  return spec.build.timeout_s + spec.timing.timeout_s + 30.0;
}

}  // namespace tunekit::distributed
