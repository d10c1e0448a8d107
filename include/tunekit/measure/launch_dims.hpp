// The launch grid of an OpenCL or CUDA kernel for one configuration: LaunchGeometry's expressions
// evaluated over the configuration's parameters and the problem's scalar arguments.
#pragma once

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/kernel_problem.hpp"

namespace tunekit {

/// Work sizes of one launch, 1 to 3 dimensions. `global` is rounded up to a multiple of `local`
/// in every dimension (kernels guard the excess work-items); CUDA's grid is global / local.
struct LaunchDims {
  int dims = 1;
  std::array<std::size_t, 3> global{1, 1, 1};
  std::array<std::size_t, 3> local{1, 1, 1};
  /// False when LaunchGeometry::local is empty: OpenCL picks the work-group size (CUDA uses 1).
  bool has_local = false;
  /// Blocks per dimension: global / local.
  std::array<std::size_t, 3> groups() const noexcept;
};

/// Evaluates `geometry` with `params` ({"name": value}: numbers, booleans as 1/0, strings; a list
/// value `v` of parameter P also defines P_0, P_1, ...) and the scalar arguments of `problem` as
/// variables (a parameter shadows an argument of the same name).
/// Errors: kInvalidArgument "launch global[1] 'N/TILE': <reason>" for an expression that does not
/// parse, names an unknown variable or does not give a whole number >= 1; for no global entry,
/// more than 3, or a local list of another length than global.
Expected<LaunchDims> evaluate_launch(const LaunchGeometry& geometry, const KernelProblem& problem,
                                     const nlohmann::json& params);

}  // namespace tunekit
