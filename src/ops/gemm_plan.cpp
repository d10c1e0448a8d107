// plan_gemm_candidates(): the per-CPU rules that decide the GEMM candidate list (a pure function;
// tests/unit/ops/gemm_plan_test.cpp checks it for the Intel, Zen 4 and Zen 3 fixtures).
#include "tunekit/ops/gemm_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "ops/gemm_internal.hpp"
#include "ops/wheel_library.hpp"

namespace tunekit::ops {
namespace {

using hw::CpuInfo;
using hw::X86Level;

// ---------------------------------------------------------------------------------------------
// BLIS: the configurations offered per CPU, first matching rule wins.

bool intel_avx512(const CpuInfo& c) {
  return c.is_intel() && c.has_all({"avx512f", "avx512dq", "avx512bw", "avx512vl", "fma"});
}
bool amd_family_25(const CpuInfo& c) {
  return c.is_amd() && c.family == 25 && c.has_all({"avx2", "fma"});
}
bool avx2_fma(const CpuInfo& c) { return c.has_all({"avx2", "fma"}); }

struct BlisRule {
  bool (*applies)(const CpuInfo&);
  std::array<std::string_view, 2> archs;  // empty entries unused
};

// Source: docs/candidates.md, "Candidates per CPU".
//  * Intel with AVX-512 (measured on the family 6 model 207 Xeon): skx wins the large and K=64
//    problems by 1.2-1.45x, haswell the 1-token and 64^3 ones; BLIS itself picks haswell there.
//  * AMD family 25 (Zen 3 and Zen 4): zen3 only, what BLIS 0.9 picks for every family-25 model.
//    On the Zen 3 it led haswell by 1.06-1.3x at 1 and 16 tokens and was never more than 4%
//    behind haswell, zen2 or zen elsewhere. skx is never offered on AMD: 3-12x slower than
//    haswell on the AMD EPYC Zen 4 (measured).
//  * any other CPU with AVX2+FMA: haswell, what BLIS 0.9 picks for Intel AVX2 CPUs.
constexpr BlisRule kBlisRules[] = {
    {intel_avx512, {"skx", "haswell"}},
    {amd_family_25, {"zen3", ""}},
    {avx2_fma, {"haswell", ""}},
};

std::vector<std::string> planned_blis_archs(const CpuInfo& cpu) {
  for (const BlisRule& rule : kBlisRules) {
    if (!rule.applies(cpu)) continue;
    std::vector<std::string> archs;
    for (std::string_view a : rule.archs) {
      if (!a.empty()) archs.emplace_back(a);
    }
    return archs;
  }
  return {};
}

std::vector<std::string> split_names(std::string_view text) {
  std::vector<std::string> names;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) names.emplace_back(name);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return names;
}

// TUNEKIT_BLIS_ARCHS: known, runnable here, unique, at most kMaxBlisCopies; a warning per drop.
std::vector<std::string> requested_blis_archs(const CpuInfo& cpu, std::string_view text,
                                              std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  for (const std::string& name : split_names(text)) {
    const detail::BlisArch* arch = detail::find_blis_arch(name);
    if (arch == nullptr) {
      warnings.push_back(fmt::format(
          "TUNEKIT_BLIS_ARCHS: '{}' is not a BLIS 0.9 x86_64 configuration; ignored", name));
    } else if (!arch->runs_on(cpu)) {
      warnings.push_back(fmt::format(
          "TUNEKIT_BLIS_ARCHS: this CPU cannot run BLIS's '{}' kernels; ignored", name));
    } else if (std::find(out.begin(), out.end(), name) != out.end()) {
      continue;
    } else if (out.size() == detail::kMaxBlisCopies) {
      warnings.push_back(
          fmt::format("TUNEKIT_BLIS_ARCHS: at most {} BLIS copies (static TLS); '{}' ignored",
                      detail::kMaxBlisCopies, name));
    } else {
      out.push_back(name);
    }
  }
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// ---------------------------------------------------------------------------------------------
// OpenBLAS: a second copy forced to a core that measurably beats the one the linked copy runs.

// Cores of the same ISA level that were measured faster than the linked one (lower-case linked
// core -> OPENBLAS_CORETYPE). Source: docs/candidates.md, "Candidates per CPU": on the Zen 3,
// 0.3.21's Haswell core ran small GEMMs (32^3-128^3) 1.1-1.4x faster than its Zen core on one
// thread (the same float kernels; the copy routines differ) and beat dnnl_sgemm at 32^3.
struct CoreAlternative {
  std::string_view linked;
  std::string_view offered;
};
constexpr CoreAlternative kMeasuredAlternatives[] = {{"zen", "Haswell"}};

std::optional<std::string> planned_openblas_core(const CpuInfo& cpu, std::string_view linked) {
  const X86Level level = cpu.x86_level();
  // The best core of the CPU's level, when the linked OpenBLAS runs a core of a lower one (0.3.21
  // falls back to Prescott on CPUs it does not know, such as the model-207 Xeon).
  const char* best = level >= X86Level::kV4   ? "SkylakeX"
                     : level >= X86Level::kV3 ? "Haswell"
                                              : nullptr;
  if (best != nullptr && detail::openblas_core_level(best) > detail::openblas_core_level(linked)) {
    return std::string(best);
  }
  for (const CoreAlternative& alt : kMeasuredAlternatives) {
    if (alt.linked == lower(std::string(linked)) &&
        level >= detail::openblas_core_level(alt.offered)) {
      return std::string(alt.offered);
    }
  }
  return std::nullopt;  // e.g. Zen 4 runs Cooperlake: nothing better to add
}

void add(GemmPlan& plan, std::string name, GemmFamily family, std::string setting = {}) {
  plan.candidates.push_back({std::move(name), family, std::move(setting)});
}

// ---------------------------------------------------------------------------------------------
// The wheels' candidates: left out where measured never to win (first matching rule).

bool amd_zen4(const CpuInfo& c) { return amd_family_25(c) && c.has("avx512f"); }
bool not_intel(const CpuInfo& c) { return !c.is_intel(); }

struct WheelLeftOut {
  GemmFamily family;
  bool (*applies)(const CpuInfo&);
  std::string_view reason;
};

// Source: docs/candidates.md, "Measured rates" (tunekit compare --all, AMD EPYC Zen 4, 2 threads).
constexpr WheelLeftOut kWheelLeftOut[] = {
    {GemmFamily::kMklJit, not_intel,
     "MKL generates JIT GEMM kernels on Intel CPUs only (MKL_NO_JIT on AMD)"},
    {GemmFamily::kMkl, amd_zen4,
     "not offered on AMD Zen 4: 1.16-3.9x the fastest candidate's time on every Llama-2-7B "
     "float problem (docs/candidates.md)"},
    {GemmFamily::kScipyOpenblas, amd_zen4,
     "not offered on AMD Zen 4: never ahead of the fastest candidate on the Llama-2-7B problems, "
     "up to 4x behind at 1 token, no bf16 GEMM (docs/candidates.md)"},
};

std::string_view left_out_reason(GemmFamily family, const CpuInfo& cpu) {
  for (const WheelLeftOut& rule : kWheelLeftOut) {
    if (rule.family == family && rule.applies(cpu)) return rule.reason;
  }
  return {};
}

// Adds a wheel's candidate, or notes it as absent with the reason: the build's, the CPU's
// (kWheelLeftOut) or `missing` (the library cannot be found).
void add_wheel(GemmPlan& plan, const CpuInfo& cpu, const GemmBuildFacts& build, std::string name,
               GemmFamily family, const std::string& missing) {
  if (const std::string_view reason = left_out_reason(family, cpu); !reason.empty()) {
    plan.absent.push_back({std::move(name), std::string(reason)});
  } else if (!build.namespaces) {
    plan.absent.push_back({std::move(name), "RTLD_DEEPBIND does not work under AddressSanitizer"});
  } else if (missing.empty()) {
    add(plan, std::move(name), family);
  } else {
    plan.absent.push_back({std::move(name), missing});
  }
}

}  // namespace

std::vector<std::string> GemmPlan::names() const {
  std::vector<std::string> out;
  for (const auto& c : candidates) out.push_back(c.name);
  return out;
}

bool GemmPlan::offers(GemmFamily family) const {
  return std::any_of(candidates.begin(), candidates.end(),
                     [&](const PlannedGemmCandidate& c) { return c.family == family; });
}

std::vector<std::string> GemmPlan::settings(GemmFamily family) const {
  std::vector<std::string> out;
  for (const auto& c : candidates) {
    if (c.family == family) out.push_back(c.setting);
  }
  return out;
}

GemmBuildFacts this_build() {
  GemmBuildFacts facts;
  facts.openblas_core = openblas_core_name();
  facts.namespaces = !TUNEKIT_OPS_ASAN;
  if (const char* env = std::getenv("TUNEKIT_BLIS_ARCHS")) facts.blis_archs = env;
  facts.mkl_missing = detail::wheel_missing(detail::kMklLibrary);
  facts.scipy_openblas_missing = detail::wheel_missing(detail::kScipyOpenblasLibrary);
  facts.onednn3_missing =
      detail::onednn3_built()
          ? detail::wheel_missing(detail::kOnednn3Library)
          : "tunekit was built without oneDNN 3's headers (pip install onednn-devel, reconfigure)";
  return facts;
}

GemmPlan plan_gemm_candidates(const hw::CpuInfo& cpu, const GemmBuildFacts& build) {
  GemmPlan plan;
  add(plan, "Default", GemmFamily::kOpenblasDefault);
  if (build.namespaces) {
    if (auto core = planned_openblas_core(cpu, build.openblas_core)) {
      add(plan, fmt::format("openblas[core={}]", lower(*core)), GemmFamily::kOpenblasCore, *core);
    }
    const std::vector<std::string> archs =
        build.blis_archs.find_first_not_of(" ,") == std::string::npos
            ? planned_blis_archs(cpu)
            : requested_blis_archs(cpu, build.blis_archs, plan.warnings);
    for (const std::string& arch : archs) {
      add(plan, fmt::format("blis[arch={}]", arch), GemmFamily::kBlis, arch);
    }
  }
  const X86Level level = cpu.x86_level();
  if (level >= X86Level::kV3) {
    add(plan, "eigen", GemmFamily::kEigen,
        std::string(hw::x86_level_name(std::min(level, X86Level::kV4))));
  }
  add(plan, "onednn_matmul", GemmFamily::kOnednnMatmul);
  add(plan, "onednn_sgemm", GemmFamily::kOnednnSgemm);
  add(plan, "libxsmm", GemmFamily::kLibxsmm);
  add_wheel(plan, cpu, build, "scipy_openblas", GemmFamily::kScipyOpenblas,
            build.scipy_openblas_missing);
  add_wheel(plan, cpu, build, "onednn3_matmul", GemmFamily::kOnednn3Matmul, build.onednn3_missing);
  add_wheel(plan, cpu, build, "mkl", GemmFamily::kMkl, build.mkl_missing);
  add_wheel(plan, cpu, build, "mkl_jit", GemmFamily::kMklJit, build.mkl_missing);
  if (level >= X86Level::kV3) {
    add(plan, "native_f32", GemmFamily::kNativeGemm);
    add(plan, "native_decode_f32", GemmFamily::kNativeDecode);
    add(plan, "native_decode_bf16", GemmFamily::kNativeDecodeBf16);
  }
  return plan;
}

}  // namespace tunekit::ops
