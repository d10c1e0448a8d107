// GemmParams: one GEMM problem (plain, strided-batched, with bias) in BLAS column-major semantics,
// with TunableOp signatures, problem keys, operand workspaces and output comparison.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit::ops {

/// Element type of A and B. C (and bias) are float for kFloat and kBFloat16, double for kDouble.
enum class DType : std::uint8_t { kFloat = 0, kDouble = 1, kBFloat16 = 2 };

/// TunableOp GEMM kinds.
enum class GemmKind : std::uint8_t { kGemm = 0, kStridedBatched = 1, kGemmAndBias = 2 };

/// bfloat16 storage (upper 16 bits of an IEEE float).
struct BFloat16 {
  std::uint16_t bits = 0;
};
/// Round-to-nearest-even float -> bfloat16 conversion; NaN stays NaN.
BFloat16 to_bfloat16(float x) noexcept;
/// Exact bfloat16 -> float conversion.
float to_float(BFloat16 x) noexcept;

/// TunableOp dtype token ("float", "double", "BFloat16").
std::string_view dtype_name(DType dtype) noexcept;
/// Bytes of one A/B element.
std::size_t element_bytes(DType dtype) noexcept;
/// Bytes of one C / bias element (4 for float and bf16, 8 for double).
std::size_t output_element_bytes(DType dtype) noexcept;

/// The identity of a GEMM problem; trivially copyable, compared and hashed without allocation.
struct GemmKey {
  GemmKind kind = GemmKind::kGemm;
  DType dtype = DType::kFloat;
  char transa = 'n';
  char transb = 'n';
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, batch = 1;
  friend bool operator==(const GemmKey&, const GemmKey&) = default;
};

class GemmWorkspace;

/// One GEMM call: C = alpha * op(A) * op(B) + beta * C, column-major (BLAS) semantics.
/// Shapes:  op(A) is m x k, op(B) is k x n, C is m x n. transa/transb are 'n' or 't'
///          (lower case, as TunableOp writes them). A is stored m x k (lda >= m) when transa is
///          'n', else k x m (lda >= k); likewise B (ldb >= k for 'n', >= n for 't'); ldc >= m.
/// Batched: `batch` problems at element strides stride_a/b/c (kStridedBatched).
/// Bias:    kGemmAndBias adds bias[i] (length m, output element type) to row i of every column;
///          beta must be 0 (as upstream's fused epilogue).
/// Units:   strides and leading dimensions in elements.
struct GemmParams {
  GemmKind kind = GemmKind::kGemm;
  DType dtype = DType::kFloat;
  char transa = 'n';
  char transb = 'n';
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  double alpha = 1.0;
  double beta = 0.0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* bias = nullptr;

  using Key = GemmKey;
  using Workspace = GemmWorkspace;

  /// "GemmTunableOp_float_TN", "GemmStridedBatchedTunableOp_BFloat16_NN", "GemmAndBiasTunableOp_...".
  std::string op_signature() const;
  /// "tn_4096_16_4096_ld_4096_4096_4096"; batched: "nn_m_n_k_B_batch_ld_lda_ldb_ldc".
  std::string signature() const;
  Key key() const noexcept;
  static std::uint64_t hash(const Key& key) noexcept;
  /// 2*m*n*k*batch (+ m*n*batch for the bias).
  double flops() const noexcept;
  /// Checks shapes, leading dims, transposes and pointers. kInvalidArgument naming the field.
  Status validate() const;

  /// Bytes each operand spans, with the upstream minimum-dense rule (tunableop.md §4.4).
  std::size_t a_bytes() const noexcept;
  std::size_t b_bytes() const noexcept;
  std::size_t c_bytes() const noexcept;
  std::size_t bias_bytes() const noexcept;

  /// Parses TunableOp signatures (both current `_ld_` and old forms) into params without
  /// operand pointers. Old forms get dense leading dimensions. Errors: kParseError with reason;
  /// kUnsupported for op kinds tunekit does not run (ScaledGemm, Half, complex).
  static Expected<GemmParams> from_signature(std::string_view op_signature,
                                             std::string_view params_signature);
};

/// Owns operand buffers for a problem: `copies` sets of A, B, C (and bias), for rotating
/// buffers and numerical checks. Copy 0 holds copies of the caller's operands.
class GemmWorkspace {
 public:
  /// Allocates `copies` operand sets shaped like `params`, filling A/B/bias copies from the
  /// caller's data (or, with `random_fill`, from a deterministic generator with `seed`) and each
  /// C from the caller's C (or zeros). Errors: kInvalidArgument for invalid params.
  static Expected<std::unique_ptr<GemmWorkspace>> create(const GemmParams& params,
                                                        std::size_t copies, bool random_fill,
                                                        std::uint64_t seed = 1);
  std::size_t copies() const noexcept { return copies_; }
  /// Params whose a/b/c/bias point into copy i (i < copies()).
  GemmParams bind(std::size_t i) const noexcept;
  /// Restores C of copy i from the initial C contents.
  void reset_output(std::size_t i) noexcept;

 private:
  GemmParams base_{};
  std::size_t copies_ = 0;
  std::vector<std::vector<unsigned char>> a_, b_, c_, bias_;
  std::vector<unsigned char> c_initial_;
};

/// Compares two outputs of `params`' shape (ldc-strided, batched) elementwise:
/// |got - ref| <= atol + rtol * |ref|, NaN in got fails. Returns kWrongResult naming the first
/// bad element (batch, row, column, values) and the count of mismatches.
Status compare_gemm_output(const GemmParams& params, const void* reference, const void* got,
                           double atol, double rtol);

}  // namespace tunekit::ops
