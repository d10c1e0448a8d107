// A small transformer-like forward pass (projections, attention scores, MLP) through tunekit::gemm,
// to show the offline workflow: record the untuned GEMMs, tune them with the CLI, run tuned.
//
//   # 1. record every distinct GEMM the model runs (nothing is tuned; Default runs):
//   TUNEKIT_TUNING=0 TUNEKIT_RECORD_UNTUNED=1 ./example_offline_workflow
//   # 2. tune them in a separate step (alone, with --jobs N, or under mpirun with --distributed):
//   tunekit tune-file tunekit_untuned0.csv
//   # 3. run with the results (tuning off: nothing new is tuned in production):
//   TUNEKIT_TUNING=0 ./example_offline_workflow
//
// The token count is a dynamic dimension (BLAS n of every torch.nn.Linear-style GEMM); the
// DynamicDimsGuard makes online tuning also store '*' entries for it, which
// TUNEKIT_WILDCARD_FALLBACK=1 serves for token counts never tuned.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tunekit/ops/gemm.hpp>
#include <vector>

namespace {

constexpr std::int64_t kHidden = 256;
constexpr std::int64_t kHeads = 4;
constexpr std::int64_t kHeadDim = kHidden / kHeads;
constexpr std::int64_t kFfn = 4 * kHidden;

// Deterministic values in [-0.5, 0.5).
std::vector<float> filled(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = static_cast<float>(seed >> 8) / 16777216.0f - 0.5f;
  }
  return v;
}

// torch.nn.Linear(in, out) on `tokens` rows: y[T, out] = x[T, in] * W[out, in]^T + bias. In
// the BLAS (column-major) frame that is C(out x T) = op(A) * B with A = W ('t', lda = in),
// B = x ('n', ldb = in), C = y (ldc = out).
void linear(const std::vector<float>& x, const std::vector<float>& w,
            const std::vector<float>& bias, std::vector<float>& y, std::int64_t tokens,
            std::int64_t in, std::int64_t out) {
  y.resize(static_cast<std::size_t>(tokens * out));
  tunekit::gemm_and_bias('t', 'n', out, tokens, in, 1.0f, w.data(), in, x.data(), in, bias.data(),
                         y.data(), out);
}

}  // namespace

int main() {
  try {
    const std::vector<float> w_qkv = filled(3 * kHidden * kHidden, 1),
                             b_qkv = filled(3 * kHidden, 2);
    const std::vector<float> w_out = filled(kHidden * kHidden, 3), b_out = filled(kHidden, 4);
    const std::vector<float> w_up = filled(kFfn * kHidden, 5), b_up = filled(kFfn, 6);
    const std::vector<float> w_down = filled(kHidden * kFfn, 7), b_down = filled(kHidden, 8);

    double checksum = 0;
    int gemms = 0;
    tunekit::DynamicDimsGuard dynamic_tokens(tunekit::kDynamicN);
    for (const std::int64_t tokens : {1, 8, 32, 8}) {  // decode, then prefill sizes; 8 repeats
      const std::vector<float> x = filled(static_cast<std::size_t>(tokens * kHidden), 9);
      std::vector<float> qkv, attn_out, h, up, down;
      linear(x, w_qkv, b_qkv, qkv, tokens, kHidden, 3 * kHidden);
      // Attention scores per head: S_h(T x T) = K_h^T Q_h with Q_h, K_h (d x T) gathered per
      // head from qkv ([token][q | k | v]), batched over the heads.
      std::vector<float> q(static_cast<std::size_t>(kHeads * tokens * kHeadDim)), k(q.size());
      for (std::int64_t hd = 0; hd < kHeads; ++hd) {
        for (std::int64_t t = 0; t < tokens; ++t) {
          for (std::int64_t d = 0; d < kHeadDim; ++d) {
            const auto at = static_cast<std::size_t>((hd * tokens + t) * kHeadDim + d);
            q[at] = qkv[static_cast<std::size_t>(t * 3 * kHidden + hd * kHeadDim + d)];
            k[at] = qkv[static_cast<std::size_t>(t * 3 * kHidden + kHidden + hd * kHeadDim + d)];
          }
        }
      }
      std::vector<float> scores(static_cast<std::size_t>(kHeads * tokens * tokens));
      tunekit::gemm_strided_batched('t', 'n', tokens, tokens, kHeadDim, 0.125f, k.data(), kHeadDim,
                                    tokens * kHeadDim, q.data(), kHeadDim, tokens * kHeadDim, 0.0f,
                                    scores.data(), tokens, tokens * tokens, kHeads);
      linear(x, w_out, b_out, attn_out, tokens, kHidden, kHidden);
      linear(attn_out, w_up, b_up, up, tokens, kHidden, kFfn);
      for (float& v : up) v = v > 0 ? v : 0;  // ReLU
      linear(up, w_down, b_down, down, tokens, kFfn, kHidden);
      gemms += 5;
      for (float v : down) checksum += v;
      for (float v : scores) checksum += v;
    }
    tunekit::TuningContext& ctx = tunekit::tuning_context();
    std::printf("ran %d GEMMs (%zu results in memory); checksum %.6f\n", gemms,
                ctx.get_results().size(), checksum);
    if (ctx.is_record_untuned_enabled()) {
      std::printf("untuned problems recorded in %s; tune them with:\n  tunekit tune-file %s\n",
                  ctx.untuned_filename().c_str(), ctx.untuned_filename().c_str());
    } else {
      std::printf("results file: %s\n", ctx.filename().c_str());
    }
    return std::isfinite(checksum) ? 0 : 1;
  } catch (const tunekit::Error& e) {
    std::fprintf(stderr, "example: %s\n", e.status().to_string().c_str());
    return 1;
  }
}
