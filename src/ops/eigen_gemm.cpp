// The "eigen" candidate: Eigen 3 products on Eigen::Map views (OuterStride for leading
// dimensions), float and double, on CPUs with the AVX-512 level its kernels are compiled for.
#include <fmt/format.h>

#include "ops/gemm_internal.hpp"

namespace tunekit::ops::detail {

// Defined in eigen_kernels.cpp (compiled for x86-64-v4); call only when eigen_cpu_ok().
void eigen_gemm_f32(const GemmCall& call);
void eigen_gemm_f64(const GemmCall& call);
void eigen_set_threads(int threads);
std::string eigen_description();

namespace {

// Eigen picks its SIMD width at compile time. Built for the project's generic -march=x86-64
// (SSE2) it reached 10.5 GFLOP/s at 256^3 on one core, against 44-106 GFLOP/s for the same
// code built for AVX-512 (docs/candidates.md), so its kernels are compiled for x86-64-v4
// (AVX-512F/BW/CD/DQ/VL, AVX2, FMA) and offered only where the CPU has that level.
bool eigen_cpu_ok() { return __builtin_cpu_supports("x86-64-v4"); }

class EigenGemm final : public GemmCandidateBase {
 public:
  EigenGemm() : GemmCandidateBase("eigen", "eigen") {}

  Expected<LibraryBinding> binding() override {
    if (!eigen_cpu_ok()) return unsupported("this CPU lacks x86-64-v4 (AVX-512)");
    return describe_entry(reinterpret_cast<const void*>(&eigen_gemm_f32),
                          "tunekit::ops::detail::eigen_gemm_f32", eigen_description());
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (!eigen_cpu_ok()) {
      return unsupported(
          "Eigen kernels are compiled for x86-64-v4 (AVX-512), which this CPU "
          "lacks");
    }
    // Eigen 3.4 has Eigen::bfloat16 but no bf16 GEMM kernel: a bfloat16 product runs its
    // generic scalar path (4.6 GFLOP/s at 256^3 with AVX-512, docs/candidates.md).
    if (p.dtype == DType::kBFloat16) return unsupported("no bf16 GEMM kernel in Eigen 3.4");
    return Status::ok();
  }

  Status run_impl(const GemmParams& p) override {
    sync_main_threads();
    return run_as_gemm_calls(p, /*native_bf16=*/false, [](const GemmCall& c) {
      if (c.real == DType::kDouble) {
        eigen_gemm_f64(c);
      } else {
        eigen_gemm_f32(c);
      }
      return Status::ok();
    });
  }
};

}  // namespace

void set_eigen_threads(int threads) noexcept {
  if (eigen_cpu_ok()) eigen_set_threads(threads);
}

std::unique_ptr<GemmCandidate> make_eigen() { return std::make_unique<EigenGemm>(); }

}  // namespace tunekit::ops::detail
