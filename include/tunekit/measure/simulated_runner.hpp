// Replay of brute-forced tuning data: ReplayData (Kernel Tuner cache and T4 files, plain or gzip)
// and SimulatedRunner, which answers from the data and charges recorded times to a simulated clock.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/space/config_space.hpp"

namespace tunekit {

/// One recorded configuration of a brute-forced space.
/// Units: milliseconds, as Kernel Tuner records them.
struct ReplayEntry {
  /// Entity positions in ReplayData::parameter_values(), one per parameter.
  KnobVector knobs;
  /// The objective (mean of the recorded runs) in ms, finite and > 0; NaN for a failed
  /// configuration.
  double time_ms = std::numeric_limits<double>::quiet_NaN();
  /// kNoError, or how it failed: "CompilationFailedConfig" (T4 invalidity "compile") ->
  /// kCompileDevice, "RuntimeFailedConfig" ("runtime", or a time >= 1e20 in old files) ->
  /// kRuntimeDevice, "InvalidConfig" ("constraints") -> kInstantiationError; T4 "timeout" ->
  /// kRunTimeout, "correctness" -> kWrongAnswer. Other strings are rejected by load().
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  /// The recorded failure string, empty on success.
  std::string failure;
  // Times charged to the simulated clock: finite, >= 0, and 0 when the file omits them.
  double compile_ms = 0.0;       ///< compile_time (T4: times.compilation)
  double verification_ms = 0.0;  ///< verification_time (T4: times.validation)
  double benchmark_ms = 0.0;     ///< benchmark_time (T4: sum of times.runtimes)
  double framework_ms = 0.0;     ///< framework_time (T4: times.framework)
  double strategy_ms = 0.0;      ///< strategy_time as recorded (T4: times.search_algorithm)

  /// True when the configuration ran (it has a time).
  bool ok() const noexcept { return error_no == MeasureErrorNo::kNoError; }
  /// Time one evaluation of this configuration costs a tuning run: compile + verification +
  /// benchmark + framework + recorded strategy time (the methodology's "all" time keys).
  double total_ms() const noexcept {
    return compile_ms + verification_ms + benchmark_ms + framework_ms + strategy_ms;
  }
};

/// The content of a brute-forced data file, and the configuration space it defines.
///
/// Formats (autodetected; gzip, recognised by its magic bytes, or plain):
///  * Kernel Tuner cache: `tune_params_keys`, `tune_params`, `cache` (key -> record);
///  * T4 results: `results[]` with `configuration`, `times`, `invalidity`, `measurements`.
///    T4 has no value lists: each parameter's values are those seen, numbers ascending.
/// The space: one "ot" knob per parameter (values in file order), plus the constraint "the
/// configuration is in the data" (Kernel Tuner's tune_cache restriction), checked by a table
/// lookup on the mixed-radix index. Its hash covers the parameter lists and the set of keys.
class ReplayData {
 public:
  /// Reads and parses `path`. Errors: kIoError (cannot open/read/decompress, a truncated gzip
  /// stream); kParseError naming the file and the cache key / T4 result index for: not JSON,
  /// arrays and objects nested deeper than kMaxJsonDepth levels, neither format, a Kernel Tuner
  /// `objective` other than "time", no parameter, a value listed twice in tune_params, a record
  /// naming an unknown value or missing a parameter, a configuration recorded twice, a time that
  /// is not a normal finite number > 0 ms (the objective; subnormals such as 1e-320 are refused)
  /// or a finite number >= 0 ms (compile_time and the other charged times, T4 `times`), T4
  /// `times` that is not an object or `times.runtimes` that is not a list, a failure string
  /// other than Kernel Tuner's InvalidConfig, CompilationFailedConfig and RuntimeFailedConfig, a
  /// T4 invalidity outside the T4 schema's list, and data where every configuration failed.
  static Expected<ReplayData> load(const std::string& path);
  /// Builds from a parsed document, with the checks and results of load(); `source` names it in
  /// messages.
  static Expected<ReplayData> from_json(const nlohmann::ordered_json& doc,
                                        const std::string& source);

  /// The file it came from (or the `source` given to from_json).
  const std::string& source() const noexcept { return source_; }
  /// "kernel_tuner" or "t4".
  const std::string& format() const noexcept { return format_; }
  /// `kernel_name` of the file (empty for T4).
  const std::string& kernel_name() const noexcept { return kernel_name_; }
  /// `device_name` of the file (empty for T4).
  const std::string& device_name() const noexcept { return device_name_; }
  /// Parameter names in definition order (`tune_params_keys`).
  const std::vector<std::string>& parameter_names() const noexcept { return names_; }
  /// Value list of each parameter, in the same order.
  const std::vector<std::vector<nlohmann::json>>& parameter_values() const noexcept {
    return values_;
  }
  /// Every recorded configuration, in file order.
  const std::vector<ReplayEntry>& entries() const noexcept { return entries_; }

  /// The space over the parameters with the "in the data" constraint (shared, immutable).
  std::shared_ptr<const ConfigSpace> space() const noexcept { return space_; }
  /// The entry of mixed-radix index `index` of space(), or nullptr when not in the data.
  const ReplayEntry* lookup(std::uint64_t index) const noexcept;

  /// Best (smallest) recorded time in ms over successful entries.
  double optimum_ms() const noexcept { return optimum_ms_; }
  /// Median recorded time in ms over successful entries.
  double median_ms() const noexcept { return median_ms_; }
  /// Number of successful entries.
  std::size_t valid_count() const noexcept { return valid_count_; }

 private:
  // Builds from the parsed text of a file or of from_json's document (simulated_runner.cpp).
  struct Builder;
  Status finish();

  std::string source_, format_, kernel_name_, device_name_;
  std::vector<std::string> names_;
  std::vector<std::vector<nlohmann::json>> values_;
  std::vector<ReplayEntry> entries_;
  std::shared_ptr<const std::vector<std::int32_t>> table_;  // index -> entry, -1 = absent
  std::shared_ptr<const ConfigSpace> space_;
  double optimum_ms_ = 0.0, median_ms_ = 0.0;
  std::size_t valid_count_ = 0;
};

/// A Runner that answers from ReplayData instead of running kernels.
///
/// For each input it returns the recorded mean time (costs_s = {time_ms / 1000}) or the recorded
/// failure, and advances its simulated clock by the entry's total_ms(); all_cost_s is that
/// charge and timestamp_s the simulated clock after it. A configuration missing from the data
/// is a kInstantiationError result that costs nothing (Kernel Tuner: InvalidConfig).
/// The tuning loop never re-measures a configuration, so each charge is one unique evaluation.
class SimulatedRunner : public Runner {
 public:
  /// A runner answering from `data`, its clock at 0.
  explicit SimulatedRunner(std::shared_ptr<const ReplayData> data) : data_(std::move(data)) {}

  /// Answers each input from the data (see the class comment); `builds` is ignored.
  std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                 std::span<const BuildResult> builds) override;
  /// Simulated seconds since construction or reset().
  double clock_s() const override { return clock_s_; }
  /// Adds `seconds` to the simulated clock (e.g. the strategy's own time).
  void charge_s(double seconds) noexcept { clock_s_ += seconds; }
  /// Clock back to 0 and the evaluation count to 0.
  void reset() noexcept {
    clock_s_ = 0.0;
    evaluations_ = 0;
  }
  /// Configurations answered since construction or reset().
  std::size_t evaluations() const noexcept { return evaluations_; }
  /// The data it answers from.
  const ReplayData& data() const noexcept { return *data_; }

 private:
  std::shared_ptr<const ReplayData> data_;
  double clock_s_ = 0.0;
  std::size_t evaluations_ = 0;
};

}  // namespace tunekit
