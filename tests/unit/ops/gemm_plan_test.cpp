// Tests of plan_gemm_candidates(): the candidate lists of the project's three CPUs (fixtures in
// tests/data/cpu/) with the OpenBLAS core each one's linked OpenBLAS runs, the build facts
// (AddressSanitizer) and TUNEKIT_BLIS_ARCHS. Pure: the same answers on every machine.
#include "tunekit/ops/gemm_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tunekit/core/hardware.hpp"

namespace tunekit::ops {
namespace {

using Names = std::vector<std::string>;

hw::CpuInfo fixture(const std::string& name) {
  auto info = hw::load_cpu_fixture(std::string(TUNEKIT_TEST_DATA_DIR) + "/cpu/" + name + ".txt");
  EXPECT_TRUE(info) << info.status().to_string();
  return info ? *info : hw::CpuInfo{};
}

GemmBuildFacts build(std::string openblas_core, std::string blis_archs = {}) {
  GemmBuildFacts facts;
  facts.openblas_core = std::move(openblas_core);
  facts.blis_archs = std::move(blis_archs);
  return facts;
}

// The fixture's CPU without the flags of x86-64-v3 and above (an SSE4-only machine).
hw::CpuInfo without_avx(hw::CpuInfo info) {
  const Names drop = {"avx", "avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"};
  std::erase_if(info.flags, [&](const std::string& f) {
    return std::find(drop.begin(), drop.end(), f) != drop.end();
  });
  return info;
}

TEST(GemmPlan, IntelXeonWithAmxGetsTheSkylakeXCopyAndSkxPlusHaswell) {
  // OpenBLAS 0.3.21 does not know family 6 model 207 and runs its Prescott kernels there.
  const GemmPlan plan = plan_gemm_candidates(fixture("intel_xeon_amx"), build("Prescott"));
  EXPECT_EQ(plan.names(), (Names{"Default", "openblas[core=skylakex]", "blis[arch=skx]",
                                 "blis[arch=haswell]", "eigen", "onednn_matmul", "onednn_sgemm",
                                 "libxsmm", "scipy_openblas", "onednn3_matmul", "mkl", "mkl_jit",
                                 "native_f32", "native_decode_f32", "native_decode_bf16"}));
  EXPECT_EQ(plan.settings(GemmFamily::kOpenblasCore), Names{"SkylakeX"});
  EXPECT_EQ(plan.settings(GemmFamily::kEigen), Names{"x86-64-v4"});
  EXPECT_TRUE(plan.warnings.empty());
}

TEST(GemmPlan, AmdZen4GetsNoOpenBlasCopyAndNoSkx) {
  // OpenBLAS 0.3.21 runs its Cooperlake (AVX-512) kernels on Zen 4; BLIS's skx is 3-12x slower
  // than haswell there (measured), although the CPU could run it.
  const GemmPlan plan = plan_gemm_candidates(fixture("amd_zen4"), build("Cooperlake"));
  EXPECT_EQ(plan.names(), (Names{"Default", "blis[arch=zen3]", "eigen", "onednn_matmul",
                                 "onednn_sgemm", "libxsmm", "onednn3_matmul", "native_f32",
                                 "native_decode_f32", "native_decode_bf16"}));
  EXPECT_EQ(plan.settings(GemmFamily::kEigen), Names{"x86-64-v4"});
  EXPECT_TRUE(plan.warnings.empty());
  // MKL and the wheel's OpenBLAS were measured never to win there (docs/candidates.md), and MKL
  // makes no JIT kernels on AMD: each named with the reason.
  ASSERT_EQ(plan.absent.size(), 3u);
  EXPECT_EQ(plan.absent[0].name, "scipy_openblas");
  EXPECT_EQ(plan.absent[1].name, "mkl");
  EXPECT_EQ(plan.absent[2].name, "mkl_jit");
  EXPECT_NE(plan.absent[1].reason.find("Zen 4"), std::string::npos) << plan.absent[1].reason;
  EXPECT_TRUE(plan.offers(GemmFamily::kOnednn3Matmul));
  EXPECT_FALSE(plan.offers(GemmFamily::kMkl));
}

TEST(GemmPlan, AmdZen3GetsTheHaswellCopyZen3AndTheAvx2Eigen) {
  // OpenBLAS 0.3.21 runs its Zen core there; its Haswell core was faster on small GEMMs.
  const GemmPlan plan = plan_gemm_candidates(fixture("amd_zen3"), build("Zen"));
  EXPECT_EQ(plan.names(),
            (Names{"Default", "openblas[core=haswell]", "blis[arch=zen3]", "eigen", "onednn_matmul",
                   "onednn_sgemm", "libxsmm", "scipy_openblas", "onednn3_matmul", "mkl",
                   "native_f32", "native_decode_f32", "native_decode_bf16"}));
  EXPECT_EQ(plan.settings(GemmFamily::kOpenblasCore), Names{"Haswell"});
  EXPECT_EQ(plan.settings(GemmFamily::kBlis), Names{"zen3"});
  EXPECT_EQ(plan.settings(GemmFamily::kEigen), Names{"x86-64-v3"});
  EXPECT_TRUE(plan.warnings.empty());  // no warning about skx (the list is not an override)
}

TEST(GemmPlan, OpenBlasCopyWhereTheLinkedCoreIsOfALowerClassOrMeasuredSlower) {
  const hw::CpuInfo intel = fixture("intel_xeon_amx");
  for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids", "skylakex"}) {
    EXPECT_TRUE(
        plan_gemm_candidates(intel, build(core)).settings(GemmFamily::kOpenblasCore).empty())
        << core;
  }
  EXPECT_EQ(plan_gemm_candidates(intel, build("Haswell")).settings(GemmFamily::kOpenblasCore),
            Names{"SkylakeX"});
  // An AVX2 CPU whose OpenBLAS fell back to an SSE core gets the Haswell kernels.
  const hw::CpuInfo zen3 = fixture("amd_zen3");
  EXPECT_EQ(plan_gemm_candidates(zen3, build("Prescott")).names().at(1), "openblas[core=haswell]");
  EXPECT_TRUE(
      plan_gemm_candidates(zen3, build("Haswell")).settings(GemmFamily::kOpenblasCore).empty());
}

TEST(GemmPlan, WithoutNamespacesThereAreNoLibraryCopies) {
  GemmBuildFacts asan = build("Prescott", "haswell,zen3");
  asan.namespaces = false;
  const GemmPlan plan = plan_gemm_candidates(fixture("intel_xeon_amx"), asan);
  EXPECT_EQ(plan.names(), (Names{"Default", "eigen", "onednn_matmul", "onednn_sgemm", "libxsmm",
                                 "native_f32", "native_decode_f32", "native_decode_bf16"}));
  EXPECT_TRUE(plan.warnings.empty());
  ASSERT_EQ(plan.absent.size(), 4u);  // the wheels need RTLD_DEEPBIND (on Intel: all four)
  EXPECT_EQ(plan.absent[0].name, "scipy_openblas");
  EXPECT_EQ(plan.absent[0].reason, "RTLD_DEEPBIND does not work under AddressSanitizer");
}

TEST(GemmPlan, WheelsThatCannotBeFoundAreNamedWithTheReason) {
  GemmBuildFacts facts = build("Zen");
  facts.mkl_missing = "MKL not found (libmkl_rt.so.3 not in /x; pip install mkl)";
  facts.onednn3_missing = "no headers";
  const GemmPlan plan = plan_gemm_candidates(fixture("amd_zen3"), facts);
  EXPECT_EQ(plan.names(), (Names{"Default", "openblas[core=haswell]", "blis[arch=zen3]", "eigen",
                                 "onednn_matmul", "onednn_sgemm", "libxsmm", "scipy_openblas",
                                 "native_f32", "native_decode_f32", "native_decode_bf16"}));
  ASSERT_EQ(plan.absent.size(), 3u);
  EXPECT_EQ(plan.absent[0].name, "onednn3_matmul");
  EXPECT_EQ(plan.absent[0].reason, "no headers");
  EXPECT_EQ(plan.absent[1].name, "mkl");
  EXPECT_EQ(plan.absent[1].reason, facts.mkl_missing);
  EXPECT_EQ(plan.absent[2].name, "mkl_jit");  // never on AMD, whatever the wheel
}

TEST(GemmPlan, CpusWithoutAvx2GetNeitherBlisNorEigen) {
  const GemmPlan plan = plan_gemm_candidates(without_avx(fixture("amd_zen3")), build("Prescott"));
  EXPECT_EQ(plan.names(), (Names{"Default", "onednn_matmul", "onednn_sgemm", "libxsmm",
                                 "scipy_openblas", "onednn3_matmul", "mkl"}));
  EXPECT_EQ(plan.absent.size(), 1u);  // mkl_jit: not an Intel CPU
}

TEST(GemmPlan, BlisArchsVariableReplacesTheListAndNamesWhatItDrops) {
  const hw::CpuInfo zen3 = fixture("amd_zen3");
  const GemmPlan plan = plan_gemm_candidates(
      zen3, build("Zen", " zen, skx,knl ,bogus,zen2,zen,haswell,generic,zen3"));
  EXPECT_EQ(plan.settings(GemmFamily::kBlis), (Names{"zen", "zen2", "haswell", "generic"}));
  ASSERT_EQ(plan.warnings.size(), 4u);
  EXPECT_EQ(plan.warnings[0],
            "TUNEKIT_BLIS_ARCHS: this CPU cannot run BLIS's 'skx' kernels; ignored");
  EXPECT_EQ(plan.warnings[1],
            "TUNEKIT_BLIS_ARCHS: this CPU cannot run BLIS's 'knl' kernels; ignored");
  EXPECT_EQ(plan.warnings[2],
            "TUNEKIT_BLIS_ARCHS: 'bogus' is not a BLIS 0.9 x86_64 configuration; ignored");
  EXPECT_EQ(plan.warnings[3],
            "TUNEKIT_BLIS_ARCHS: at most 4 BLIS copies (static TLS); 'zen3' ignored");
  // skx is accepted where the CPU runs it, also on AMD when asked for.
  EXPECT_EQ(plan_gemm_candidates(fixture("amd_zen4"), build("Cooperlake", "skx"))
                .settings(GemmFamily::kBlis),
            Names{"skx"});
  // Blank or comma-only values leave the planned list.
  EXPECT_EQ(plan_gemm_candidates(zen3, build("Zen", " , ")).settings(GemmFamily::kBlis),
            Names{"zen3"});
}

TEST(GemmPlan, ThisProcessPlansForItsCpu) {
  // make_gemm_candidates() follows the plan for hw::cpu() and this build.
  const GemmPlan plan = plan_gemm_candidates(hw::cpu(), this_build());
  ASSERT_FALSE(plan.candidates.empty());
  EXPECT_EQ(plan.candidates.front().name, "Default");
  EXPECT_FALSE(this_build().openblas_core.empty());
}

}  // namespace
}  // namespace tunekit::ops
