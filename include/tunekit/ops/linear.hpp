// Linear: a GEMM handle for constant weights (a linear layer), tuned per token count among
// candidates that pack the weights once: tunekit's kernels with the weights in the chosen
// configuration's layout, oneDNN 2's and oneDNN 3's matmul with their reordered weights, MKL's
// packed weights (cblas_*_pack), the decode kernels and Default.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_params.hpp"
#include "tunekit/tunable/candidate.hpp"

namespace tunekit::ops {

/// What a Linear runs for one token count.
struct LinearChoice {
  std::string solution;  ///< the winner's name, e.g. "native_f32[mr=16,...]" or "Default"
  double call_ms = 0.0;  ///< its time per call when it was chosen (find_fastest's score), ms
  /// One-time cost of packing the weights for it: its first call on the caller's operands minus
  /// a later call, ms (0 for candidates that read the weights as they are).
  double pack_ms = 0.0;
  double tuning_ms = 0.0;  ///< wall time of choosing it, ms
};

/// y = alpha * x W^T + beta * y with constant weights W, row-major as a linear layer stores them:
///   W  out_features x in_features (leading dimension ld_w >= in_features),
///   x  tokens x in_features (ld_x >= in_features),  y  tokens x out_features (ld_y >=
///   out_features).
/// In TunableOp's column-major frame this is GemmTunableOp_float_TN, m = out_features,
/// n = tokens, k = in_features, A = W (the Llama projections' layout).
/// bf16 weights (create() with BFloat16) take bf16 x and give float y
/// (GemmTunableOp_BFloat16_float_TN, fp32 accumulation); the blocked kernels then widen the weights
/// once, as they pack them.
///
/// Contract: the weights are read at `weights` for as long as the handle lives and must not
/// change, move or be freed meanwhile. Each token count is tuned on its first forward() (TunableOp
/// settings of tuning_context(): budget, numerical check, rotating copies; with tuning off,
/// Default runs); the winner may hold a packed copy of the weights in its own layout, owned by
/// the handle and never looked up by a pointer. Choices are made per process (not written to
/// the results file). forward() may be called from several threads.
class Linear {
 public:
  /// Errors: kInvalidArgument naming the argument for dims outside [1, 2^31 - 1], ld_w below
  /// in_features or null weights.
  static Expected<std::unique_ptr<Linear>> create(std::int64_t out_features,
                                                  std::int64_t in_features, const float* weights,
                                                  std::int64_t ld_w);
  /// The same for bf16 weights (forward() then takes bf16 x).
  static Expected<std::unique_ptr<Linear>> create(std::int64_t out_features,
                                                  std::int64_t in_features, const BFloat16* weights,
                                                  std::int64_t ld_w);
  ~Linear();
  Linear(const Linear&) = delete;
  Linear& operator=(const Linear&) = delete;

  /// Computes y for `tokens` rows of x (0 rows: nothing to do). Errors: kInvalidArgument naming
  /// tokens, x, y, ld_x, ld_y, or a non-finite alpha or beta; or the chosen candidate's error.
  Status forward(std::int64_t tokens, const float* x, std::int64_t ld_x, float* y,
                 std::int64_t ld_y, float alpha = 1.0f, float beta = 0.0f);
  /// forward() of a handle with bf16 weights: bf16 x, float y. Errors as forward(), and
  /// kInvalidArgument when x's dtype is not the weights' (either overload).
  Status forward(std::int64_t tokens, const BFloat16* x, std::int64_t ld_x, float* y,
                 std::int64_t ld_y, float alpha = 1.0f, float beta = 0.0f);
  /// The choice made for `tokens` (the first made, when several leading dimensions were used).
  /// Errors: kNotFound before the first forward() with it; kInvalidArgument for tokens < 0.
  Expected<LinearChoice> choice(std::int64_t tokens) const;

  std::int64_t out_features() const noexcept { return out_; }
  std::int64_t in_features() const noexcept { return in_; }
  /// The problems' dtype: kFloat, or kBFloat16Float for bf16 weights and x (y is float).
  DType dtype() const noexcept { return dtype_; }

 private:
  struct Plan;
  Linear(std::int64_t out_features, std::int64_t in_features, const void* weights,
         std::int64_t ld_w, DType dtype);
  static Expected<std::unique_ptr<Linear>> create_of(std::int64_t out_features,
                                                     std::int64_t in_features, const void* weights,
                                                     std::int64_t ld_w, DType dtype);
  Status forward_of(std::int64_t tokens, const void* x, DType x_dtype, std::int64_t ld_x, float* y,
                    std::int64_t ld_y, float alpha, float beta);
  GemmParams params(std::int64_t tokens, const void* x, std::int64_t ld_x, float* y,
                    std::int64_t ld_y, float alpha, float beta) const;
  Expected<Candidate<GemmParams>*> plan_for(const GemmParams& p);
  std::unique_ptr<Plan> tune(const GemmParams& p);

  std::int64_t out_, in_, ld_w_;
  const void* weights_;
  DType dtype_;
  mutable std::mutex mutex_;  // guards plans_ (tuning a token count holds it)
  std::map<std::array<std::int64_t, 3>, std::unique_ptr<Plan>> plans_;  // (tokens, ld_x, ld_y)
};

}  // namespace tunekit::ops
