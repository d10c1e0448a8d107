// GemmParams: one GEMM problem (plain, strided-batched, with bias) in BLAS column-major semantics,
// with TunableOp signatures, problem keys, operand workspaces and output comparison.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/tunable/tolerance.hpp"

namespace tunekit::ops {

/// Element types of a GEMM problem, as PyTorch TunableOp's dtype tokens mean them:
///   kFloat          float A, B, C and bias ("float");
///   kDouble         double A, B, C and bias ("double");
///   kBFloat16       bf16 A, B, C and bias, fp32 accumulation, C rounded to bf16 (round to
///                   nearest even) ("BFloat16", upstream's GemmTunableOp_BFloat16_TN);
///   kBFloat16Float  bf16 A and B, fp32 accumulation, float C and bias ("BFloat16_float").
/// The values are fixed: they pass through a C ABI.
enum class DType : std::uint8_t { kFloat = 0, kDouble = 1, kBFloat16 = 2, kBFloat16Float = 3 };

/// True for the dtypes with bf16 A and B (kBFloat16, kBFloat16Float).
constexpr bool has_bf16_inputs(DType dtype) noexcept {
  return dtype == DType::kBFloat16 || dtype == DType::kBFloat16Float;
}
/// The dtype with the same A and B and a float (or double) C: kBFloat16 -> kBFloat16Float; the
/// others as they are.
constexpr DType float_output_dtype(DType dtype) noexcept {
  return dtype == DType::kBFloat16 ? DType::kBFloat16Float : dtype;
}

/// TunableOp GEMM kinds.
enum class GemmKind : std::uint8_t { kGemm = 0, kStridedBatched = 1, kGemmAndBias = 2 };

/// bfloat16 storage (upper 16 bits of an IEEE float).
struct BFloat16 {
  std::uint16_t bits = 0;
};
/// Round-to-nearest-even float -> bfloat16 conversion; NaN stays (quiet) NaN, infinities stay.
BFloat16 to_bfloat16(float x) noexcept;
/// Exact bfloat16 -> float conversion.
float to_float(BFloat16 x) noexcept;
/// Converts `count` bfloat16 values to float (exact). `src` and `dst` must not overlap.
void to_float(const BFloat16* src, float* dst, std::size_t count) noexcept;
/// Converts `count` floats to bfloat16 with round-to-nearest-even.
void to_bfloat16(const float* src, BFloat16* dst, std::size_t count) noexcept;

/// TunableOp dtype token ("float", "double", "BFloat16", "BFloat16_float").
std::string_view dtype_name(DType dtype) noexcept;
/// TunableOp op-name prefix of a kind ("Gemm", "GemmStridedBatched", "GemmAndBias").
std::string_view kind_name(GemmKind kind) noexcept;
/// Bytes of one A/B element (4, 8 or 2).
std::size_t element_bytes(DType dtype) noexcept;
/// Bytes of one C / bias element (4 for float and BFloat16_float, 8 for double, 2 for BFloat16).
std::size_t output_element_bytes(DType dtype) noexcept;

/// The identity of a GEMM problem in four words, compared and hashed without allocation:
/// m and n, k and lda, ldb and ldc (32 bits each), batch (1 unless strided-batched) with kind,
/// dtype and the transposes ('N' and 'n' give the same key). As upstream, batch strides, alpha,
/// beta and pointers are not part of the key. Problems that differ in these fields have
/// different keys as long as every field is in range (values below 2^31, a GemmKind, a DType,
/// transposes n/t), as in any valid problem; all others share GemmKey::invalid(), which
/// TunableOp never caches (it validates before caching a key).
struct GemmKey {
  /// The key of every problem with a field out of range.
  static constexpr GemmKey invalid() noexcept { return {~0ULL, ~0ULL, ~0ULL, ~0ULL}; }

  std::uint64_t m_n = 0;
  std::uint64_t k_lda = 0;
  std::uint64_t ldb_ldc = 0;
  std::uint64_t batch_tag = 0;
  /// Equal words (one branch: the dispatch path compares a key per hit).
  friend bool operator==(const GemmKey& x, const GemmKey& y) noexcept {
    return ((x.m_n ^ y.m_n) | (x.k_lda ^ y.k_lda) | (x.ldb_ldc ^ y.ldb_ldc) |
            (x.batch_tag ^ y.batch_tag)) == 0;
  }
};

class GemmWorkspace;

/// One GEMM call: C = alpha * op(A) * op(B) + beta * C, column-major (BLAS) semantics.
/// Shapes:  op(A) is m x k, op(B) is k x n, C is m x n. transa/transb are 'n' or 't' (either
///          case; TunableOp writes lower case). A is stored m x k (lda >= m) when transa is 'n',
///          else k x m (lda >= k); likewise B (ldb >= k for 'n', >= n for 't'); ldc >= m.
///          m, n, k, leading dimensions and batch are at most 2^31 - 1 (32-bit BLAS integers).
/// Batched: `batch` problems at element strides stride_a/b/c (kStridedBatched); stride_a and
///          stride_b may be 0 (broadcast), stride_c must keep the outputs apart.
/// Bias:    kGemmAndBias adds bias[i] (length m, output element type) to row i of every column;
///          beta must be 0 (as upstream's fused epilogue).
/// Units:   strides and leading dimensions in elements. When beta is 0, C is not read (BLAS
///          semantics: NaN in C does not propagate).
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

  /// True when op(A) is A (transa 'n' or 'N').
  bool a_is_n() const noexcept { return transa == 'n' || transa == 'N'; }
  /// True when op(B) is B (transb 'n' or 'N').
  bool b_is_n() const noexcept { return transb == 'n' || transb == 'N'; }

  /// "GemmTunableOp_float_TN", "GemmStridedBatchedTunableOp_BFloat16_NN",
  /// "GemmTunableOp_BFloat16_float_TN", "GemmAndBiasTunableOp_...".
  std::string op_signature() const;
  /// "tn_4096_16_4096_ld_4096_4096_4096"; batched: "nn_m_n_k_B_batch_ld_lda_ldb_ldc".
  /// Transposes are written lower case, as TunableOp does.
  std::string signature() const;
  /// The signature with the dims of `mask` (tunekit::DynamicDim bits, BLAS frame) and the
  /// leading dimensions that follow them replaced by '*': lda follows m when transa is 'n', else
  /// k; ldb follows k when transb is 'n', else n; ldc follows m; the batch bit applies to
  /// strided-batched problems. Mask 0 gives signature(). Example (m dynamic, nn):
  /// "nn_*_64_32_ld_*_32_*". Source: PyTorch TunableOp V26 DynamicSignature().
  std::string dynamic_signature(std::uint8_t mask) const;
  /// The BLAS_PARAMS block written after a result or untuned line when TUNEKIT_BLAS_LOG is on:
  /// "- { function: matmul, M: 64, N: 8, K: 96, lda: 96, ..., compute_type: f32_r }".
  std::string blas_signature() const;
  /// The problem's identity (no allocation).
  Key key() const noexcept;
  /// key() of params with these fields (batch counts only for kStridedBatched), computed from the
  /// values themselves: an entry point can build the key from its arguments while it writes the
  /// params, instead of reading them back.
  static Key make_key(GemmKind kind, DType dtype, char transa, char transb, std::int64_t m,
                      std::int64_t n, std::int64_t k, std::int64_t lda, std::int64_t ldb,
                      std::int64_t ldc, std::int64_t batch) noexcept;
  /// 64-bit hash of a key (no allocation; stable within a build, not across versions).
  static std::uint64_t hash(const Key& key) noexcept;
  /// 2*m*n*k*batch (+ m*n*batch for the bias).
  double flops() const noexcept;

  /// Checks shapes, leading dimensions, strides, transposes, alpha/beta and the bias rule, but
  /// not the pointers. Errors: kInvalidArgument naming the field and the violated bound.
  Status validate_shape() const;
  /// validate_shape() plus non-null a, b, c (and bias for kGemmAndBias).
  /// Errors: kInvalidArgument naming the field.
  Status validate() const;
  /// A candidate's inline check before running, allocation-free: true only when validate() is
  /// ok. It is false for strided-batched problems and for a dim or leading dimension above 2^28
  /// even when they are valid; callers then ask validate() (which also gives the message):
  /// `if (!p.passes_quick_checks()) TUNEKIT_RETURN_IF_ERROR(p.validate());`
  bool passes_quick_checks() const noexcept;
  /// The dispatch hit's check: what validate() requires beyond the fields of key() (non-null
  /// a, b, c, finite alpha and beta, batch 1, and for kGemmAndBias beta 0 and a bias). For
  /// params whose key() is that of a valid problem it is true only when validate() is ok; it is
  /// false for strided-batched problems (their strides need validate()).
  bool passes_call_checks() const noexcept;

  /// Bytes each operand spans, with the upstream minimum-dense rule (tunableop.md §4.4):
  /// A = elem * max(lda * cols(A), m * k); batched: max(stride * batch, that * batch).
  /// Saturates at SIZE_MAX for absurd shapes (validate_shape() rejects those).
  std::size_t a_bytes() const noexcept;
  std::size_t b_bytes() const noexcept;
  std::size_t c_bytes() const noexcept;
  /// m output elements for kGemmAndBias, else 0.
  std::size_t bias_bytes() const noexcept;
  /// c_bytes(): what a rotating-buffer copy of the output needs.
  std::size_t output_bytes() const noexcept { return c_bytes(); }
  /// a_bytes() + b_bytes() + bias_bytes(): the inputs a rotating-buffer copy needs.
  std::size_t operand_bytes() const noexcept { return a_bytes() + b_bytes() + bias_bytes(); }

  /// Compares this problem's output (c) with `reference.c` (a problem of the same shape):
  /// compare_gemm_output(*this, reference.c, c, atol, rtol). Used by the numerical check.
  Status compare_output(const GemmParams& reference, double atol, double rtol) const;
  /// Numerical-check tolerance for this problem: dtype_tolerance(dtype, k) (tolerance.hpp).
  Tolerance default_tolerance() const noexcept;

  /// Parses TunableOp signatures (both current `_ld_` and old forms) into params without
  /// operand pointers (alpha 1, beta 0). Old forms get dense leading dimensions; batched
  /// problems get dense strides. Transposes come out lower case. Dtype tokens: "float",
  /// "double", "BFloat16" (bf16 C, as upstream) and tunekit's "BFloat16_float" (float C).
  /// Errors: kUnsupported with the reason for op kinds and dtypes tunekit does not run
  /// (ScaledGemm, Half, tf32, complex, fp8); kParseError with the reason and the offending
  /// token for anything malformed or inconsistent (e.g. lda < m).
  static Expected<GemmParams> from_signature(std::string_view op_signature,
                                             std::string_view params_signature);
};

/// ASCII lower case of a transpose (or layout) character: 'N' -> 'n', 'T' -> 't'; others as is.
constexpr char lower_trans(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

// The dispatch path's key and hash are inline: a hit costs no call into the library for them.
inline GemmKey GemmParams::key() const noexcept {
  return make_key(kind, dtype, transa, transb, m, n, k, lda, ldb, ldc, batch);
}

inline GemmKey GemmParams::make_key(GemmKind kind, DType dtype, char transa, char transb,
                                    std::int64_t m, std::int64_t n, std::int64_t k,
                                    std::int64_t lda, std::int64_t ldb, std::int64_t ldc,
                                    std::int64_t batch) noexcept {
  const std::int64_t batches = kind == GemmKind::kStridedBatched ? batch : 1;
  const unsigned ta = static_cast<unsigned char>(transa) | 0x20U;  // 'N' -> 'n', 'T' -> 't'
  const unsigned tb = static_cast<unsigned char>(transb) | 0x20U;
  const bool in_range =
      ((static_cast<std::uint64_t>(m) | static_cast<std::uint64_t>(n) |
        static_cast<std::uint64_t>(k) | static_cast<std::uint64_t>(lda) |
        static_cast<std::uint64_t>(ldb) | static_cast<std::uint64_t>(ldc) |
        static_cast<std::uint64_t>(batches)) >>
       31) == 0 &&
      static_cast<unsigned>(kind) <= static_cast<unsigned>(GemmKind::kGemmAndBias) &&
      static_cast<unsigned>(dtype) <= static_cast<unsigned>(DType::kBFloat16Float) &&
      (ta == 'n' || ta == 't') && (tb == 'n' || tb == 't');
  if (!in_range) [[unlikely]] {
    return GemmKey::invalid();
  }
  const auto pack = [](std::int64_t low, std::int64_t high) {
    return static_cast<std::uint64_t>(low) | (static_cast<std::uint64_t>(high) << 32);
  };
  // The one-byte fields are combined by multiplies and adds, not by shifts by whole bytes, which
  // the compiler would turn into one wide load of params: a load that cannot be forwarded from
  // the fields' separate one-byte stores, so it waits for them to complete when the params were
  // just written (about 20 ns on an AMD EPYC Zen 3).
  const std::int64_t tag =
      (static_cast<std::int64_t>(kind) * 4 + static_cast<std::int64_t>(dtype)) * 4 +
      (ta == 't' ? 2 : 0) + (tb == 't' ? 1 : 0);
  return GemmKey{pack(m, n), pack(k, lda), pack(ldb, ldc), pack(batches, tag)};
}

inline std::uint64_t GemmParams::hash(const GemmKey& key) noexcept {
  // One multiply per word, summed: the products are independent (no serial chain on the
  // dispatch path); the rotations bring each word's high half down, and the lock-free result
  // table remixes the sum.
  return key.m_n * 0x9e3779b97f4a7c15ULL + std::rotl(key.k_lda * 0xc2b2ae3d27d4eb4fULL, 21) +
         std::rotl(key.ldb_ldc * 0x165667b19e3779f9ULL, 42) +
         std::rotl(key.batch_tag * 0xd6e8feb86659fd93ULL, 53);
}

inline bool GemmParams::passes_call_checks() const noexcept {
  return kind != GemmKind::kStridedBatched && batch == 1 &&
         (kind != GemmKind::kGemmAndBias || (beta == 0.0 && bias != nullptr)) && a != nullptr &&
         b != nullptr && c != nullptr && std::isfinite(alpha) && std::isfinite(beta);
}

inline bool GemmParams::passes_quick_checks() const noexcept {
  // m, n, k and the leading dimensions in [1, 2^28]: within validate_shape()'s 2^31 - 1, and no
  // operand of a non-batched problem can span its 2^62 bytes (2^28 * 2^28 * 8 bytes = 2^59).
  // A value below 1 wraps to a huge one, and an OR is below 2^28 only when every term is.
  constexpr std::uint64_t kQuickLimit = std::uint64_t{1} << 28;
  const auto less_one = [](std::int64_t v) { return static_cast<std::uint64_t>(v) - 1; };
  const bool dims_ok = (less_one(m) | less_one(n) | less_one(k) | less_one(lda) | less_one(ldb) |
                        less_one(ldc)) < kQuickLimit;
  const unsigned ta = static_cast<unsigned char>(transa) | 0x20U;  // 'N' -> 'n', 'T' -> 't'
  const unsigned tb = static_cast<unsigned char>(transb) | 0x20U;
  const bool trans_ok = (ta == 'n' || ta == 't') && (tb == 'n' || tb == 't');
  const bool lds_ok = lda >= (ta == 'n' ? m : k) && ldb >= (tb == 'n' ? k : n) && ldc >= m;
  const bool kind_ok =
      kind == GemmKind::kGemm || (kind == GemmKind::kGemmAndBias && beta == 0.0 && bias != nullptr);
  const bool dtype_ok =
      static_cast<unsigned>(dtype) <= static_cast<unsigned>(DType::kBFloat16Float);
  return dims_ok && trans_ok && lds_ok && kind_ok && dtype_ok && batch == 1 && a != nullptr &&
         b != nullptr && c != nullptr && std::isfinite(alpha) && std::isfinite(beta);
}

/// Owns operand buffers for a problem: `copies` sets of A, B, C (and bias), for rotating
/// buffers and numerical checks. Every copy holds the same contents; buffers are 64-byte
/// aligned and span a_bytes() / b_bytes() / c_bytes() / bias_bytes() of the problem.
class GemmWorkspace {
 public:
  /// Allocates `copies` (>= 1) operand sets shaped like `params`. Without `random_fill`, A, B
  /// and bias are copied from the caller's pointers and C from the caller's C (zeros when
  /// params.c is null). With `random_fill`, A, B, bias and C (padding included) are filled
  /// from a deterministic generator seeded by `seed`: values uniform in [-1, 1), exactly
  /// representable in the element type, so every copy and every run sees the same data.
  /// Errors: kInvalidArgument for invalid shapes, copies == 0, or missing operand pointers
  /// without random_fill; kRuntimeError when memory cannot be allocated.
  static Expected<std::unique_ptr<GemmWorkspace>> create(const GemmParams& params,
                                                         std::size_t copies, bool random_fill,
                                                         std::uint64_t seed = 1);
  /// Number of operand sets.
  std::size_t copies() const noexcept { return copies_; }
  /// Params whose a/b/c/bias point into copy i (i < copies()); other fields as given.
  GemmParams bind(std::size_t i) const noexcept;
  /// Restores C of copy i from the initial C contents.
  void reset_output(std::size_t i) noexcept;
  /// The initial C contents (c_bytes() bytes), as every copy started.
  const void* initial_output() const noexcept { return c_initial_.get(); }

 private:
  struct FreeDeleter {
    void operator()(unsigned char* p) const noexcept;
  };
  using Buffer = std::unique_ptr<unsigned char[], FreeDeleter>;
  static Buffer allocate(std::size_t bytes);

  GemmParams base_{};
  std::size_t copies_ = 0;
  std::vector<Buffer> a_, b_, c_, bias_;
  Buffer c_initial_;
};

/// Compares two outputs of `params`' shape (ldc-strided, batched at stride_c) elementwise:
/// |got - ref| <= atol + rtol * |ref|. Only the m x n part of each output is compared; a NaN
/// in `got` fails unless `reference` holds NaN at the same place. Values are read as C's element
/// type: float (kFloat, kBFloat16Float), double (kDouble) or bf16 (kBFloat16).
/// Errors: kWrongResult naming the first bad element (batch, row, column, both values) and
/// the count of mismatches; kInvalidArgument for invalid shapes or null pointers.
Status compare_gemm_output(const GemmParams& params, const void* reference, const void* got,
                           double atol, double rtol);

}  // namespace tunekit::ops
