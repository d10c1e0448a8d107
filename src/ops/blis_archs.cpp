// The BLIS 0.9 sub-architectures tunekit knows (arch_t ids and the CPU features their kernels
// need) and blis_archs(), the configurations planned for this CPU.
#include <string_view>

#include "ops/gemm_internal.hpp"
#include "tunekit/ops/gemm_plan.hpp"

namespace tunekit::ops {
namespace detail {
namespace {

using hw::CpuInfo;

bool skx_features(const CpuInfo& c) {
  return c.has_all({"avx512f", "avx512dq", "avx512bw", "avx512vl", "fma"});
}
bool avx2_fma(const CpuInfo& c) { return c.has_all({"avx2", "fma"}); }
bool avx(const CpuInfo& c) { return c.has("avx"); }
bool ssse3(const CpuInfo& c) { return c.has("ssse3"); }
bool fma_avx(const CpuInfo& c) { return c.has_all({"fma", "avx"}); }
bool always(const CpuInfo&) { return true; }
bool never(const CpuInfo&) { return false; }

// Source: blis.h of BLIS 0.9.0 (Debian libblis-openmp-dev 0.9.0-1), `typedef enum { ... }
// arch_t`; configurations compiled into Debian's x86_64 build: BLIS_CONFIG_* in the same header.
// knl needs AVX512PF/ER and bulldozer FMA4 (both die with SIGILL on the project's machines); knc
// is not compiled in (BLIS aborts).
constexpr BlisArch kBlisArchs[] = {
    {"skx", 0, skx_features},     {"knl", 1, never},           {"haswell", 3, avx2_fma},
    {"sandybridge", 4, avx},      {"penryn", 5, ssse3},        {"zen3", 6, avx2_fma},
    {"zen2", 7, avx2_fma},        {"zen", 8, avx2_fma},        {"excavator", 9, fma_avx},
    {"steamroller", 10, fma_avx}, {"piledriver", 11, fma_avx}, {"bulldozer", 12, never},
    {"generic", 25, always},
};

}  // namespace

const BlisArch* find_blis_arch(std::string_view name) {
  for (const BlisArch& a : kBlisArchs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

}  // namespace detail

std::vector<std::string> blis_archs() {
  const GemmPlan plan = plan_gemm_candidates(hw::cpu(), this_build());
  detail::warn_once(plan.warnings);
  return plan.settings(GemmFamily::kBlis);
}

}  // namespace tunekit::ops
