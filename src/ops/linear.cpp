// Linear: constant-weights GEMM handle. See include/tunekit/ops/linear.hpp.
#include "tunekit/ops/linear.hpp"

#include <fmt/format.h>

#include <cmath>

#include "ops/gemm_internal.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/ops/gemm_plan.hpp"
#include "tunekit/ops/native_gemm.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/find_fastest.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit::ops {

/// One token count's (and leading dimensions') candidates and choice.
struct Linear::Plan {
  CandidateList<GemmParams> list;
  std::unique_ptr<Candidate<GemmParams>> instance;  // the winner when it is not in `list`
  Candidate<GemmParams>* chosen = nullptr;
  LinearChoice choice;
};

namespace {

constexpr std::int64_t kMaxFeatures = (std::int64_t{1} << 31) - 1;

// kInvalidArgument "Linear: <what>".
Status bad_linear_argument(const std::string& what) {
  return Status(StatusCode::kInvalidArgument, "Linear: " + what);
}

// The library candidates that pack constant weights once: name, factory (a fresh instance packs
// the caller's weights on its first run) and the plain family whose place in the plan
// (plan_gemm_candidates: the library is usable and was not measured slower on this CPU) decides
// whether it is offered.
struct ConstantFamily {
  std::string_view name;
  std::unique_ptr<GemmCandidate> (*make)();
  GemmFamily plain;
};
constexpr ConstantFamily kConstantFamilies[] = {
    {"onednn_matmul[constant_b]",
     [] { return detail::make_onednn_matmul(detail::OnednnWeights::kConstant); },
     GemmFamily::kOnednnMatmul},
    {"onednn3_matmul[constant_b]",
     [] { return detail::make_onednn3_matmul(detail::OnednnWeights::kConstant); },
     GemmFamily::kOnednn3Matmul},
    {"mkl[constant_b]", [] { return detail::make_mkl_constant(); }, GemmFamily::kMkl},
};

// Default, then the candidates that pack constant weights once, then the decode kernels of
// the weights' dtype.
CandidateList<GemmParams> constant_candidates(DType dtype) {
  CandidateList<GemmParams> list;
  list.push_back(detail::make_openblas_default());
  for (auto& c : detail::constant_weight_libraries()) list.push_back(std::move(c));
  list.push_back(make_native_gemm_template(/*constant_a=*/true));
  list.push_back(make_native_decode_template(dtype));
  return list;
}

std::string_view dtype_word(DType dtype) { return has_bf16_inputs(dtype) ? "bf16" : "float"; }

// A fresh copy of the winner `name` (slot `index` of `list`) when it packs the weights, so that
// its pack comes from the caller's weights and its cost can be timed; null otherwise.
std::unique_ptr<Candidate<GemmParams>> fresh_packing_copy(CandidateList<GemmParams>& list,
                                                          std::size_t index,
                                                          const std::string& name) {
  for (const ConstantFamily& f : kConstantFamilies) {
    if (f.name == name) return f.make();
  }
  if (name.rfind(std::string(kNativeGemmFamily) + "[", 0) != 0) return nullptr;
  auto* family = as_template(*list[index]);
  if (family == nullptr) return nullptr;
  auto made = family->from_name(name);
  return made ? std::move(*made) : nullptr;
}

// ms of one run of `c` on `p`.
Expected<double> timed_run(Candidate<GemmParams>& c, const GemmParams& p) {
  const std::int64_t start = now_ns();
  TUNEKIT_RETURN_IF_ERROR(c.run(p));
  return elapsed_ms(start, now_ns());
}

}  // namespace

namespace detail {

std::vector<std::unique_ptr<GemmCandidate>> constant_weight_libraries() {
  std::vector<std::unique_ptr<GemmCandidate>> out;
  const GemmPlan plan = plan_gemm_candidates(hw::cpu(), this_build());
  for (const ConstantFamily& f : kConstantFamilies) {
    if (plan.offers(f.plain)) out.push_back(f.make());
  }
  return out;
}

}  // namespace detail

Linear::Linear(std::int64_t out_features, std::int64_t in_features, const void* weights,
               std::int64_t ld_w, DType dtype)
    : out_(out_features), in_(in_features), ld_w_(ld_w), weights_(weights), dtype_(dtype) {}

Linear::~Linear() = default;

Expected<std::unique_ptr<Linear>> Linear::create(std::int64_t out_features,
                                                 std::int64_t in_features, const float* weights,
                                                 std::int64_t ld_w) {
  return create_of(out_features, in_features, weights, ld_w, DType::kFloat);
}

Expected<std::unique_ptr<Linear>> Linear::create(std::int64_t out_features,
                                                 std::int64_t in_features, const BFloat16* weights,
                                                 std::int64_t ld_w) {
  return create_of(out_features, in_features, weights, ld_w, DType::kBFloat16Float);
}

Expected<std::unique_ptr<Linear>> Linear::create_of(std::int64_t out_features,
                                                    std::int64_t in_features, const void* weights,
                                                    std::int64_t ld_w, DType dtype) {
  if (out_features < 1 || out_features > kMaxFeatures) {
    return bad_linear_argument(
        fmt::format("out_features must be in [1, {}], got {}", kMaxFeatures, out_features));
  }
  if (in_features < 1 || in_features > kMaxFeatures) {
    return bad_linear_argument(
        fmt::format("in_features must be in [1, {}], got {}", kMaxFeatures, in_features));
  }
  if (ld_w < in_features || ld_w > kMaxFeatures) {
    return bad_linear_argument(fmt::format("ld_w must be in [in_features = {}, {}], got {}",
                                           in_features, kMaxFeatures, ld_w));
  }
  if (weights == nullptr) return bad_linear_argument("weights is null");
  return std::unique_ptr<Linear>(new Linear(out_features, in_features, weights, ld_w, dtype));
}

GemmParams Linear::params(std::int64_t tokens, const void* x, std::int64_t ld_x, float* y,
                          std::int64_t ld_y, float alpha, float beta) const {
  GemmParams p;
  p.dtype = dtype_;
  p.transa = 't';
  p.transb = 'n';
  p.m = out_;
  p.n = tokens;
  p.k = in_;
  p.lda = ld_w_;
  p.ldb = ld_x;
  p.ldc = ld_y;
  p.alpha = alpha;
  p.beta = beta;
  p.a = weights_;
  p.b = x;
  p.c = y;
  return p;
}

Status Linear::forward(std::int64_t tokens, const float* x, std::int64_t ld_x, float* y,
                       std::int64_t ld_y, float alpha, float beta) {
  return forward_of(tokens, x, DType::kFloat, ld_x, y, ld_y, alpha, beta);
}

Status Linear::forward(std::int64_t tokens, const BFloat16* x, std::int64_t ld_x, float* y,
                       std::int64_t ld_y, float alpha, float beta) {
  return forward_of(tokens, x, DType::kBFloat16Float, ld_x, y, ld_y, alpha, beta);
}

Status Linear::forward_of(std::int64_t tokens, const void* x, DType x_dtype, std::int64_t ld_x,
                          float* y, std::int64_t ld_y, float alpha, float beta) {
  if (x_dtype != dtype_) {
    return bad_linear_argument(
        fmt::format("x is {} but the weights are {}", dtype_word(x_dtype), dtype_word(dtype_)));
  }
  if (tokens == 0) return Status::ok();  // nothing to compute (as BLAS with n = 0)
  if (tokens < 0 || tokens > kMaxFeatures) {
    return bad_linear_argument(
        fmt::format("tokens must be in [0, {}], got {}", kMaxFeatures, tokens));
  }
  if (x == nullptr || y == nullptr)
    return bad_linear_argument(x == nullptr ? "x is null" : "y is null");
  if (ld_x < in_ || ld_x > kMaxFeatures) {
    return bad_linear_argument(
        fmt::format("ld_x must be in [in_features = {}, {}], got {}", in_, kMaxFeatures, ld_x));
  }
  if (ld_y < out_ || ld_y > kMaxFeatures) {
    return bad_linear_argument(
        fmt::format("ld_y must be in [out_features = {}, {}], got {}", out_, kMaxFeatures, ld_y));
  }
  const GemmParams p = params(tokens, x, ld_x, y, ld_y, alpha, beta);
  if (Status valid = p.validate(); !valid.is_ok()) {
    return Status(valid.code(), "Linear: " + valid.message());
  }
  auto chosen = plan_for(p);
  if (!chosen) return chosen.status();
  return (*chosen)->run(p);
}

Expected<Candidate<GemmParams>*> Linear::plan_for(const GemmParams& p) {
  std::lock_guard lock(mutex_);
  const std::array<std::int64_t, 3> key{p.n, p.ldb, p.ldc};
  auto it = plans_.find(key);
  if (it == plans_.end()) it = plans_.emplace(key, tune(p)).first;
  return it->second->chosen;
}

std::unique_ptr<Linear::Plan> Linear::tune(const GemmParams& p) {
  auto plan = std::make_unique<Plan>();
  plan->list = constant_candidates(dtype_);
  plan->chosen = plan->list[0].get();
  plan->choice.solution = "Default";
  TuningContext& ctx = tuning_context();
  auto settings = ctx.tuning_settings();
  if (!ctx.is_enabled() || !ctx.is_tuning_enabled() || !settings) return plan;
  const std::int64_t start = now_ns();
  const TuneReport report = find_fastest(p, plan->list, *settings, &plan->instance);
  if (!report.winner) {
    log::warn("Linear " + p.signature() + ": " + report.status.message() + "; using Default");
    return plan;
  }
  const std::string& name = report.candidates[*report.winner].name;
  plan->choice.solution = name;
  plan->choice.call_ms = report.winner_time_ms;
  plan->chosen = plan->instance ? plan->instance.get() : plan->list[*report.winner].get();
  if (auto fresh = fresh_packing_copy(plan->list, *report.winner, name)) {
    // Timed on a scratch output with beta 0: the pack happens in the first run.
    std::vector<float> scratch(static_cast<std::size_t>(p.ldc * p.n));
    GemmParams q = p;
    q.c = scratch.data();
    q.beta = 0.0;
    auto first = timed_run(*fresh, q);
    auto second = first ? timed_run(*fresh, q) : first;
    if (first && second) {
      plan->choice.pack_ms = std::max(0.0, *first - *second);
      plan->instance = std::move(fresh);
      plan->chosen = plan->instance.get();
    }
  }
  // Only the chosen candidate stays (the others may hold packed weights).
  if (plan->chosen != plan->list[0].get()) plan->list.resize(1);
  plan->choice.tuning_ms = elapsed_ms(start, now_ns());
  log::info(1, "Linear {}: {} ({:.4g} ms per call, weights packed in {:.4g} ms)", p.signature(),
            name, plan->choice.call_ms, plan->choice.pack_ms);
  return plan;
}

Expected<LinearChoice> Linear::choice(std::int64_t tokens) const {
  if (tokens < 0) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("Linear: tokens must be 0 or more, not {}", tokens));
  }
  std::lock_guard lock(mutex_);
  auto it = plans_.lower_bound({tokens, 0, 0});
  if (it == plans_.end() || it->first[0] != tokens) {
    return Status(StatusCode::kNotFound,
                  fmt::format("Linear: no forward() with {} tokens yet", tokens));
  }
  return it->second->choice;
}

}  // namespace tunekit::ops
