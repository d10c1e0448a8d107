// The "eigen" candidate: Eigen 3 matrix products on Eigen::Map views (OuterStride for leading
// dimensions), float and double; Eigen parallelises its GEMM with the process's OpenMP.
#include <fmt/format.h>

#include <Eigen/Core>

#include "ops/gemm_internal.hpp"

namespace tunekit::ops::detail {

void set_eigen_threads(int threads) noexcept { Eigen::setNbThreads(threads); }

namespace {

template <class T>
void eigen_gemm(const GemmCall& c) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using ConstMap = Eigen::Map<const Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;
  using Map = Eigen::Map<Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;
  const bool an = c.transa == 'n', bn = c.transb == 'n';
  const ConstMap a(static_cast<const T*>(c.a), an ? c.m : c.k, an ? c.k : c.m,
                   Eigen::OuterStride<>(c.lda));
  const ConstMap b(static_cast<const T*>(c.b), bn ? c.k : c.n, bn ? c.n : c.k,
                   Eigen::OuterStride<>(c.ldb));
  Map out(static_cast<T*>(c.c), c.m, c.n, Eigen::OuterStride<>(c.ldc));
  const T alpha = static_cast<T>(c.alpha), beta = static_cast<T>(c.beta);
  // BLAS semantics: with beta == 0, C is not read (assignment, not scaling, so NaN is dropped).
  auto product = [&](auto&& lhs, auto&& rhs) {
    if (beta == T(0)) {
      out.noalias() = alpha * lhs * rhs;
    } else {
      if (beta != T(1)) out *= beta;
      out.noalias() += alpha * lhs * rhs;
    }
  };
  if (an && bn) {
    product(a, b);
  } else if (an) {
    product(a, b.transpose());
  } else if (bn) {
    product(a.transpose(), b);
  } else {
    product(a.transpose(), b.transpose());
  }
}

class EigenGemm final : public GemmCandidateBase {
 public:
  EigenGemm() : GemmCandidateBase("eigen", "eigen") {}

  Expected<LibraryBinding> binding() override {
    return describe_entry(reinterpret_cast<const void*>(&eigen_gemm<float>),
                          "tunekit::ops::detail::eigen_gemm<float>",
                          fmt::format("Eigen {}.{}.{} ({}), {} threads", EIGEN_WORLD_VERSION,
                                      EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
                                      Eigen::SimdInstructionSetsInUse(), Eigen::nbThreads()));
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    // Eigen 3.4 has Eigen::bfloat16 but no bf16 GEMM kernel: its products on bfloat16 run the
    // generic scalar path (measured ~1 GFLOP/s, docs/candidates.md), not a real choice.
    if (p.dtype == DType::kBFloat16) return unsupported("no bf16 GEMM kernel in Eigen 3.4");
    return Status::ok();
  }

  Status run_impl(const GemmParams& p) override {
    sync_main_threads();
    return run_as_gemm_calls(p, /*native_bf16=*/false, [](const GemmCall& c) {
      if (c.real == DType::kDouble) {
        eigen_gemm<double>(c);
      } else {
        eigen_gemm<float>(c);
      }
      return Status::ok();
    });
  }
};

}  // namespace

std::unique_ptr<GemmCandidate> make_eigen() { return std::make_unique<EigenGemm>(); }

}  // namespace tunekit::ops::detail
