// The isolated kernel runner: configurations run in a worker process (tunekit-kernel-worker)
// spawned with posix_spawn; crashes, exits and hangs become failed trials, a dead or silent
// worker is replaced.
#pragma once

#include <sys/types.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "measure/kernel_runner_base.hpp"
#include "measure/line_channel.hpp"
#include "tunekit/measure/kernel_runner.hpp"

namespace tunekit::measure {

/// Measures each configuration in a worker process. With Isolation::kProcess C/C++ workers fork
/// one child per trial (pristine memory for each; the worker kills a child past timeout_s);
/// warm workers (Isolation::kWorker, and OpenCL and CUDA always) run trials themselves and are
/// killed past timeout_s. A worker that dies or
/// stops answering is killed, and a new one is started for the next configuration (the
/// reference is re-established from the artefact that gave it); so is a C/C++ warm worker
/// (Isolation::kWorker) after any failed trial, whose kernel may have corrupted its memory. The
/// process spawned is the worker's keeper (src/measure/worker_keeper.hpp): the worker's parent is
/// never the tuning process, and the processes kernels start end after their trial, or with the
/// worker.
class IsolatedRunner final : public KernelRunnerBase {
 public:
  /// Spawns the worker `worker_path` and prepares it (and measures the reference artefact for
  /// kConfig/kKernel).
  /// Errors: kIoError when the worker cannot be started; kRuntimeError when it fails to
  /// prepare (its message) or the reference fails; kInvalidArgument as reference_entry().
  static Expected<std::shared_ptr<IsolatedRunner>> create(const KernelSource& source,
                                                          const KernelProblem& problem,
                                                          const RunnerOptions& options,
                                                          const std::string& worker_path);
  /// Stops the worker.
  ~IsolatedRunner() override;

  /// Process id of the current worker's keeper, the process spawned (killing it kills the
  /// worker); -1 when none is running.
  pid_t worker_pid() const noexcept { return pid_; }

 protected:
  MeasureResult measure_one(const MeasureInput& input, const BuildResult& build) override;

 private:
  IsolatedRunner() = default;
  /// Starts and initialises a worker.
  Status start();
  Status spawn();
  /// Ends the worker (if any; at once when `kill_first`, else after it read the end of its
  /// input) and reaps its keeper; returns how the worker ended ("" when none ran).
  std::string stop(bool kill_first);
  /// Asks the keeper to kill the worker now (SIGCONT, then SIGTERM).
  void end_worker() const;
  MeasureResult exchange_trial(const nlohmann::json& message);
  /// A trial established the first-valid reference: a new worker re-runs its artefact first.
  void remember_reference(const nlohmann::json& trial_message);

  std::string worker_path_;
  nlohmann::json init_message_;
  double timeout_s_ = 10.0;
  bool fork_per_trial_ = true;
  bool replace_after_failure_ = false;  ///< C/C++ warm worker: a new one after a failed trial
  pid_t pid_ = -1;
  int last_status_ = 0;  ///< wait status of the last worker stop() reaped
  int fd_ = -1;
  LineChannel channel_;
};

}  // namespace tunekit::measure
