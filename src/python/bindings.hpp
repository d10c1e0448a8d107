// The parts of the _tunekit extension module, one per concept, each adding its functions to the
// module (module.cpp calls them in order).
#pragma once

#include <nanobind/nanobind.h>

namespace tunekit::python {

/// TunekitError and its subclasses (errors.cpp); first, as the others raise them.
void bind_errors(nanobind::module_& m);
/// The TuningContext settings behind tunekit.tunable (tunable_binding.cpp).
void bind_tunable(nanobind::module_& m);
/// Offline tuning: tune_gemm_in_file and the worker/gather steps of mgpu_tune_gemm_in_file
/// (offline_binding.cpp).
void bind_offline(nanobind::module_& m);
/// matmul and gemm on NumPy arrays, buffer-protocol and DLPack objects (gemm_binding.cpp).
void bind_gemm(nanobind::module_& m);
/// Linear: constant-weights GEMM handle (linear_binding.cpp).
void bind_linear(nanobind::module_& m);
/// AutoTVM's workflow on the kernel engine: the submodule autotvm (space_binding.cpp,
/// kernel_binding.cpp).
void bind_autotvm(nanobind::module_& m);
/// The HTML report and stored comparison runs: the submodule report (report_binding.cpp).
void bind_report(nanobind::module_& m);

}  // namespace tunekit::python
