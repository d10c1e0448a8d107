// tune_kernel: the measurement setup of a kernel spec (reference, builder, runner), the tuner
// with its strategy, resume from the log and the tuning loop.
#include "tunekit/kernel/tune_kernel.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "tunekit/core/log.hpp"
#include "tunekit/kernel/kernel_task.hpp"
#include "tunekit/measure/artifact_cache.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/measure/kernel_runner.hpp"
#include "tunekit/records/db_layers.hpp"
#include "tunekit/records/db_trials.hpp"
#include "tunekit/records/record_store.hpp"
#include "tunekit/search/strategy.hpp"

namespace tunekit {

namespace {

/// Builds one input with `builder`; an error naming `what` when it fails.
Expected<std::string> build_one(Builder& builder, const MeasureInput& input,
                                const std::string& what) {
  const std::vector<BuildResult> built = builder.build(std::span(&input, 1));
  if (built.empty() || built[0].error_no != MeasureErrorNo::kNoError) {
    const std::string why = built.empty() ? "no result" : built[0].error_msg;
    return Status(StatusCode::kCompileError, fmt::format("{} does not build: {}", what, why));
  }
  return built[0].artifact;
}

/// The built reference of the spec's verification rule ("" when it needs none).
Expected<std::string> build_reference(const KernelSpec& spec,
                                      const std::shared_ptr<const Task>& task, Builder& builder) {
  const VerifyRule& rule = spec.verify;
  if (rule.reference == VerifyRule::Reference::kConfig) {
    nlohmann::json entity = nlohmann::json::array();
    for (const Knob& k : spec.space->knobs()) {
      entity.push_back({k.name, "ot", rule.reference_params.at(k.name)});
    }
    auto config = spec.space->from_entity_json(entity);
    if (!config) return config.status();
    return build_one(builder, MeasureInput{task, *config},
                     "the reference configuration " + config->to_string());
  }
  if (rule.reference == VerifyRule::Reference::kKernel) {
    auto ref_builder = make_kernel_builder(rule.reference_source, spec.build);
    if (!ref_builder) return ref_builder.status();
    return build_one(**ref_builder, MeasureInput{task, Config()},
                     "the reference kernel " + rule.reference_source.path);
  }
  return std::string();
}

/// The built user verification function of the spec ("" when it has none).
Expected<std::string> build_verify_function(const KernelSpec& spec,
                                            const std::shared_ptr<const Task>& task) {
  const KernelSource& function = spec.verify.function;
  if (function.entry.empty()) return std::string();
  auto builder = make_kernel_builder(function, spec.build);
  if (!builder) return builder.status();
  return build_one(**builder, MeasureInput{task, Config()},
                   "the verification function " + function.path);
}

}  // namespace

Expected<MeasureOptions> make_kernel_measure(const KernelSpec& spec,
                                             const std::shared_ptr<const Task>& task) {
  auto builder = make_kernel_builder(spec.source, spec.build);
  if (!builder) return builder.status();
  auto reference = build_reference(spec, task, **builder);
  if (!reference) return reference.status();
  RunnerOptions ro;
  ro.isolation = spec.isolation;
  ro.timing = spec.timing;
  ro.verify = spec.verify;
  ro.reference_artifact = *reference;
  auto function = build_verify_function(spec, task);
  if (!function) return function.status();
  ro.verify_artifact = *function;
  auto runner = make_kernel_runner(spec.source, spec.problem, ro);
  if (!runner) return runner.status();
  MeasureOptions measure;
  measure.builder = *builder;
  measure.runner = *runner;
  return measure;
}

namespace {

/// Refuses a log that cannot be appended to before anything is measured (a run whose records
/// cannot be kept would be lost). Creates it empty when absent; a FIFO or device is refused.
Status check_log_writable(const std::string& log_path) {
  const int fd =
      ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status(StatusCode::kIoError,
                  fmt::format("cannot write tuning log '{}': {}", log_path, std::strerror(errno)));
  }
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  ::close(fd);
  if (!regular) {
    return Status(StatusCode::kIoError,
                  fmt::format("tuning log '{}' is not a regular file", log_path));
  }
  return Status::ok();
}

/// Refuses an artefact cache that cannot be used before anything is built, naming where its
/// directory came from (otherwise the first build to need it, the reference's, takes the blame).
Status check_cache_dir(const BuildOptions& build) {
  auto dir = resolve_kernel_cache_dir(build.cache_dir);
  if (!dir) return dir.status();
  auto cache = ArtifactCache::open(*dir);
  if (cache) return Status::ok();
  const char* origin = !build.cache_dir.empty() ? "build.cache_dir of the spec"
                                                : "TUNEKIT_CACHE_DIR, XDG_CACHE_HOME or HOME";
  return Status(cache.status().code(),
                fmt::format("{} (from {})", cache.status().message(), origin));
}

/// Loads the log's trials of the task into `tuner`; 0 when the log does not exist yet.
Expected<std::size_t> resume(Tuner& tuner, const std::string& log_path) {
  std::error_code ec;
  if (!std::filesystem::exists(log_path, ec)) return std::size_t{0};
  return resume_from_log(tuner, log_path);
}

TuneOptions tune_options(const KernelSpec& spec, const KernelTuneOptions& options,
                         MeasureOptions measure, std::size_t resumed,
                         std::shared_ptr<UnsavedRecords> unsaved) {
  TuneOptions to;
  const std::size_t budget = spec.budget.trials.value_or(kDefaultKernelTrials);
  to.n_trial = budget > resumed ? budget - resumed : 0;
  to.measure = std::move(measure);
  to.early_stopping = spec.budget.early_stopping;
  to.time_budget_s = spec.budget.seconds;
  to.callbacks.push_back(log_to_file(spec.log_path, unsaved));
  // Every trial also lands in the user tuning database (docs/database.md); a trial that does not
  // reach it is unsaved like one that misses the log.
  if (const std::string db_path = default_user_db_path(); !db_path.empty()) {
    auto db = TuningDb::open(db_path, TuningDb::Access::kReadWrite);
    if (db) {
      to.callbacks.push_back(log_to_db(std::shared_ptr<TuningDb>(std::move(*db)), unsaved));
    } else {
      log::warn(db.status().message() + " (the trials go to the log only)");
    }
  }
  if (options.progress != nullptr && to.n_trial > 0) {
    to.callbacks.push_back(
        progress_bar(to.n_trial, fmt::format("[{}] ", spec.source.name), "G", options.progress));
  }
  for (const TuneCallback& cb : options.callbacks) to.callbacks.push_back(cb);
  return to;
}

}  // namespace

Expected<KernelTuneResult> tune_kernel(const KernelSpec& spec, const KernelTuneOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  KernelTuneResult result;
  result.task = make_kernel_task(spec);
  auto strategy = make_strategy(spec.strategy, spec.strategy_settings);
  if (!strategy) return strategy.status();
  std::optional<Tuner> tuner;
  try {
    tuner.emplace(result.task, std::move(*strategy), spec.seed);
  } catch (const Error& e) {
    return e.status();
  }
  if (options.resume) {
    auto resumed = resume(*tuner, spec.log_path);
    if (!resumed) return resumed.status();
    // Unique configurations (a log may hold one twice).
    result.resumed = tuner->trials().size();
  }
  const std::filesystem::path parent = std::filesystem::path(spec.log_path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  const std::size_t budget = spec.budget.trials.value_or(kDefaultKernelTrials);
  if (result.resumed < budget) {
    if (Status writable = check_log_writable(spec.log_path); !writable.is_ok()) return writable;
    if (!options.runner) TUNEKIT_RETURN_IF_ERROR(check_cache_dir(spec.build));
    Expected<MeasureOptions> measure = MeasureOptions{nullptr, options.runner};
    if (!options.runner) measure = make_kernel_measure(spec, result.task);
    if (!measure) return measure.status();
    auto unsaved = std::make_shared<UnsavedRecords>();
    {
      // The options hold the progress bar, which prints " Done." when they go away.
      const TuneOptions to =
          tune_options(spec, options, std::move(*measure), result.resumed, unsaved);
      result.stop_reason = tuner->tune(to);
    }
    result.unsaved = *unsaved;
  }
  if (options.fail_on_unsaved) TUNEKIT_RETURN_IF_ERROR(unsaved_records_status(result.unsaved));
  result.trials = tuner->trials();
  if (tuner->has_best()) result.best = tuner->best();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tunekit
