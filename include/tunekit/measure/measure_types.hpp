// Task, MeasureInput, MeasureResult (AutoTVM's MeasureErrorNo codes), and the Builder / Runner
// interfaces the tuning loop measures configurations through.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/space/config_space.hpp"

namespace tunekit {

/// Outcome of measuring one configuration. Numbering is AutoTVM's MeasureErrorNo and is written
/// into tuning logs; never reorder. Source: autotvm.md §6.
enum class MeasureErrorNo : std::uint8_t {
  kNoError = 0,
  kInstantiationError = 1,  ///< invalid config (template raise_error, GPU verify pass)
  kCompileHost = 2,         ///< any other build failure
  kCompileDevice = 3,       ///< device-code compilation failed
  kRuntimeDevice = 4,       ///< the kernel failed at run time
  kWrongAnswer = 5,         ///< the output check failed
  kBuildTimeout = 6,        ///< the build exceeded its timeout
  kRunTimeout = 7,          ///< the run exceeded its timeout
  kUnknownError = 8,
};

/// Upstream name: "NO_ERROR", "INSTANTIATION_ERROR", ..., "UNKNOWN_ERROR".
std::string_view to_string(MeasureErrorNo code) noexcept;
/// The code with that number, or kUnknownError for numbers outside 0..8.
MeasureErrorNo measure_error_from_int(int code) noexcept;

/// A tuning task (AutoTVM Task): a template name, its serialised arguments, the target and the
/// configuration space. Shared by every MeasureInput of a tuning run.
struct Task {
  /// Template name, e.g. "conv2d_nchw.cuda" or a kernel name for replay data.
  std::string name;
  /// Serialised arguments (autotvm.md §3): tensors as ["TENSOR", shape, dtype], tuples as lists.
  nlohmann::json args = nlohmann::json::array();
  /// Target string as written in logs, e.g. "cuda -model=titanx" or "llvm -mcpu=skylake-avx512".
  std::string target;
  /// Floating-point operations of one call; 0 when unknown (scores then use 1 / time).
  double flop = 0.0;
  /// The configuration space of the template. Configs of this task point into it.
  std::shared_ptr<const ConfigSpace> space;
};

/// One configuration to measure.
struct MeasureInput {
  std::shared_ptr<const Task> task;
  Config config;
};

/// The result of measuring one configuration.
/// Units:  seconds throughout (as AutoTVM logs them).
/// Errors: a failure is `error_no != kNoError` with empty `costs_s`; it never carries a cost
///         that could be picked as the best (logs write upstream's [1e9] placeholder, readers
///         select on error_no).
struct MeasureResult {
  /// Per-repeat costs in seconds (after upstream's drop of min and max for > 2 repeats).
  std::vector<double> costs_s;
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  /// Wall (or simulated) seconds spent on this configuration: build + run.
  double all_cost_s = 0.0;
  /// Seconds of all_cost_s spent building (BuildResult::time_cost_s, set by measure_batch);
  /// 0 when no builder ran. Units: seconds.
  double build_cost_s = 0.0;
  /// Unix seconds when the measurement finished (simulated runs: the simulated clock).
  double timestamp_s = 0.0;
  /// Short reason of a failure (not written to v0.2 logs, as upstream).
  std::string error_msg;

  /// True for a successful measurement (no error and at least one cost).
  bool ok() const noexcept { return error_no == MeasureErrorNo::kNoError && !costs_s.empty(); }
  /// Mean of costs_s; NaN when !ok().
  double mean_cost_s() const noexcept;
};

/// Output of a Builder for one input.
struct BuildResult {
  /// Path or key of the built artefact (empty for in-process builders).
  std::string artifact;
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  std::string error_msg;
  /// Seconds spent building.
  double time_cost_s = 0.0;
};

/// Compiles configurations. Implementations: per backend; may run in parallel.
class Builder {
 public:
  /// Releases the builder's resources.
  virtual ~Builder() = default;
  /// One BuildResult per input, in order. Failures are results, never exceptions.
  virtual std::vector<BuildResult> build(std::span<const MeasureInput> inputs) = 0;
  /// Inputs built per batch (AutoTVM: batch size = builder.n_parallel).
  virtual int n_parallel() const { return 1; }
};

/// Runs built configurations and times them.
class Runner {
 public:
  /// Releases the runner's resources (devices, child processes).
  virtual ~Runner() = default;
  /// One MeasureResult per input, in order. `builds` is empty when no Builder is used, else one
  /// per input; a failed build must come back as a result with its error_no.
  virtual std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                         std::span<const BuildResult> builds) = 0;
  /// Inputs measured per batch.
  virtual int n_parallel() const { return 1; }
  /// Seconds on the clock that budgets the tuning run: wall time for real runners, the simulated
  /// clock for replay runners. Default: steady clock.
  virtual double clock_s() const;
};

/// AutoTVM measure_option: the builder (optional) and the runner of a tuning run.
struct MeasureOptions {
  std::shared_ptr<Builder> builder;
  std::shared_ptr<Runner> runner;
  /// Batch size: builder.n_parallel() when a builder is set, else runner.n_parallel().
  int batch_size() const;
};

/// Builds (when a builder is set) then runs `inputs`. Build failures pass straight through as
/// results with the build's error_no and all_cost_s = build time. A result the runner reports
/// as successful with a zero, negative or non-finite cost becomes kRuntimeDevice with empty
/// costs and an error_msg giving the cost (it could never be picked as the best, nor written
/// to a log that reads back).
/// Errors: a missing runner gives kUnknownError results naming the problem.
std::vector<MeasureResult> measure_batch(const MeasureOptions& options,
                                         std::span<const MeasureInput> inputs);

}  // namespace tunekit
