// Eigen 3 GEMM kernels, the only translation unit that includes Eigen. It is compiled for
// x86-64-v4 (AVX-512; src/CMakeLists.txt) and entered only after a CPU check (eigen_gemm.cpp).
#include <fmt/format.h>

#include <Eigen/Core>

#include "ops/gemm_internal.hpp"

namespace tunekit::ops::detail {
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

}  // namespace

void eigen_gemm_f32(const GemmCall& call) { eigen_gemm<float>(call); }
void eigen_gemm_f64(const GemmCall& call) { eigen_gemm<double>(call); }
void eigen_set_threads(int threads) { Eigen::setNbThreads(threads); }
std::string eigen_description() {
  return fmt::format("Eigen {}.{}.{} ({}), {} threads", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                     EIGEN_MINOR_VERSION, Eigen::SimdInstructionSetsInUse(), Eigen::nbThreads());
}

}  // namespace tunekit::ops::detail
