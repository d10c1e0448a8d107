// The TuningContext behind tunekit.tunable: switches, limits, file names, tolerances, rotating
// buffers, results and validators, each a thin call into tuning_context() (python/tunekit/
// tunable.py gives them torch.cuda.tunable's names, defaults and documentation).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "errors.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/tunable/context.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

TuningContext& ctx() { return tuning_context(); }

/// Every call that reads, writes or lists validators needs the GEMM libraries' validators and the
/// applied thread count (the THREADS validator) first, as the CLI before reading a file.
void ensure_gemm_validators() { prepare_gemm_context(tuning_context()); }

/// read_file(name=None): True when read, False when the file does not exist; raises for a file
/// that cannot be used (malformed line, other environment), naming the file and line.
bool read_file(const std::optional<std::string>& name) {
  ensure_gemm_validators();
  Status s;
  {
    nb::gil_scoped_release unlocked;
    s = ctx().read_file(name.value_or(std::string()));
  }
  if (s.code() == StatusCode::kNotFound) return false;
  check(std::move(s));
  return true;
}

bool write_file(const std::optional<std::string>& name) {
  ensure_gemm_validators();
  Status s;
  {
    nb::gil_scoped_release unlocked;
    s = ctx().write_file(name.value_or(std::string()));
  }
  check(std::move(s));
  return true;
}

using ResultTuple = std::tuple<std::string, std::string, std::string, double>;

std::vector<ResultTuple> get_results() {
  std::vector<ResultTuple> out;
  for (ResultLine& r : ctx().get_results()) {
    out.emplace_back(std::move(r.op_signature), std::move(r.params_signature),
                     std::move(r.solution), r.time_ms);
  }
  return out;
}

std::vector<ValidatorEntry> get_validators() {
  ensure_gemm_validators();
  return ctx().get_validators();
}

using ConfirmationTuple = std::tuple<std::string, std::string, std::string, double, double, bool>;

/// The confirmation verdicts of the GEMM op calls dispatch through (tunekit.torch's when it is
/// enabled): (op, params, solution, winner ms, Default ms, kept).
std::vector<ConfirmationTuple> get_confirmations() {
  std::vector<ConfirmationTuple> out;
  for (ConfirmationVerdict& v : active_gemm_op().confirmations()) {
    out.emplace_back(std::move(v.op_signature), std::move(v.params_signature),
                     std::move(v.solution), v.winner_ms, v.default_ms, v.kept);
  }
  return out;
}

void set_numerical_check_tolerances(bool enable, double atol, double rtol) {
  ctx().set_numerical_check_tolerances(enable, atol, rtol);  // throws tunekit::Error
}

void bind_switches(nb::module_& t) {
  t.def(
      "enable", [](bool on) { ctx().enable(on); }, nb::arg("val") = true);
  t.def("is_enabled", [] { return ctx().is_enabled(); });
  t.def(
      "tuning_enable", [](bool on) { ctx().enable_tuning(on); }, nb::arg("val") = true);
  t.def("tuning_is_enabled", [] { return ctx().is_tuning_enabled(); });
  t.def(
      "record_untuned_enable", [](bool on) { ctx().enable_record_untuned(on); },
      nb::arg("val") = true);
  t.def("record_untuned_is_enabled", [] { return ctx().is_record_untuned_enabled(); });
  t.def("is_numerical_check_enabled", [] { return ctx().is_numerical_check_enabled(); });
  t.def("get_numerical_check_tolerances", [] {
    // (enabled, atol, rtol); atol and rtol are None when the per-dtype defaults apply.
    const NumericalCheck c = ctx().numerical_check();
    std::optional<double> atol, rtol;
    if (c.tolerance) {
      atol = c.tolerance->atol;
      rtol = c.tolerance->rtol;
    }
    return std::tuple<bool, std::optional<double>, std::optional<double>>(c.enabled, atol, rtol);
  });
  t.def("set_numerical_check_tolerances", &set_numerical_check_tolerances, nb::arg("enable"),
        nb::arg("atol") = 1e-5, nb::arg("rtol") = 1e-5);
}

void bind_limits(nb::module_& t) {
  t.def(
      "set_max_tuning_duration", [](long long ms) { ctx().set_max_tuning_duration_ms(ms); },
      nb::arg("duration"));
  t.def("get_max_tuning_duration", [] { return ctx().max_tuning_duration_ms(); });
  t.def(
      "set_max_tuning_iterations",
      [](long long iterations) { ctx().set_max_tuning_iterations(iterations); },
      nb::arg("iterations"));
  t.def("get_max_tuning_iterations", [] { return ctx().max_tuning_iterations(); });
  t.def(
      "set_rotating_buffer_size", [](long long mib) { ctx().set_rotating_buffer_size(mib); },
      nb::arg("buffer_size"));
  t.attr("MAX_ROTATING_BUFFER_MIB") = kMaxRotatingBufferMib;
  t.def(
      "set_confirm_calls", [](long long calls) { ctx().set_confirm_calls(calls); },
      nb::arg("calls"));
  t.def("get_confirm_calls", [] { return ctx().confirm_calls(); });
  t.def("get_confirmations", &get_confirmations);
  t.def("get_rotating_buffer_size",
        [] { return static_cast<unsigned long long>(ctx().rotating_buffer_size()); });
}

void bind_files(nb::module_& t) {
  t.def(
      "set_filename",
      [](std::string name, bool insert) { ctx().set_filename(std::move(name), insert); },
      nb::arg("filename"), nb::arg("insert_device_ordinal") = false);
  t.def("get_filename", [] { return ctx().filename(); });
  t.def("read_file", &read_file, nb::arg("filename") = nb::none());
  t.def("write_file", &write_file, nb::arg("filename") = nb::none());
  t.def("get_results", &get_results);
  t.def("get_validators", &get_validators);
  t.def("reload_environment", [] { check(ctx().reload_environment()); });
  t.def("environment_error", [] {
    const Status s = ctx().environment_status();
    return s.is_ok() ? std::string() : s.message();
  });
}

}  // namespace

void bind_tunable(nb::module_& m) {
  nb::module_ t = m.def_submodule("tunable", "TuningContext settings (see tunekit.tunable)");
  bind_switches(t);
  bind_limits(t);
  bind_files(t);
}

}  // namespace tunekit::python
