// The "eigen" candidate: Eigen 3 products on Eigen::Map views (OuterStride for leading
// dimensions), float and double, with the kernels of the CPU's ISA build (x86-64-v4 or v3).
#include <fmt/format.h>

#include <algorithm>

#include "ops/eigen_kernels.hpp"
#include "ops/gemm_internal.hpp"

namespace tunekit::ops::detail {
namespace {

/// One ISA build of the kernels and the x86-64 level it is compiled for (src/CMakeLists.txt).
struct EigenBuild {
  hw::X86Level level;
  const EigenKernels* kernels;
};
// Highest level first.
const EigenBuild kBuilds[] = {{hw::X86Level::kV4, &kEigenKernelsV4},
                              {hw::X86Level::kV3, &kEigenKernelsV3}};

// Eigen picks its SIMD width at compile time. Built for the project's generic -march=x86-64
// (SSE2) it reached 10.5 GFLOP/s at 256^3 on one core of the Intel Xeon, against 44-106 GFLOP/s
// for the same code built for AVX-512 (docs/candidates.md), so its kernels are compiled twice,
// for x86-64-v4 (AVX-512) and x86-64-v3 (AVX2+FMA), and the build is chosen at run time.
//
// The build of the planned CPU's level (hw::cpu(); a test fixture can lower it), never above the
// level of the CPU this process runs on; nullptr below x86-64-v3.
const EigenBuild* build_for_this_cpu() {
  const hw::X86Level level = std::min(hw::cpu().x86_level(), hw::host_cpu().x86_level());
  for (const EigenBuild& b : kBuilds) {
    if (level >= b.level) return &b;
  }
  return nullptr;
}

std::string missing_level_reason() {
  return fmt::format(
      "Eigen kernels are built for x86-64-v3 (AVX2, FMA) and x86-64-v4; this CPU "
      "({}) has neither",
      hw::host_cpu().describe());
}

// "Eigen 3.4.0 x86-64-v3 build (AVX SSE, SSE2, ...), 2 threads"
std::string describe(const EigenBuild& b) {
  const EigenBuildFacts f = b.kernels->facts();
  return fmt::format("Eigen {}.{}.{} {} build ({}), {} threads", f.world, f.major, f.minor,
                     hw::x86_level_name(b.level), f.simd, f.threads);
}

EigenCall eigen_call(const GemmCall& c) {
  EigenCall e;
  e.transa = c.transa;
  e.transb = c.transb;
  e.m = c.m;
  e.n = c.n;
  e.k = c.k;
  e.alpha = c.alpha;
  e.beta = c.beta;
  e.a = c.a;
  e.lda = c.lda;
  e.b = c.b;
  e.ldb = c.ldb;
  e.c = c.c;
  e.ldc = c.ldc;
  return e;
}

class EigenGemm final : public GemmCandidateBase {
 public:
  EigenGemm() : GemmCandidateBase("eigen", "eigen"), build_(build_for_this_cpu()) {}

  Expected<LibraryBinding> binding() override {
    if (build_ == nullptr) return unsupported(missing_level_reason());
    return describe_entry(reinterpret_cast<const void*>(build_->kernels->gemm_f32),
                          "tunekit::ops::detail::eigen_gemm_f32", describe(*build_));
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (build_ == nullptr) return unsupported(missing_level_reason());
    // Eigen 3.4 has Eigen::bfloat16 but no bf16 GEMM kernel: a bfloat16 product runs its
    // generic scalar path (4.6 GFLOP/s at 256^3 with AVX-512, docs/candidates.md).
    if (p.dtype == DType::kBFloat16Float) return unsupported("no bf16 GEMM kernel in Eigen 3.4");
    return Status::ok();
  }

  Status run_impl(const GemmParams& p) override {
    sync_main_threads();
    const EigenKernels& k = *build_->kernels;  // supports_impl() checked build_
    return run_as_gemm_calls(p, /*native_bf16=*/false, [&k](const GemmCall& c) {
      if (c.real == DType::kDouble) {
        k.gemm_f64(eigen_call(c));
      } else {
        k.gemm_f32(eigen_call(c));
      }
      return Status::ok();
    });
  }

 private:
  const EigenBuild* build_;
};

}  // namespace

void set_eigen_threads(int threads) noexcept {
  // Each build has its own Eigen (and thread setting); set those this CPU can enter.
  const hw::X86Level host = hw::host_cpu().x86_level();
  for (const EigenBuild& b : kBuilds) {
    if (host >= b.level) b.kernels->set_threads(threads);
  }
}

std::unique_ptr<GemmCandidate> make_eigen() { return std::make_unique<EigenGemm>(); }

}  // namespace tunekit::ops::detail
