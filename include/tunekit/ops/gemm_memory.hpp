// The memory guard of GEMM tuning: the bytes a workspace and a whole tuning allocate, the memory
// this process may still take, and the check that refuses a problem before it reaches the OOM
// killer.
#pragma once

#include <cstddef>
#include <string_view>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_params.hpp"
#include "tunekit/tunable/context.hpp"

namespace tunekit::ops {

/// Bytes GemmWorkspace::create(params, copies, ...) allocates: `copies` sets of A, B, C and bias,
/// and the initial C every copy is reset from (each buffer rounded up to 64 bytes).
std::size_t gemm_workspace_bytes(const GemmParams& params, std::size_t copies) noexcept;

/// Bytes tuning `params` under `settings` allocates at its peak: the tuning workspace of
/// find_fastest (the rotating copies, plus a reference and a check copy when the numerical check
/// is on) and, when `own_operands`, the operands created for the problem itself (one workspace
/// of one copy, as `tunekit tune-file` and `tunekit gemm` make).
/// Source: include/tunekit/tunable/find_fastest.hpp (step 1, operand copies).
std::size_t gemm_tuning_bytes(const GemmParams& params, const TuningSettings& settings,
                              bool own_operands) noexcept;

/// Bytes this process may still take: MemAvailable of /proc/meminfo, lowered to what its
/// control group's memory limit leaves (cgroup v2 memory.max - memory.current, or v1's
/// memory.limit_in_bytes - memory.usage_in_bytes); 0 when neither can be read.
std::size_t available_memory_bytes();

/// Ok when `bytes` fit in 90% of available_memory_bytes() (or it is unknown).
/// Errors: kRuntimeError "<what> needs X GiB, only Y GiB of memory is available".
Status check_memory_for(std::size_t bytes, std::string_view what);

}  // namespace tunekit::ops
