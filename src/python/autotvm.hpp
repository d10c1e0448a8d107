// The parts of _tunekit.autotvm (AutoTVM's workflow on tunekit's kernel engine): the config space
// a template defines (space_binding.cpp), the tuners, builds and logs of kernel_binding.cpp and
// the dispatch of dispatch_binding.cpp. python/tunekit/{space,task,tuner,...}.py are their Python
// face.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "tunekit/space/config_space.hpp"

namespace tunekit::python {

/// A config space under definition by a template (`cfg.define_*`), then shared read-only by its
/// task, tuner and dispatch. Python's ConfigSpace holds one.
struct SpaceHandle {
  std::shared_ptr<ConfigSpace> space = std::make_shared<ConfigSpace>();
};

/// The class Space (define_* calls, entities, index <-> entity, -D definitions) in `m`.
void bind_space(nanobind::module_& m);
/// KernelTuner, build_kernel and the log readers in `m` (after bind_space).
void bind_kernel(nanobind::module_& m);
/// HistoryBest (ApplyHistoryBest) in `m` (dispatch_binding.cpp).
void bind_dispatch(nanobind::module_& m);

}  // namespace tunekit::python
