// The tuning Task of a kernel spec: its name, arguments as AutoTVM workload JSON, target text,
// FLOP count and config space. Tuning and load_best build it the same way.
#pragma once

#include <memory>
#include <string>

#include "tunekit/kernel/kernel_spec.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit {

/// The target text of a kernel's records: C/C++ "c -march=<build.march>" (the compiler's
/// -march, e.g. "c -march=native"; parse_target gives kind "c", keys [cpu]); OpenCL "opencl";
/// CUDA "cuda".
std::string kernel_target(const KernelSpec& spec);

/// The Task of `spec`: name = the spec's name; args = one entry per kernel argument in call
/// order, scalars as their value (integers for integer dtypes), arrays as
/// ["TENSOR", [elements], dtype] (AutoTVM's tensor form), so records of other problem sizes are
/// other workloads; target = kernel_target; flop and space from the spec.
/// Note: the kernel's source text is not part of the workload; tune an edited kernel into a new
/// log (or delete the old one), or the old measurements are taken as the new kernel's.
std::shared_ptr<const Task> make_kernel_task(const KernelSpec& spec);

/// The workload key (Record::workload_key) of the task's records.
std::string kernel_workload_key(const Task& task);

}  // namespace tunekit
