// _tunekit.autotvm: tuning a template's kernel on tunekit's engine (KernelTuner: a Tuner over
// the kernel builder and runner, with the GIL released and Ctrl-C stopping between batches),
// building one configuration and reading logs.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autotvm.hpp"
#include "bindings.hpp"
#include "engine_thread.hpp"
#include "errors.hpp"
#include "json_argument.hpp"
#include "tunekit/kernel/kernel_task.hpp"
#include "tunekit/kernel/tune_kernel.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/records/record_store.hpp"
#include "tunekit/search/strategy.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

/// The kernel spec Python composed (python/tunekit/kernel.py, Kernel.spec: the spec form of
/// docs/kernels.md without "space"), with `space` as its config space. `label` names it in
/// messages ("<label>: <field>: <what>"), as the spec file does for tune-kernel.
KernelSpec spec_from_json(const std::string& text, const std::string& label,
                          const SpaceHandle& space) {
  nlohmann::json root = parse_json(text, "kernel spec");
  // The space comes from the template; the parser wants one (and checks the names launch sizes
  // use against it), so it reads a placeholder with the same knob names.
  nlohmann::json params = nlohmann::json::object();
  for (const Knob& k : space.space->knobs()) params[k.name] = {1};
  if (params.empty()) params["tunekit_space"] = {1};
  root["space"] = {{"params", params}};
  auto spec = parse_kernel_spec(root.dump(), label, "");
  if (!spec) raise(spec.status());
  spec->space = space.space;
  return std::move(*spec);
}

std::string record_line(const MeasureInput& input, const MeasureResult& result) {
  return encode_record(make_record(input, result));
}

/// What the callbacks of one tune() call share: the first Python exception raised by a callback
/// or by a signal handler (KeyboardInterrupt), raised again once the loop has stopped.
struct CallbackState {
  std::optional<nb::python_error> error;  ///< set and read with the GIL held
  std::atomic<bool> stop{false};          ///< a signal arrived (set by the waiting thread)
};

/// A Python callback `fn(lines, messages)`: the batch's records as log lines and the failures'
/// reasons. Skipped once an exception is pending; an exception stops the loop after the batch.
TuneCallback python_callback(nb::object fn, std::shared_ptr<CallbackState> state) {
  auto held = std::make_shared<nb::object>(std::move(fn));
  return [held, state](const Tuner& tuner, std::span<const MeasureInput> inputs,
                       std::span<const MeasureResult> results) {
    nb::gil_scoped_acquire locked;
    if (state->error) return;
    nb::list lines, messages;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      lines.append(record_line(inputs[k], results[k]));
      messages.append(results[k].error_msg);
    }
    try {
      (*held)(lines, messages);
    } catch (nb::python_error& e) {
      state->error.emplace(std::move(e));
      tuner.request_stop();
    }
  };
}

/// Last callback of every batch: a pending Ctrl-C (any signal Python handles, seen by the
/// waiting Python thread) stops the loop, after the log callbacks wrote the batch.
TuneCallback signal_check(std::shared_ptr<CallbackState> state) {
  return
      [state](const Tuner& tuner, std::span<const MeasureInput>, std::span<const MeasureResult>) {
        if (state->stop.load()) tuner.request_stop();
      };
}

/// AutoTVM's Tuner on a template's kernel task: the strategy, the trials, the best.
class KernelTunerHandle {
 public:
  KernelTunerHandle(const SpaceHandle& space, const std::string& name, const std::string& args,
                    const std::string& target, double flop, const std::string& strategy,
                    const std::string& settings, std::uint64_t seed) {
    auto task = std::make_shared<Task>();
    task->name = name;
    task->args = parse_json(args, "task arguments");
    task->target = target;
    task->flop = flop;
    task->space = space.space;
    task_ = task;
    auto made = make_strategy(strategy, parse_json(settings, "tuner settings"));
    if (!made) raise(made.status());
    try {
      tuner_ = std::make_unique<Tuner>(task_, std::move(*made), seed);
    } catch (const Error& e) {
      raise(e.status());
    }
  }

  /// Feeds the records of this task among the log text `text` (read from `source`) to the
  /// strategy and the measurement cache; returns how many.
  std::size_t load_history(const std::string& text, const std::string& source) {
    auto all = parse_records(text, source);
    if (!all) raise(all.status());
    const std::string key = kernel_workload_key(*task_);
    std::vector<Record> mine;
    for (Record& r : *all) {
      if (r.workload_key() == key) mine.push_back(std::move(r));
    }
    check(check_resumable(mine, *task_->space, source));
    const auto trials = records_to_trials(mine, task_);
    tuner_->load_history(trials);
    return trials.size();
  }

  /// Measures up to n_trial new configurations with the spec's builder and runner; callbacks
  /// are ("log", path) or ("py", fn) pairs, called in order after every batch. Returns why it
  /// stopped. Errors: the setup's (builder, reference, runner); a callback's exception;
  /// FileIOError (unsaved_records_status) when records could not be appended to a log.
  std::string tune(const std::string& spec_json, const std::string& label, const SpaceHandle& space,
                   std::size_t n_trial, std::optional<std::size_t> early_stopping,
                   const std::vector<std::pair<std::string, nb::object>>& callbacks) {
    const KernelSpec spec = spec_from_json(spec_json, label, space);
    auto state = std::make_shared<CallbackState>();
    auto unsaved = std::make_shared<UnsavedRecords>();
    TuneOptions to;
    to.n_trial = n_trial;
    to.early_stopping = early_stopping;
    for (const auto& [kind, payload] : callbacks) {
      if (kind == "log") {
        to.callbacks.push_back(log_to_file(nb::cast<std::string>(payload), unsaved));
      } else {
        to.callbacks.push_back(python_callback(payload, state));
      }
    }
    to.callbacks.push_back(signal_check(state));
    StopReason reason = StopReason::kTrialCount;
    Status setup = Status::ok();
    run_on_engine_thread(
        [&] {
          auto measure = make_kernel_measure(spec, task_);
          if (!measure) {
            setup = measure.status();
            return;
          }
          to.measure = std::move(*measure);
          reason = tuner_->tune(to);
        },
        [&] {
          if (!state->error) state->error.emplace();  // takes the KeyboardInterrupt
          state->stop = true;
        });
    check(std::move(setup));
    if (state->error) {
      nb::python_error error = std::move(*state->error);
      state->error.reset();
      throw error;
    }
    check(unsaved_records_status(*unsaved));
    return std::string(to_string(reason));
  }

  std::size_t trial_count() const { return tuner_->trials().size(); }
  double best_score() const { return tuner_->best_score(); }
  std::size_t best_iter() const { return tuner_->best_iter(); }
  bool has_next() { return tuner_->strategy().has_next(); }
  std::optional<std::string> best_record() const {
    if (!tuner_->has_best()) return std::nullopt;
    const Trial& best = tuner_->best();
    return record_line(MeasureInput{task_, best.config}, best.result);
  }

 private:
  std::shared_ptr<const Task> task_;
  std::unique_ptr<Tuner> tuner_;
};

/// Builds configuration `index` of the spec's kernel (none: the source's own defaults, no -D)
/// through the artefact cache; returns the artefact (C/C++: a shared object).
/// Errors: kCompileError with the compiler's message; the builder's setup errors.
std::string build_kernel(const std::string& spec_json, const std::string& label,
                         const SpaceHandle& space, std::optional<std::uint64_t> index) {
  const KernelSpec spec = spec_from_json(spec_json, label, space);
  auto builder = make_kernel_builder(spec.source, spec.build);
  if (!builder) raise(builder.status());
  auto task = make_kernel_task(spec);
  Config config;
  if (index) {
    auto valid = space.space->get(*index);
    if (!valid) raise(valid.status());
    config = *valid;
  }
  std::vector<BuildResult> built;
  const MeasureInput input{task, config};
  std::optional<nb::python_error> interrupted;  // Ctrl-C waits for the build, then is raised
  run_on_engine_thread([&] { built = (*builder)->build(std::span(&input, 1)); },
                       [&] { interrupted.emplace(); });
  if (interrupted) throw *interrupted;
  if (built.empty() || built[0].error_no != MeasureErrorNo::kNoError) {
    raise(Status(StatusCode::kCompileError,
                 label + ": configuration " + (index ? config.to_string() : "(defaults)") +
                     " does not build: " + (built.empty() ? "no result" : built[0].error_msg)));
  }
  return built[0].artifact;
}

/// The records of the log at `path` as v0.2 lines (load_records: '#', blank and v0.1 lines
/// skipped, malformed lines warned about).
std::vector<std::string> read_log(const std::string& path) {
  auto records = load_records(path);
  if (!records) raise(records.status());
  std::vector<std::string> lines;
  for (const Record& r : *records) lines.push_back(encode_record(r));
  return lines;
}

void bind_tuner(nb::module_& m) {
  nb::class_<KernelTunerHandle>(m, "KernelTuner")
      .def(nb::init<const SpaceHandle&, const std::string&, const std::string&, const std::string&,
                    double, const std::string&, const std::string&, std::uint64_t>())
      .def("load_history", &KernelTunerHandle::load_history)
      .def("tune", &KernelTunerHandle::tune, nb::arg("spec"), nb::arg("label"), nb::arg("space"),
           nb::arg("n_trial"), nb::arg("early_stopping").none(), nb::arg("callbacks"))
      .def_prop_ro("trial_count", &KernelTunerHandle::trial_count)
      .def_prop_ro("best_score", &KernelTunerHandle::best_score)
      .def_prop_ro("best_iter", &KernelTunerHandle::best_iter)
      .def("has_next", &KernelTunerHandle::has_next)
      .def("best_record", &KernelTunerHandle::best_record);
  m.def("strategy_names", &strategy_names);
}

}  // namespace

void bind_kernel(nb::module_& m) {
  bind_tuner(m);
  m.def("build_kernel", &build_kernel, nb::arg("spec"), nb::arg("label"), nb::arg("space"),
        nb::arg("index").none());
  m.def("read_log", &read_log);
  m.def("parse_log", [](const std::string& text, const std::string& source) {
    auto records = parse_records(text, source);
    if (!records) raise(records.status());
    std::vector<std::string> lines;
    for (const Record& r : *records) lines.push_back(encode_record(r));
    return lines;
  });
}

void bind_autotvm(nb::module_& m) {
  nb::module_ sub = m.def_submodule("autotvm", "AutoTVM's workflow on tunekit's kernel engine");
  bind_space(sub);
  bind_kernel(sub);
  bind_dispatch(sub);
}

}  // namespace tunekit::python
