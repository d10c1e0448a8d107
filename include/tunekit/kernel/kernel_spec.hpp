// KernelSpec: everything `tunekit tune-kernel SPEC.json` needs to tune one kernel (source,
// arguments, config space, verification, timing, build, isolation, strategy, budget, log).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/measure/kernel_problem.hpp"
#include "tunekit/measure/kernel_runner.hpp"
#include "tunekit/space/config_space.hpp"

namespace tunekit {

/// When a kernel tuning run stops; unset members do not limit it. The run also stops when the
/// strategy has proposed every valid configuration.
struct KernelBudget {
  /// Configurations of this task in the log (earlier runs included) after which no more is
  /// measured: a second run of the same spec measures nothing new.
  std::optional<std::size_t> trials;
  /// Wall seconds of this run.
  std::optional<double> seconds;
  /// Stop after this many trials without a better configuration.
  std::optional<std::size_t> early_stopping;
};

/// A parsed kernel tuning spec (docs/kernels.md, "Spec reference").
struct KernelSpec {
  /// The spec file, as given (messages); "" when parsed from text.
  std::string file;
  /// Directory relative paths of the spec are resolved against.
  std::string directory;
  KernelSource source;
  KernelProblem problem;
  std::shared_ptr<const ConfigSpace> space;
  VerifyRule verify;
  KernelTiming timing;
  BuildOptions build;
  Isolation isolation = Isolation::kWorker;
  /// make_strategy name and settings (checked when the spec is parsed).
  std::string strategy = "auto";
  nlohmann::json strategy_settings = nlohmann::json::object();
  KernelBudget budget;
  /// Tuning log (AutoTVM JSON lines), resolved against `directory`; default
  /// "<directory>/<name>.log.json".
  std::string log_path;
  /// Seed of the search strategy and of random argument fills.
  std::uint64_t seed = 0;
  /// Floating-point operations of one call (0 = unknown: scores are 1 / time).
  double flop = 0.0;
};

/// Trials a spec without a budget measures at most.
inline constexpr std::size_t kDefaultKernelTrials = 100;

/// Parses the spec text `text` read from `file` (messages; "" for none), resolving relative paths
/// against `directory` and reading the kernel source (and a reference kernel's) from there.
/// Accepted keys: see docs/kernels.md; "space" takes space_from_spec's forms, with "params" as
/// another name of "parameters". Sizes and "flop" are numbers or Expressions over the scalar
/// arguments; launch sizes are Expressions over scalar arguments and parameter names.
/// Errors: one line "<file>: <field>: <what>" ("spec.json: arguments[2].size: unknown name 'Q'
///   in 'M*Q'"): kParseError for text that is not JSON or an expression that does not parse;
///   kInvalidArgument for an unknown key (listing the accepted ones), a missing or mistyped
///   field, a value out of range, an unknown name; kIoError for a source that cannot be read.
Expected<KernelSpec> parse_kernel_spec(std::string_view text, const std::string& file,
                                       const std::string& directory);

/// Reads the spec file `path` and parses it (relative paths against the file's directory).
/// Errors: kIoError "cannot read kernel spec '<path>': <reason>"; parse_kernel_spec's.
Expected<KernelSpec> load_kernel_spec(const std::string& path);

/// Parses an isolation name: "worker", "process" or "in-process".
/// Errors: kInvalidArgument listing the accepted names.
Expected<Isolation> isolation_from_string(std::string_view text);

}  // namespace tunekit
