// The "eigen" candidate: Eigen 3 products on Eigen::Map views (OuterStride for leading
// dimensions), float and double, with the kernels of the CPU's ISA build (x86-64-v4 or v3).
#include <fmt/format.h>

#include <algorithm>

#include "ops/eigen_kernels.hpp"
#include "ops/gemm_internal.hpp"

namespace tunekit::ops::detail {
namespace {

// Eigen picks its SIMD width at compile time. Built for the project's generic -march=x86-64
// (SSE2) it reached 10.5 GFLOP/s at 256^3 on one core of the Intel Xeon, against 44-106 GFLOP/s
// for the same code built for AVX-512 (docs/candidates.md), so its kernels are compiled twice,
// for x86-64-v4 (AVX-512) and x86-64-v3 (AVX2+FMA), and the build is chosen at run time.
//
// The build of the planned CPU's level (hw::cpu(); a test fixture can lower it), never above the
// level of the CPU this process runs on; nullptr below x86-64-v3.
const EigenKernels* kernels_for_this_cpu() {
  const hw::X86Level level = std::min(hw::cpu().x86_level(), hw::host_cpu().x86_level());
  if (level >= hw::X86Level::kV4) return &kEigenKernelsV4;
  if (level >= hw::X86Level::kV3) return &kEigenKernelsV3;
  return nullptr;
}

std::string missing_level_reason() {
  return fmt::format(
      "Eigen kernels are built for x86-64-v3 (AVX2, FMA) and x86-64-v4; this CPU "
      "({}) has neither",
      hw::host_cpu().describe());
}

class EigenGemm final : public GemmCandidateBase {
 public:
  EigenGemm() : GemmCandidateBase("eigen", "eigen"), kernels_(kernels_for_this_cpu()) {}

  Expected<LibraryBinding> binding() override {
    if (kernels_ == nullptr) return unsupported(missing_level_reason());
    return describe_entry(reinterpret_cast<const void*>(kernels_->gemm_f32),
                          "tunekit::ops::detail::eigen_gemm_f32", kernels_->describe());
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (kernels_ == nullptr) return unsupported(missing_level_reason());
    // Eigen 3.4 has Eigen::bfloat16 but no bf16 GEMM kernel: a bfloat16 product runs its
    // generic scalar path (4.6 GFLOP/s at 256^3 with AVX-512, docs/candidates.md).
    if (p.dtype == DType::kBFloat16) return unsupported("no bf16 GEMM kernel in Eigen 3.4");
    return Status::ok();
  }

  Status run_impl(const GemmParams& p) override {
    sync_main_threads();
    const EigenKernels& k = *kernels_;  // supports_impl() checked it
    return run_as_gemm_calls(p, /*native_bf16=*/false, [&k](const GemmCall& c) {
      if (c.real == DType::kDouble) {
        k.gemm_f64(c);
      } else {
        k.gemm_f32(c);
      }
      return Status::ok();
    });
  }

 private:
  const EigenKernels* kernels_;
};

}  // namespace

void set_eigen_threads(int threads) noexcept {
  // Each build has its own Eigen (and thread setting); set those this CPU can enter.
  const hw::X86Level host = hw::host_cpu().x86_level();
  for (const EigenKernels* k : {&kEigenKernelsV3, &kEigenKernelsV4}) {
    if (host >= k->level) k->set_threads(threads);
  }
}

std::unique_ptr<GemmCandidate> make_eigen() { return std::make_unique<EigenGemm>(); }

}  // namespace tunekit::ops::detail
