// Dynamic dims (PyTorch TunableOp V26): a per-thread mask of the problem dimensions that vary at
// run time (M, N, K, batch), set through an RAII guard; tuned results are then also stored under
// a wildcard signature.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// Bits of the dynamic-dims mask (upstream DynamicDimsMask values).
enum DynamicDim : std::uint8_t {
  kDynamicM = 1,      ///< BLAS m
  kDynamicN = 2,      ///< BLAS n
  kDynamicK = 4,      ///< BLAS k
  kDynamicBatch = 8,  ///< batch count (strided-batched GEMM)
};

/// A set of DynamicDim bits (0: every dimension is static).
using DynamicDimsMask = std::uint8_t;

/// All defined bits.
inline constexpr DynamicDimsMask kAllDynamicDims =
    kDynamicM | kDynamicN | kDynamicK | kDynamicBatch;

/// Parses a mask: a number 0..15, or letters from "MNKB" (either case), optionally separated by
/// ',', '|', '+' or spaces ("M", "m,n", "MNKB", "batch" is also accepted for B); "" and "none"
/// give 0. Errors: kInvalidArgument naming the offending text.
Expected<DynamicDimsMask> parse_dynamic_dims(std::string_view text);

/// "M", "N|K", "M|N|K|B", "none" for 0.
std::string dynamic_dims_to_string(DynamicDimsMask mask);

/// The mask of the innermost DynamicDimsGuard alive on this thread, if any (has_value false
/// when no guard is alive: callers then use the process setting, TUNEKIT_DYNAMIC_DIMS).
struct ThreadDynamicDims {
  bool set = false;          ///< a guard is alive on this thread
  DynamicDimsMask mask = 0;  ///< its mask (0 explicitly marks every dimension static)
};
namespace detail {
/// The calling thread's innermost guard (written only by DynamicDimsGuard).
inline thread_local ThreadDynamicDims t_dynamic_dims{};
/// DynamicDimsGuards alive in the process: while none is, the dispatch path skips the
/// thread-local read (a call into the TLS resolver from a shared library).
inline std::atomic<int> live_dynamic_dims_guards{0};
}  // namespace detail

/// This thread's guard state (one thread-local read; cheap enough for the dispatch path).
inline ThreadDynamicDims thread_dynamic_dims() noexcept { return detail::t_dynamic_dims; }

/// RAII scope in which GEMMs dispatched by this thread have the given dynamic dims (the C++ form
/// of upstream's `dynamic_dims_mask(M=..., N=..., K=..., batch=...)` context manager). Guards
/// nest; the innermost wins, and a guard with mask 0 marks all dimensions static inside it, even
/// when TUNEKIT_DYNAMIC_DIMS is set. Dims are in the BLAS (column-major) frame: for a row-major
/// `torch.nn.Linear` the token count is BLAS n.
/// Not movable; destroy guards in reverse order of construction (automatic for scoped objects).
class DynamicDimsGuard {
 public:
  /// Pushes `mask` for this thread.
  explicit DynamicDimsGuard(DynamicDimsMask mask) noexcept;
  /// Pops it again.
  ~DynamicDimsGuard();
  DynamicDimsGuard(const DynamicDimsGuard&) = delete;
  DynamicDimsGuard& operator=(const DynamicDimsGuard&) = delete;

 private:
  ThreadDynamicDims previous_;
};

/// Upstream's name.
using TunableDynamicDimsGuard = DynamicDimsGuard;

}  // namespace tunekit
