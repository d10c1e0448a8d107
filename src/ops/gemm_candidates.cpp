// make_gemm_candidates(): the ordered GEMM candidate list of this machine (Default first), built
// from plan_gemm_candidates() for hw::cpu(). See include/tunekit/ops/gemm_candidates.hpp.
#include "tunekit/ops/gemm_candidates.hpp"

#include <mutex>
#include <set>

#include "ops/gemm_internal.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/ops/gemm_plan.hpp"
#include "tunekit/ops/native_gemm.hpp"

namespace tunekit::ops {
namespace {

using Factory = std::unique_ptr<GemmCandidate> (*)(const PlannedGemmCandidate&);

struct FamilyFactory {
  GemmFamily family;
  Factory make;
};

// One factory per family, in GemmFamily order.
constexpr FamilyFactory kFactories[] = {
    {GemmFamily::kOpenblasDefault,
     [](const PlannedGemmCandidate&) { return detail::make_openblas_default(); }},
    {GemmFamily::kOpenblasCore,
     [](const PlannedGemmCandidate& c) { return detail::make_openblas_core(c.setting); }},
    {GemmFamily::kBlis, [](const PlannedGemmCandidate& c) { return detail::make_blis(c.setting); }},
    {GemmFamily::kEigen, [](const PlannedGemmCandidate&) { return detail::make_eigen(); }},
    {GemmFamily::kOnednnMatmul,
     [](const PlannedGemmCandidate&) {
       return detail::make_onednn_matmul(detail::OnednnWeights::kPlain);
     }},
    {GemmFamily::kOnednnSgemm,
     [](const PlannedGemmCandidate&) { return detail::make_onednn_sgemm(); }},
    {GemmFamily::kLibxsmm, [](const PlannedGemmCandidate&) { return detail::make_libxsmm(); }},
    {GemmFamily::kScipyOpenblas,
     [](const PlannedGemmCandidate&) { return detail::make_scipy_openblas(); }},
    {GemmFamily::kOnednn3Matmul,
     [](const PlannedGemmCandidate&) {
       return detail::make_onednn3_matmul(detail::OnednnWeights::kPlain);
     }},
    {GemmFamily::kMkl, [](const PlannedGemmCandidate&) { return detail::make_mkl(); }},
    {GemmFamily::kMklJit, [](const PlannedGemmCandidate&) { return detail::make_mkl_jit(); }},
    {GemmFamily::kNativeGemm,
     [](const PlannedGemmCandidate&) { return make_native_gemm_template(); }},
    {GemmFamily::kNativeDecode,
     [](const PlannedGemmCandidate&) { return make_native_decode_template(); }},
    {GemmFamily::kNativeDecodeBf16,
     [](const PlannedGemmCandidate&) {
       return make_native_decode_template(DType::kBFloat16Float);
     }},
};

std::unique_ptr<GemmCandidate> make(const PlannedGemmCandidate& planned) {
  for (const FamilyFactory& f : kFactories) {
    if (f.family == planned.family) return f.make(planned);
  }
  return nullptr;
}

}  // namespace

namespace detail {

void warn_once(const std::vector<std::string>& warnings) {
  static std::mutex mutex;
  static std::set<std::string> issued;
  std::lock_guard lock(mutex);
  for (const std::string& w : warnings) {
    if (issued.insert(w).second) log::warn(w);
  }
}

}  // namespace detail

CandidateList<GemmParams> make_gemm_candidates() {
  const GemmPlan plan = plan_gemm_candidates(hw::cpu(), this_build());
  detail::warn_once(plan.warnings);
  CandidateList<GemmParams> list;
  for (const PlannedGemmCandidate& planned : plan.candidates) {
    if (auto c = make(planned)) list.push_back(std::move(c));
  }
  return list;
}

}  // namespace tunekit::ops
