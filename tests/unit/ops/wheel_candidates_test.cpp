// Tests of the candidates from PyPI wheels (MKL, oneDNN 3, scipy-openblas32): locating and
// opening their libraries, each candidate running its own library beside Debian's, their version
// validators, and the constant-weights modes against the plain candidates.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ops/gemm_internal.hpp"
#include "ops/wheel_library.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/gemm_plan.hpp"
#include "tunekit/ops/threading.hpp"
#include "tunekit/tunable/context.hpp"

namespace tunekit::ops {
namespace {

// Skips the calling test when `lib` cannot be used here, saying why.
#define SKIP_WITHOUT(lib)                                   \
  do {                                                      \
    const std::string missing = detail::wheel_missing(lib); \
    if (!missing.empty()) GTEST_SKIP() << missing;          \
  } while (0)

TEST(WheelLibrary, TheVariableWinsAndAMissingFileIsNamed) {
  ::setenv("TUNEKIT_MKL_LIBRARY", "/nonexistent/libmkl_rt.so.3", 1);
  auto located = detail::locate_wheel_library(detail::kMklLibrary, {"/also/nonexistent"});
  ::unsetenv("TUNEKIT_MKL_LIBRARY");
  ASSERT_FALSE(located);
  EXPECT_EQ(located.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(located.status().message(),
            "TUNEKIT_MKL_LIBRARY=/nonexistent/libmkl_rt.so.3: no such file (MKL)");
  located = detail::locate_wheel_library(detail::kMklLibrary, {"/nonexistent"});
  ASSERT_FALSE(located);
  EXPECT_EQ(located.status().message(),
            "MKL not found (libmkl_rt.so.3 not in /nonexistent; pip install mkl and reconfigure, "
            "or set TUNEKIT_MKL_LIBRARY)");
}

TEST(WheelLibrary, NeededEntriesComeFromTheDynamicSection) {
  auto needed = detail::elf_needed("/proc/self/exe");
  ASSERT_TRUE(needed) << needed.status().to_string();
  EXPECT_NE(std::find(needed->begin(), needed->end(), "libc.so.6"), needed->end());
  const std::string text = ::testing::TempDir() + "/not_elf.so";
  std::ofstream(text) << "#!/bin/sh\n";
  EXPECT_EQ(detail::elf_needed(text).status().code(), StatusCode::kParseError);
  EXPECT_EQ(detail::elf_needed(::testing::TempDir() + "/absent.so").status().code(),
            StatusCode::kIoError);
  std::remove(text.c_str());
}

TEST(WheelLibrary, AnOpenedLibraryKeepsItsOwnSymbolsAndTheProgramKeepsOpenBlas) {
  SKIP_WITHOUT(detail::kMklLibrary);
  auto mkl = detail::make_mkl();
  auto binding = mkl->binding();
  ASSERT_TRUE(binding) << binding.status().to_string();
  EXPECT_NE(binding->file.find("libmkl_rt.so"), std::string::npos) << binding->file;
  EXPECT_EQ(binding->namespace_id, 0);  // the main namespace, symbols bound deep
  EXPECT_EQ(binding->detail.rfind("MKL 20", 0), 0u) << binding->detail;
  auto default_binding = detail::make_openblas_default()->binding();
  ASSERT_TRUE(default_binding);
  EXPECT_NE(default_binding->file.find("openblas"), std::string::npos) << default_binding->file;
}

TEST(WheelCandidates, ConstantWeightsMatchThePlainCandidateAndServeOneProblem) {
  set_num_threads(1);
  struct Mode {
    const detail::WheelLibrary* lib;
    std::unique_ptr<GemmCandidate> (*plain)();
    std::unique_ptr<GemmCandidate> (*constant)();
  };
  const Mode modes[] = {
      {&detail::kMklLibrary, [] { return detail::make_mkl(); },
       [] { return detail::make_mkl_constant(); }},
      {&detail::kOnednn3Library,
       [] { return detail::make_onednn3_matmul(detail::OnednnWeights::kPlain); },
       [] { return detail::make_onednn3_matmul(detail::OnednnWeights::kConstant); }},
  };
  int checked = 0;
  for (const Mode& mode : modes) {
    if (!detail::wheel_missing(*mode.lib).empty()) continue;
    auto plain = mode.plain();
    if (plain == nullptr) continue;  // built without oneDNN 3's headers
    for (const char* op : {"GemmTunableOp_float_TN", "GemmTunableOp_BFloat16_float_TN",
                           "GemmTunableOp_BFloat16_TN"}) {
      for (double alpha : {1.0, 0.5}) {
        auto shape = GemmParams::from_signature(op, "tn_72_9_40_ld_43_40_75");
        ASSERT_TRUE(shape) << shape.status().to_string();
        shape->alpha = alpha;
        auto ws = GemmWorkspace::create(*shape, 2, /*random_fill=*/true, 7);
        ASSERT_TRUE(ws);
        GemmParams p = (*ws)->bind(0), q = (*ws)->bind(1);
        // A bf16 C may round a sum a float rounding apart to the neighbouring bf16 value.
        const Tolerance t = p.dtype == DType::kBFloat16 ? p.default_tolerance() : Tolerance{};
        auto constant = mode.constant();
        for (int call = 0; call < 2; ++call) {  // the pack, then the packed weights reused
          ASSERT_TRUE(constant->run(p).is_ok()) << constant->name() << " " << op;
          ASSERT_TRUE(plain->run(q).is_ok()) << plain->name() << " " << op;
          EXPECT_TRUE(
              compare_gemm_output(p, q.c, p.c, std::max(t.atol, 1e-4), std::max(t.rtol, 1e-4))
                  .is_ok())
              << constant->name() << op;
        }
        GemmParams other = p;
        other.n = 4;
        EXPECT_EQ(constant->run(other).code(), StatusCode::kUnsupported) << constant->name();
        ++checked;
      }
    }
  }
  set_num_threads(0);
  if (checked == 0) GTEST_SKIP() << "neither the mkl nor the oneDNN 3 wheel is usable here";
}

TEST(WheelCandidates, EachLibraryHasItsVersionValidator) {
  TuningContext ctx;
  auto list = make_gemm_candidates();
  tunekit::register_gemm_validators(ctx, list);
  const auto values = ctx.validators().values();
  auto has = [&](const std::string& key) {
    return std::any_of(values.begin(), values.end(), [&](const auto& kv) {
      return kv.first == key && kv.second != "unknown" && kv.second != "unavailable";
    });
  };
  const GemmPlan plan = plan_gemm_candidates(hw::cpu(), this_build());
  const auto names = plan.names();
  auto offered = [&](const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  int checked = 0;
  for (auto [name, key] : {std::pair{"mkl", "MKL_VERSION"},
                           {"onednn3_matmul", "ONEDNN3_VERSION"},
                           {"scipy_openblas", "SCIPY_OPENBLAS_VERSION"}}) {
    if (!offered(name)) continue;
    EXPECT_TRUE(has(key)) << key;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no wheel library is offered here";
}

}  // namespace
}  // namespace tunekit::ops
