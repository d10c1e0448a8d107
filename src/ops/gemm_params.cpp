// GemmParams: TunableOp signatures and their parser, keys, validation, operand sizes, bf16
// conversions and output comparison. See include/tunekit/ops/gemm_params.hpp.
#include "tunekit/ops/gemm_params.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace tunekit::ops {
namespace {

constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();

char upper(char c) noexcept {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}
bool is_trans_char(char c) noexcept { return c == 'n' || c == 'N' || c == 't' || c == 'T'; }

// a * b saturated at SIZE_MAX.
std::size_t mul_sat(std::size_t a, std::size_t b) noexcept {
  std::size_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::size_t>::max() : r;
}
std::size_t to_size(std::int64_t v) noexcept { return v > 0 ? static_cast<std::size_t>(v) : 0; }

// Upstream's size rule for one operand: elem * max(ld * cols, rows * cols_dense), batched
// max(stride * batch, per_matrix * batch) (tunableop.md §4.4).
std::size_t operand_bytes_rule(std::size_t elem, std::int64_t ld, std::int64_t stored_cols,
                               std::size_t dense, bool batched, std::int64_t stride,
                               std::int64_t batch) noexcept {
  std::size_t per = std::max(mul_sat(to_size(ld), to_size(stored_cols)), dense);
  if (batched) {
    per = std::max(mul_sat(to_size(stride), to_size(batch)), mul_sat(per, to_size(batch)));
  }
  return mul_sat(per, elem);
}

Status invalid(std::string message) { return {StatusCode::kInvalidArgument, std::move(message)}; }

// Splits `text` on '_' into at most `max_tokens` views; returns the count, or max_tokens + 1
// when there are more.
std::size_t split_underscore(std::string_view text, std::string_view* out, std::size_t max_tokens) {
  std::size_t count = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = text.find('_', start);
    if (count == max_tokens) return max_tokens + 1;
    out[count++] = text.substr(start, pos == std::string_view::npos ? text.npos : pos - start);
    if (pos == std::string_view::npos) return count;
    start = pos + 1;
  }
}

Status parse_error(std::string_view params_signature, std::string reason) {
  return {StatusCode::kParseError,
          fmt::format("params signature '{}': {}", params_signature, reason)};
}

Expected<std::int64_t> parse_dim(std::string_view token, const char* field,
                                 std::string_view params_signature) {
  std::int64_t value = 0;
  const char* first = token.data();
  const char* last = token.data() + token.size();
  if (token.empty() || token[0] < '0' || token[0] > '9') {
    return parse_error(params_signature, fmt::format("{} '{}' is not a number", field, token));
  }
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last) {
    return parse_error(params_signature, fmt::format("{} '{}' is not a number", field, token));
  }
  if (value < 1 || value > kMaxDim) {
    return parse_error(params_signature,
                       fmt::format("{} {} is out of range [1, {}]", field, value, kMaxDim));
  }
  return value;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// bfloat16

BFloat16 to_bfloat16(float x) noexcept {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7fffffffU) > 0x7f800000U) {  // NaN: keep the sign, force a quiet payload
    return BFloat16{static_cast<std::uint16_t>((bits >> 16) | 0x0040U)};
  }
  bits += 0x7fffU + ((bits >> 16) & 1U);  // round to nearest, ties to even
  return BFloat16{static_cast<std::uint16_t>(bits >> 16)};
}

float to_float(BFloat16 x) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(x.bits) << 16);
}

void to_float(const BFloat16* src, float* dst, std::size_t count) noexcept {
  const auto* s = reinterpret_cast<const std::uint16_t*>(src);
  auto* d = reinterpret_cast<std::uint32_t*>(dst);
  for (std::size_t i = 0; i < count; ++i) d[i] = static_cast<std::uint32_t>(s[i]) << 16;
}

void to_bfloat16(const float* src, BFloat16* dst, std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i) dst[i] = to_bfloat16(src[i]);
}

// ---------------------------------------------------------------------------------------------
// names and sizes

std::string_view dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat:
      return "float";
    case DType::kDouble:
      return "double";
    case DType::kBFloat16:
      return "BFloat16";
    case DType::kBFloat16Float:
      return "BFloat16_float";
  }
  return "unknown";
}

std::string_view kind_name(GemmKind kind) noexcept {
  switch (kind) {
    case GemmKind::kGemm:
      return "Gemm";
    case GemmKind::kStridedBatched:
      return "GemmStridedBatched";
    case GemmKind::kGemmAndBias:
      return "GemmAndBias";
  }
  return "unknown";
}

std::size_t element_bytes(DType dtype) noexcept {
  switch (dtype) {
    case DType::kFloat:
      return 4;
    case DType::kDouble:
      return 8;
    case DType::kBFloat16:
    case DType::kBFloat16Float:
      return 2;
  }
  return 0;
}

std::size_t output_element_bytes(DType dtype) noexcept {
  switch (dtype) {
    case DType::kDouble:
      return 8;
    case DType::kBFloat16:
      return 2;
    default:
      return 4;
  }
}

// ---------------------------------------------------------------------------------------------
// GemmParams

std::string GemmParams::op_signature() const {
  return fmt::format("{}TunableOp_{}_{}{}", kind_name(kind), dtype_name(dtype), upper(transa),
                     upper(transb));
}

std::string GemmParams::signature() const {
  if (kind == GemmKind::kStridedBatched) {
    return fmt::format("{}{}_{}_{}_{}_B_{}_ld_{}_{}_{}", lower_trans(transa), lower_trans(transb),
                       m, n, k, batch, lda, ldb, ldc);
  }
  return fmt::format("{}{}_{}_{}_{}_ld_{}_{}_{}", lower_trans(transa), lower_trans(transb), m, n, k,
                     lda, ldb, ldc);
}

std::string GemmParams::dynamic_signature(std::uint8_t mask) const {
  // DynamicDim bits of the tunable layer: M=1, N=2, K=4, batch=8.
  const bool dm = (mask & 1U) != 0, dn = (mask & 2U) != 0, dk = (mask & 4U) != 0;
  const bool db = (mask & 8U) != 0 && kind == GemmKind::kStridedBatched;
  const auto tok = [](bool dynamic, std::int64_t v) {
    return dynamic ? std::string("*") : std::to_string(v);
  };
  const std::string dims = fmt::format("{}{}_{}_{}_{}", lower_trans(transa), lower_trans(transb),
                                       tok(dm, m), tok(dn, n), tok(dk, k));
  const std::string lds = fmt::format("_ld_{}_{}_{}", tok(a_is_n() ? dm : dk, lda),
                                      tok(b_is_n() ? dk : dn, ldb), tok(dm, ldc));
  if (kind == GemmKind::kStridedBatched) return dims + "_B_" + tok(db, batch) + lds;
  return dims + lds;
}

std::string GemmParams::blas_signature() const {
  const bool batched = kind == GemmKind::kStridedBatched;
  const char* in_type = dtype == DType::kDouble  ? "f64_r"
                        : has_bf16_inputs(dtype) ? "bf16_r"
                                                 : "f32_r";
  const char* compute_type = dtype == DType::kDouble ? "f64_r" : "f32_r";
  const char* out_type = dtype == DType::kBFloat16 ? "bf16_r" : compute_type;
  std::string s = fmt::format(
      "- {{ function: matmul, M: {}, N: {}, K: {}, lda: {}, ldb: {}, ldc: {}, ldd: {}, "
      "stride_a: {}, stride_b: {}, stride_c: {}, stride_d: {}, alpha: {:.4f}, beta: {:.4f}, "
      "transA: {}, transB: {}, batch_count: {}, a_type: {}, b_type: {}, c_type: {}, d_type: {}, ",
      m, n, k, lda, ldb, ldc, ldc, batched ? stride_a : 0, batched ? stride_b : 0,
      batched ? stride_c : 0, batched ? stride_c : 0, alpha, beta, upper(transa), upper(transb),
      batched ? batch : 1, in_type, in_type, out_type, out_type);
  if (kind == GemmKind::kGemmAndBias) s += fmt::format("bias_type: {}, ", out_type);
  s += fmt::format("compute_type: {} }}", compute_type);
  return s;
}

double GemmParams::flops() const noexcept {
  const double batches = kind == GemmKind::kStridedBatched ? static_cast<double>(batch) : 1.0;
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  double f = 2.0 * mn * static_cast<double>(k) * batches;
  if (kind == GemmKind::kGemmAndBias) f += mn * batches;
  return f;
}

Status GemmParams::validate_shape() const {
  if (kind != GemmKind::kGemm && kind != GemmKind::kStridedBatched &&
      kind != GemmKind::kGemmAndBias) {
    return invalid(fmt::format("kind {} is not a GemmKind", static_cast<int>(kind)));
  }
  if (dtype != DType::kFloat && dtype != DType::kDouble && dtype != DType::kBFloat16 &&
      dtype != DType::kBFloat16Float) {
    return invalid(fmt::format("dtype {} is not a DType", static_cast<int>(dtype)));
  }
  if (!is_trans_char(transa)) {
    return invalid(fmt::format("transa must be 'n' or 't', got '{}' ({})", transa,
                               static_cast<int>(static_cast<unsigned char>(transa))));
  }
  if (!is_trans_char(transb)) {
    return invalid(fmt::format("transb must be 'n' or 't', got '{}' ({})", transb,
                               static_cast<int>(static_cast<unsigned char>(transb))));
  }
  for (const auto& [name, value] :
       {std::pair<const char*, std::int64_t>{"m", m}, {"n", n}, {"k", k}, {"batch", batch}}) {
    if (value < 1 || value > kMaxDim) {
      return invalid(fmt::format("{} must be in [1, {}], got {}", name, kMaxDim, value));
    }
  }
  if (kind != GemmKind::kStridedBatched && batch != 1) {
    return invalid(fmt::format("batch must be 1 for {}TunableOp, got {}", kind_name(kind), batch));
  }
  const std::int64_t rows_a = a_is_n() ? m : k;
  const std::int64_t rows_b = b_is_n() ? k : n;
  if (lda < rows_a || lda > kMaxDim) {
    return invalid(fmt::format("lda ({}) must be >= {} ({}) when transa is '{}' and <= {}", lda,
                               a_is_n() ? "m" : "k", rows_a, lower_trans(transa), kMaxDim));
  }
  if (ldb < rows_b || ldb > kMaxDim) {
    return invalid(fmt::format("ldb ({}) must be >= {} ({}) when transb is '{}' and <= {}", ldb,
                               b_is_n() ? "k" : "n", rows_b, lower_trans(transb), kMaxDim));
  }
  if (ldc < m || ldc > kMaxDim) {
    return invalid(fmt::format("ldc ({}) must be >= m ({}) and <= {}", ldc, m, kMaxDim));
  }
  if (kind == GemmKind::kStridedBatched) {
    if (stride_a < 0) return invalid(fmt::format("stride_a must be >= 0, got {}", stride_a));
    if (stride_b < 0) return invalid(fmt::format("stride_b must be >= 0, got {}", stride_b));
    if (batch > 1 && stride_c < ldc * n) {
      return invalid(
          fmt::format("stride_c ({}) must be >= ldc*n ({}) so that the {} outputs do not overlap",
                      stride_c, ldc * n, batch));
    }
  }
  if (!std::isfinite(alpha)) return invalid(fmt::format("alpha must be finite, got {}", alpha));
  if (!std::isfinite(beta)) return invalid(fmt::format("beta must be finite, got {}", beta));
  if (kind == GemmKind::kGemmAndBias && beta != 0.0) {
    return invalid(
        fmt::format("beta must be 0 for GemmAndBias (the bias epilogue replaces C), "
                    "got {}",
                    beta));
  }
  constexpr std::size_t kMaxBytes = std::size_t{1} << 62;
  if (a_bytes() > kMaxBytes || b_bytes() > kMaxBytes || c_bytes() > kMaxBytes) {
    return invalid("operands span more than 2^62 bytes");
  }
  return Status::ok();
}

Status GemmParams::validate() const {
  TUNEKIT_RETURN_IF_ERROR(validate_shape());
  if (a == nullptr) return invalid("a is null");
  if (b == nullptr) return invalid("b is null");
  if (c == nullptr) return invalid("c is null");
  if (kind == GemmKind::kGemmAndBias && bias == nullptr) {
    return invalid("bias is null (GemmAndBias needs a bias of length m)");
  }
  return Status::ok();
}

std::size_t GemmParams::a_bytes() const noexcept {
  return operand_bytes_rule(element_bytes(dtype), lda, a_is_n() ? k : m,
                            mul_sat(to_size(m), to_size(k)), kind == GemmKind::kStridedBatched,
                            stride_a, batch);
}

std::size_t GemmParams::b_bytes() const noexcept {
  return operand_bytes_rule(element_bytes(dtype), ldb, b_is_n() ? n : k,
                            mul_sat(to_size(k), to_size(n)), kind == GemmKind::kStridedBatched,
                            stride_b, batch);
}

std::size_t GemmParams::c_bytes() const noexcept {
  return operand_bytes_rule(output_element_bytes(dtype), ldc, n, mul_sat(to_size(m), to_size(n)),
                            kind == GemmKind::kStridedBatched, stride_c, batch);
}

std::size_t GemmParams::bias_bytes() const noexcept {
  return kind == GemmKind::kGemmAndBias ? mul_sat(to_size(m), output_element_bytes(dtype)) : 0;
}

Status GemmParams::compare_output(const GemmParams& reference, double atol, double rtol) const {
  if (!(reference.key() == key())) {
    return invalid(fmt::format("cannot compare outputs of different problems ({} vs {})",
                               reference.signature(), signature()));
  }
  return compare_gemm_output(*this, reference.c, c, atol, rtol);
}

Tolerance GemmParams::default_tolerance() const noexcept {
  return dtype_tolerance(dtype_name(dtype), k);
}

Expected<GemmParams> GemmParams::from_signature(std::string_view op_signature,
                                                std::string_view params_signature) {
  GemmParams p;
  // Op signature: <Kind>TunableOp_<dtype>_<AB>.
  struct Prefix {
    std::string_view text;
    GemmKind kind;
  };
  constexpr Prefix kPrefixes[] = {{"GemmTunableOp_", GemmKind::kGemm},
                                  {"GemmStridedBatchedTunableOp_", GemmKind::kStridedBatched},
                                  {"GemmAndBiasTunableOp_", GemmKind::kGemmAndBias}};
  std::string_view rest;
  bool matched = false;
  for (const Prefix& prefix : kPrefixes) {
    if (op_signature.starts_with(prefix.text)) {
      p.kind = prefix.kind;
      rest = op_signature.substr(prefix.text.size());
      matched = true;
      break;
    }
  }
  if (!matched) {
    if (op_signature.starts_with("ScaledGemmTunableOp_")) {
      return Status(StatusCode::kUnsupported,
                    fmt::format("'{}': ScaledGemm (fp8 with scales) has no CPU candidates in "
                                "tunekit",
                                op_signature));
    }
    return Status(StatusCode::kParseError,
                  fmt::format("op signature '{}': expected GemmTunableOp_<dtype>_<AB>, "
                              "GemmStridedBatchedTunableOp_<dtype>_<AB> or "
                              "GemmAndBiasTunableOp_<dtype>_<AB>",
                              op_signature));
  }
  const std::size_t last_us = rest.rfind('_');
  if (last_us == std::string_view::npos || rest.size() - last_us != 3 ||
      !is_trans_char(rest[last_us + 1]) || !is_trans_char(rest[last_us + 2])) {
    return Status(StatusCode::kParseError,
                  fmt::format("op signature '{}': expected a layout of two N/T letters after "
                              "the dtype",
                              op_signature));
  }
  const std::string_view dtype = rest.substr(0, last_us);
  const char layout_a = lower_trans(rest[last_us + 1]);
  const char layout_b = lower_trans(rest[last_us + 2]);
  if (dtype == "float") {
    p.dtype = DType::kFloat;
  } else if (dtype == "double") {
    p.dtype = DType::kDouble;
  } else if (dtype == "BFloat16") {
    p.dtype = DType::kBFloat16;
  } else if (dtype == "BFloat16_float") {
    p.dtype = DType::kBFloat16Float;
  } else if (dtype == "tf32") {
    return Status(StatusCode::kUnsupported,
                  fmt::format("'{}': tf32 (float with TF32 tensor-core math) has no CPU "
                              "counterpart; tunekit tunes strict float only",
                              op_signature));
  } else if (dtype == "Half" || dtype.starts_with("Float8_") ||
             dtype.starts_with("c10::complex<") || dtype == "ComplexFloat" ||
             dtype == "ComplexDouble") {
    return Status(StatusCode::kUnsupported,
                  fmt::format("'{}': dtype '{}' is not supported (tunekit runs float, double, "
                              "BFloat16 and BFloat16_float GEMMs)",
                              op_signature, dtype));
  } else {
    return Status(StatusCode::kParseError,
                  fmt::format("op signature '{}': unknown dtype '{}'", op_signature, dtype));
  }

  // Params signature: {ta}{tb}_{m}_{n}_{k}[_B_{batch}][_ld_{lda}_{ldb}_{ldc}].
  constexpr std::size_t kMaxTokens = 10;
  std::string_view tok[kMaxTokens];
  const std::size_t count = split_underscore(params_signature, tok, kMaxTokens);
  if (count > kMaxTokens) return parse_error(params_signature, "too many '_'-separated tokens");
  if (count < 4) {
    return parse_error(params_signature, "expected {ta}{tb}_{m}_{n}_{k}[_ld_{lda}_{ldb}_{ldc}]");
  }
  if (tok[0].size() != 2 || !is_trans_char(tok[0][0]) || !is_trans_char(tok[0][1])) {
    return parse_error(params_signature, fmt::format("transposes '{}' must be two of n/t", tok[0]));
  }
  p.transa = lower_trans(tok[0][0]);
  p.transb = lower_trans(tok[0][1]);
  if (p.transa != layout_a || p.transb != layout_b) {
    return parse_error(params_signature,
                       fmt::format("transposes '{}' disagree with the op layout '{}{}' of '{}'",
                                   tok[0], upper(layout_a), upper(layout_b), op_signature));
  }
  std::size_t i = 1;
  std::int64_t* const dims[] = {&p.m, &p.n, &p.k};
  const char* const dim_names[] = {"m", "n", "k"};
  for (int d = 0; d < 3; ++d, ++i) {
    Expected<std::int64_t> v = parse_dim(tok[i], dim_names[d], params_signature);
    if (!v) return v.status();
    *dims[d] = *v;
  }
  if (p.kind == GemmKind::kStridedBatched) {
    if (i >= count || tok[i] != "B") {
      return parse_error(params_signature,
                         "expected '_B_{batch}' after {m}_{n}_{k} for "
                         "GemmStridedBatched");
    }
    if (i + 1 >= count) return parse_error(params_signature, "missing batch after '_B_'");
    Expected<std::int64_t> v = parse_dim(tok[i + 1], "batch", params_signature);
    if (!v) return v.status();
    p.batch = *v;
    i += 2;
  } else if (i < count && tok[i] == "B") {
    return parse_error(params_signature,
                       fmt::format("'_B_' (batch) is only valid for GemmStridedBatched, not {}",
                                   kind_name(p.kind)));
  }
  p.lda = p.a_is_n() ? p.m : p.k;  // old (pre mid-2024) form: dense leading dimensions
  p.ldb = p.b_is_n() ? p.k : p.n;
  p.ldc = p.m;
  if (i < count) {
    if (tok[i] != "ld") {
      return parse_error(params_signature,
                         fmt::format("unexpected token '{}' (expected 'ld')", tok[i]));
    }
    if (count - i != 4) {
      return parse_error(params_signature, "expected exactly three values after '_ld_'");
    }
    std::int64_t* const lds[] = {&p.lda, &p.ldb, &p.ldc};
    const char* const ld_names[] = {"lda", "ldb", "ldc"};
    for (int d = 0; d < 3; ++d) {
      Expected<std::int64_t> v =
          parse_dim(tok[i + 1 + static_cast<std::size_t>(d)], ld_names[d], params_signature);
      if (!v) return v.status();
      *lds[d] = *v;
    }
  }
  if (p.kind == GemmKind::kStridedBatched) {
    p.stride_a = p.lda * (p.a_is_n() ? p.k : p.m);
    p.stride_b = p.ldb * (p.b_is_n() ? p.n : p.k);
    p.stride_c = p.ldc * p.n;
  }
  if (Status s = p.validate_shape(); !s) {
    return parse_error(params_signature, "inconsistent problem: " + s.message());
  }
  return p;
}

// ---------------------------------------------------------------------------------------------
// output comparison

namespace {

// The value of an output element as a double.
double widen(float x) { return static_cast<double>(x); }
double widen(double x) { return x; }
double widen(BFloat16 x) { return static_cast<double>(to_float(x)); }

template <class T>
Status compare_typed(const GemmParams& p, const T* ref, const T* got, double atol, double rtol) {
  std::int64_t bad = 0;
  std::int64_t first_b = 0, first_i = 0, first_j = 0;
  double first_ref = 0, first_got = 0;
  const std::int64_t batches = p.kind == GemmKind::kStridedBatched ? p.batch : 1;
  for (std::int64_t b = 0; b < batches; ++b) {
    const std::int64_t base = b * p.stride_c;
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t i = 0; i < p.m; ++i) {
        const double r = widen(ref[base + i + j * p.ldc]);
        const double g = widen(got[base + i + j * p.ldc]);
        const bool ok =
            (std::isnan(r) && std::isnan(g)) || std::fabs(g - r) <= atol + rtol * std::fabs(r);
        if (!ok) {
          if (bad == 0) {
            first_b = b;
            first_i = i;
            first_j = j;
            first_ref = r;
            first_got = g;
          }
          ++bad;
        }
      }
    }
  }
  if (bad == 0) return Status::ok();
  return {StatusCode::kWrongResult,
          fmt::format("{} of {} output elements differ (atol {:g}, rtol {:g}); first at batch {}, "
                      "row {}, column {}: got {:.9g}, expected {:.9g}",
                      bad, batches * p.m * p.n, atol, rtol, first_b, first_i, first_j, first_got,
                      first_ref)};
}

}  // namespace

Status compare_gemm_output(const GemmParams& params, const void* reference, const void* got,
                           double atol, double rtol) {
  TUNEKIT_RETURN_IF_ERROR(params.validate_shape());
  if (reference == nullptr || got == nullptr) return invalid("compared output is null");
  if (params.dtype == DType::kDouble) {
    return compare_typed(params, static_cast<const double*>(reference),
                         static_cast<const double*>(got), atol, rtol);
  }
  if (params.dtype == DType::kBFloat16) {
    return compare_typed(params, static_cast<const BFloat16*>(reference),
                         static_cast<const BFloat16*>(got), atol, rtol);
  }
  return compare_typed(params, static_cast<const float*>(reference), static_cast<const float*>(got),
                       atol, rtol);
}

}  // namespace tunekit::ops
