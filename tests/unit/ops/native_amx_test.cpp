// Tests of the bf16 GEMM through AMX tiles (src/ops/native_amx.inc) on the software model of the
// tile registers (amx_model_kernels.cpp): every layout, edge tiles, odd and short k, several
// depth, row and column rounds, alpha and beta, both orders, 1-3 threads through each driver
// path, constant (packed) weights; NaN in every operand's padding and in C with beta 0. On a
// CPU with AMX the same route also runs natively (NativeGemm tests of bf16 problems).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "amx_tile_model.hpp"
#include "ops/native_kernels.hpp"
#include "tunekit/core/hardware.hpp"

namespace tunekit::test {
const ops::detail::NativeBf16Kernels& amx_model_route();
}

namespace tunekit::ops::detail {
namespace {

std::uint16_t to_bf16(float x) {  // round to nearest even
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return static_cast<std::uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

double value(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &wide, 4);
  return x;
}

constexpr std::uint16_t kBf16NaN = 0x7FC0;

struct Shape {
  char ta, tb;
  std::int64_t m, n, k;
  float alpha, beta;
};

// The operands of one problem with padded leading dimensions: random bf16 values, NaN in the
// padding rows of A and B, and in C where beta is 0 (C must not be read then); c0 is C before.
struct Operands {
  std::int64_t lda, ldb, ldc;
  std::vector<std::uint16_t> a, b;
  std::vector<float> c, c0;
};

Operands make_operands(const Shape& s, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Operands o{(s.ta == 'n' ? s.m : s.k) + 3, (s.tb == 'n' ? s.k : s.n) + 1, s.m + 2, {}, {}, {}, {}};
  auto operand = [&](std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    std::vector<std::uint16_t> x(static_cast<std::size_t>(ld * cols));
    for (std::int64_t j = 0; j < cols; ++j) {
      for (std::int64_t i = 0; i < ld; ++i)
        x[i + j * ld] = i < rows ? to_bf16(dist(gen)) : kBf16NaN;
    }
    return x;
  };
  o.a = s.ta == 'n' ? operand(s.m, s.k, o.lda) : operand(s.k, s.m, o.lda);
  o.b = s.tb == 'n' ? operand(s.k, s.n, o.ldb) : operand(s.n, s.k, o.ldb);
  o.c.resize(static_cast<std::size_t>(o.ldc * s.n));
  for (std::size_t i = 0; i < o.c.size(); ++i) {
    const bool inside = static_cast<std::int64_t>(i) % o.ldc < s.m;
    o.c[i] = s.beta == 0.0f && inside ? NAN : dist(gen);
  }
  o.c0 = o.c;
  return o;
}

// The largest error of o.c against a double reference, or infinity when C's padding rows
// changed or C holds a NaN.
double largest_error(const Shape& s, const Operands& o) {
  double worst = 0;
  for (std::int64_t j = 0; j < s.n; ++j) {
    for (std::int64_t i = 0; i < o.ldc; ++i) {
      const float got = o.c[i + j * o.ldc];
      if (i >= s.m) {
        if (std::memcmp(&got, &o.c0[i + j * o.ldc], 4) != 0) return INFINITY;
        continue;
      }
      double sum = 0;
      for (std::int64_t q = 0; q < s.k; ++q) {
        sum += value(s.ta == 'n' ? o.a[i + q * o.lda] : o.a[q + i * o.lda]) *
               value(s.tb == 'n' ? o.b[q + j * o.ldb] : o.b[j + q * o.ldb]);
      }
      const double beta_c = s.beta == 0.0f ? 0.0 : s.beta * o.c0[i + j * o.ldc];
      const double diff = std::abs(got - (s.alpha * sum + beta_c));
      if (std::isnan(diff)) return INFINITY;
      worst = std::max(worst, diff);
    }
  }
  return worst;
}

// One problem through the AMX route (A packed first with `constant_a`): largest_error, or
// infinity when the route refused it.
double run_problem(const Shape& s, const NativeBlocking& b, bool constant_a, unsigned seed) {
  Operands o = make_operands(s, seed);
  const NativeBf16Call call{s.ta,       s.tb,  s.m,        s.n,   s.k,        s.alpha, s.beta,
                            o.a.data(), o.lda, o.b.data(), o.ldb, o.c.data(), o.ldc};
  const NativeBf16Kernels& route = test::amx_model_route();
  std::vector<float> packed;
  if (constant_a) {
    packed.resize(route.packed_a_words(s.m, s.k, b));
    if (!route.pack_a(call, b, packed.data())) return INFINITY;
  }
  if (!route.gemm(call, b, constant_a ? packed.data() : nullptr)) return INFINITY;
  return largest_error(s, o);
}

TEST(NativeAmx, TheTileRouteMatchesADoubleReferenceOnEveryLayoutAndDriverPath) {
  if (hw::host_cpu().x86_level() < hw::X86Level::kV3) GTEST_SKIP() << "the model build needs AVX2";
  const NativeBf16Kernels& route = test::amx_model_route();
  ASSERT_EQ(route.tile_count, 1);
  EXPECT_EQ(route.tiles[0].mr, 32);
  EXPECT_EQ(route.tiles[0].nr, 32);
  test::amx_model::reset();
  struct Case {
    std::int64_t m, n, k;
    int kc, mc, nc, threads;
    NativeOrder order;
    float alpha, beta;
    bool constant_a;
  };
  // Edge tiles in both dimensions; k odd, short (1 and 31: one partial tile of steps) and
  // across several depth rounds; several row and column rounds; whole tiles with alpha 1 and
  // beta 0 or 1 (stored straight into C) and through the buffer; claimed blocks, shared blocks
  // (few blocks per thread) and the whole-K driver (threads > 1, n <= nc, k > kc).
  const Case cases[] = {
      {70, 45, 77, 32, 64, 64, 1, NativeOrder::kJI, 1.5f, 0.0f, false},
      {64, 64, 128, 64, 32, 32, 1, NativeOrder::kIJ, 1.0f, 0.0f, false},
      {64, 64, 96, 32, 64, 64, 1, NativeOrder::kJI, 1.0f, 1.0f, true},
      {33, 31, 1, 32, 32, 32, 1, NativeOrder::kJI, 1.0f, 0.5f, false},
      {95, 40, 31, 64, 64, 96, 2, NativeOrder::kIJ, 0.75f, 0.0f, true},
      {256, 40, 200, 64, 32, 64, 2, NativeOrder::kJI, 1.0f, 0.25f, false},
      {256, 48, 130, 64, 32, 64, 3, NativeOrder::kIJ, 1.0f, 0.0f, true},
      {40, 100, 65, 32, 64, 32, 3, NativeOrder::kJI, 1.0f, 1.0f, false},
      // Shared blocks packed in turn whose depth round is short (k = 8; the last of 66 is 2):
      // the packed block has more steps than depths.
      {96, 200, 8, 256, 32, 256, 3, NativeOrder::kJI, 1.0f, 0.0f, false},
      {75, 70, 66, 64, 64, 64, 4, NativeOrder::kIJ, 1.0f, 0.5f, false},
  };
  int index = 0;
  for (const Case& t : cases) {
    for (const char* layout : {"nn", "nt", "tn", "tt"}) {
      const Shape s{layout[0], layout[1], t.m, t.n, t.k, t.alpha, t.beta};
      const NativeBlocking b{32, 32, t.kc, t.mc, t.nc, t.order, t.threads};
      const double error = run_problem(s, b, t.constant_a, 17u + index);
      EXPECT_LE(error, 1e-5 * static_cast<double>(t.k + 1))
          << "case " << index << " layout " << layout << " (" << t.m << "x" << t.n << "x" << t.k
          << ", threads " << t.threads << ")";
    }
    ++index;
  }
  const test::amx_model::Counters seen = test::amx_model::counters();
  EXPECT_EQ(seen.violations, 0) << seen.first_violation;
  EXPECT_GT(seen.dots, 0);
  EXPECT_GT(seen.configs, 0);
  EXPECT_EQ(seen.configs, seen.releases) << "every thread releases the tiles it configured";
}

TEST(NativeAmx, TheRouteRefusesTilesItHasNoKernelFor) {
  if (hw::host_cpu().x86_level() < hw::X86Level::kV3) GTEST_SKIP() << "the model build needs AVX2";
  std::vector<std::uint16_t> a(64, 0), b(64, 0);
  std::vector<float> c(64, 0.0f);
  const NativeBf16Call call{'n', 'n', 8, 8, 8, 1.0f, 0.0f, a.data(), 8, b.data(), 8, c.data(), 8};
  const NativeBlocking vector_tile{16, 6, 32, 32, 36, NativeOrder::kJI, 1};
  EXPECT_FALSE(test::amx_model_route().gemm(call, vector_tile, nullptr));
}

}  // namespace
}  // namespace tunekit::ops::detail
