// make_gemm_candidates(): the ordered GEMM candidate list of this machine (Default first).
// See include/tunekit/ops/gemm_candidates.hpp for what each candidate runs.
#include "tunekit/ops/gemm_candidates.hpp"

#include "ops/gemm_internal.hpp"

namespace tunekit::ops {

CandidateList<GemmParams> make_gemm_candidates() {
  CandidateList<GemmParams> list;
  list.push_back(detail::make_openblas_default());
  if (detail::openblas_core_offered("SkylakeX")) {
    list.push_back(detail::make_openblas_core("SkylakeX"));
  }
  for (const std::string& arch : blis_archs()) {
    if (auto blis = detail::make_blis(arch)) list.push_back(std::move(blis));
  }
  list.push_back(detail::make_eigen());
  list.push_back(detail::make_onednn_matmul(/*packed_weights=*/false));
  list.push_back(detail::make_onednn_sgemm());
  list.push_back(detail::make_libxsmm());
  return list;
}

}  // namespace tunekit::ops
