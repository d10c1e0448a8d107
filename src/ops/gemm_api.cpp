// The process-wide GEMM TunableOp and the typed tunekit::gemm entry points.
// See include/tunekit/ops/gemm.hpp.
#include <cctype>
#include <map>
#include <mutex>
#include <sstream>

#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit {
namespace {

// Every field written once (a default-constructed GemmParams would be zero-filled first).
ops::GemmParams make(ops::GemmKind kind, ops::DType dtype, char transa, char transb, std::int64_t m,
                     std::int64_t n, std::int64_t k, double alpha, const void* a, std::int64_t lda,
                     const void* b, std::int64_t ldb, double beta, void* c, std::int64_t ldc) {
  return ops::GemmParams{.kind = kind,
                         .dtype = dtype,
                         .transa = transa,
                         .transb = transb,
                         .m = m,
                         .n = n,
                         .k = k,
                         .lda = lda,
                         .ldb = ldb,
                         .ldc = ldc,
                         .batch = 1,
                         .stride_a = 0,
                         .stride_b = 0,
                         .stride_c = 0,
                         .alpha = alpha,
                         .beta = beta,
                         .a = a,
                         .b = b,
                         .c = c,
                         .bias = nullptr};
}

}  // namespace

void register_gemm_validators(TuningContext& ctx, const CandidateList<ops::GemmParams>& list) {
  // One "<LIBRARY>_VERSION" key per candidate library, read at run time from the library itself
  // (binding().detail starts with "<name> <version>"), so that a library upgrade invalidates
  // results tuned against the old one; "unavailable" for a library that cannot be loaded (a
  // file refused for it then names both values).
  std::map<std::string, std::string> versions;
  for (const auto& c : list) {
    auto* g = dynamic_cast<ops::GemmCandidate*>(c.get());
    if (g == nullptr) continue;
    std::string key;
    for (char ch : c->library()) {
      key += std::isalnum(static_cast<unsigned char>(ch))
                 ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch)))
                 : '_';
    }
    key += "_VERSION";
    if (versions.count(key)) continue;
    auto binding = g->binding();
    if (!binding) {  // planned but not loadable here: files tuned with it are refused
      versions.emplace(key, "unavailable");
      continue;
    }
    std::istringstream words(binding->detail);
    std::string name, version;
    words >> name >> version;
    if (version.empty()) version = "unknown";
    versions.emplace(key, version);
  }
  for (const auto& [key, version] : versions) {
    if (ctx.validators().contains(key)) continue;
    const std::string value = version;
    (void)ctx.register_validator(key, [value] { return value; });
  }
}

void register_all_gemm_validators(TuningContext& ctx) {
  register_gemm_validators(ctx, ops::make_gemm_candidates());
}

namespace {

/// The thread count and settle hook of prepare_gemm_context().
void apply_gemm_threads(TuningContext& ctx) {
  ctx.set_threads(ops::set_num_threads(ctx.threads()));
  ctx.hooks().set_settle_hook([] { (void)ops::settle_threads(); });
}

}  // namespace

void prepare_gemm_context(TuningContext& ctx) {
  apply_gemm_threads(ctx);
  register_all_gemm_validators(ctx);
}

namespace {

// Creates the op (first use only); out of line, so that the_op() inlines as a guard check.
[[gnu::noinline]] GemmTunableOp* make_op() {
  TuningContext& ctx = tuning_context();
  apply_gemm_threads(ctx);
  auto list = ops::make_gemm_candidates();
  register_gemm_validators(ctx, list);
  return new GemmTunableOp(std::move(list));
}

GemmTunableOp& the_op() {
  static GemmTunableOp* op = make_op();
  return *op;
}

[[noreturn, gnu::noinline, gnu::cold]] void throw_error(Status status) {
  throw Error(std::move(status));
}

// Every entry point dispatches through the op, which validates each call once: a miss before any
// work (TunableOp calls GemmParams::validate()), a hit in its candidate's run_resolved()
// (the inline GemmParams::passes_call_checks(), validate()'s error when they fail).
void run_or_throw(const ops::GemmParams& p) {
  Status s = the_op()(p);
  if (!s.is_ok()) [[unlikely]] {
    throw_error(std::move(s));
  }
}

// A plain GEMM from its arguments: the key is computed from the values (registers), not read
// back from the params just written.
void gemm_or_throw(ops::DType dtype, char transa, char transb, std::int64_t m, std::int64_t n,
                   std::int64_t k, double alpha, const void* a, std::int64_t lda, const void* b,
                   std::int64_t ldb, double beta, void* c, std::int64_t ldc) {
  const ops::GemmKey key = ops::GemmParams::make_key(ops::GemmKind::kGemm, dtype, transa, transb, m,
                                                     n, k, lda, ldb, ldc, 1);
  const ops::GemmParams p = make(ops::GemmKind::kGemm, dtype, transa, transb, m, n, k, alpha, a,
                                 lda, b, ldb, beta, c, ldc);
  Status s = the_op().dispatch(p, key);
  if (!s.is_ok()) [[unlikely]] {
    throw_error(std::move(s));
  }
}

}  // namespace

// The entry points below are flattened: the op's hit path is inlined into each. The plain GEMMs
// compute the key from their arguments (gemm_or_throw); the others read it back from the params
// with loads no wider than the fields (GemmParams::key()): a wider load could not be forwarded
// from the fields' stores and would wait for them to complete.

GemmTunableOp& gemm_op() { return the_op(); }

[[gnu::flatten]] Status try_gemm(const ops::GemmParams& params) { return the_op()(params); }

[[gnu::flatten]] void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                           float alpha, const float* a, std::int64_t lda, const float* b,
                           std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  gemm_or_throw(ops::DType::kFloat, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

[[gnu::flatten]] void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                           double alpha, const double* a, std::int64_t lda, const double* b,
                           std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  gemm_or_throw(ops::DType::kDouble, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

[[gnu::flatten]] void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                           float alpha, const ops::BFloat16* a, std::int64_t lda,
                           const ops::BFloat16* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc) {
  gemm_or_throw(ops::DType::kBFloat16Float, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
}

[[gnu::flatten]] void gemm(char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k,
                           float alpha, const ops::BFloat16* a, std::int64_t lda,
                           const ops::BFloat16* b, std::int64_t ldb, float beta, ops::BFloat16* c,
                           std::int64_t ldc) {
  gemm_or_throw(ops::DType::kBFloat16, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
}

namespace {
template <class T>
void batched(ops::DType dtype, char transa, char transb, std::int64_t m, std::int64_t n,
             std::int64_t k, double alpha, const T* a, std::int64_t lda, std::int64_t stride_a,
             const T* b, std::int64_t ldb, std::int64_t stride_b, double beta, T* c,
             std::int64_t ldc, std::int64_t stride_c, std::int64_t batch) {
  ops::GemmParams p = make(ops::GemmKind::kStridedBatched, dtype, transa, transb, m, n, k, alpha, a,
                           lda, b, ldb, beta, c, ldc);
  p.stride_a = stride_a;
  p.stride_b = stride_b;
  p.stride_c = stride_c;
  p.batch = batch;
  run_or_throw(p);
}

template <class T>
void with_bias(ops::DType dtype, char transa, char transb, std::int64_t m, std::int64_t n,
               std::int64_t k, double alpha, const T* a, std::int64_t lda, const T* b,
               std::int64_t ldb, const T* bias, T* c, std::int64_t ldc) {
  ops::GemmParams p = make(ops::GemmKind::kGemmAndBias, dtype, transa, transb, m, n, k, alpha, a,
                           lda, b, ldb, 0.0, c, ldc);
  p.bias = bias;
  run_or_throw(p);
}
}  // namespace

[[gnu::flatten]] void gemm_strided_batched(char transa, char transb, std::int64_t m, std::int64_t n,
                                           std::int64_t k, float alpha, const float* a,
                                           std::int64_t lda, std::int64_t stride_a, const float* b,
                                           std::int64_t ldb, std::int64_t stride_b, float beta,
                                           float* c, std::int64_t ldc, std::int64_t stride_c,
                                           std::int64_t batch) {
  batched(ops::DType::kFloat, transa, transb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
          beta, c, ldc, stride_c, batch);
}

[[gnu::flatten]] void gemm_strided_batched(char transa, char transb, std::int64_t m, std::int64_t n,
                                           std::int64_t k, double alpha, const double* a,
                                           std::int64_t lda, std::int64_t stride_a, const double* b,
                                           std::int64_t ldb, std::int64_t stride_b, double beta,
                                           double* c, std::int64_t ldc, std::int64_t stride_c,
                                           std::int64_t batch) {
  batched(ops::DType::kDouble, transa, transb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
          beta, c, ldc, stride_c, batch);
}

[[gnu::flatten]] void gemm_and_bias(char transa, char transb, std::int64_t m, std::int64_t n,
                                    std::int64_t k, float alpha, const float* a, std::int64_t lda,
                                    const float* b, std::int64_t ldb, const float* bias, float* c,
                                    std::int64_t ldc) {
  with_bias(ops::DType::kFloat, transa, transb, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
}

[[gnu::flatten]] void gemm_and_bias(char transa, char transb, std::int64_t m, std::int64_t n,
                                    std::int64_t k, double alpha, const double* a, std::int64_t lda,
                                    const double* b, std::int64_t ldb, const double* bias,
                                    double* c, std::int64_t ldc) {
  with_bias(ops::DType::kDouble, transa, transb, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc);
}

}  // namespace tunekit
