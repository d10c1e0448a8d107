// Tiled single-precision matrix multiply, C = A * B (row-major, fp32), OpenMP.
//
// The tunable parameters are preprocessor macros (`tunekit tune-kernel` passes them as -D):
//   MR, NR   register block of the micro-kernel: MR rows x NR columns of C held in MR * NR / VW
//            vector accumulators (NR a multiple of VW)
//   MC, KC   cache blocking: an MC x KC block of A is multiplied by a KC x NC panel of B
//   NC       columns of B (and C) per outer block (not tuned by matmul.json: 2048 covers N)
//   PACK     1: copy the blocks of A and B into contiguous, zero-padded slivers before the
//            micro-kernel reads them; 0: read A and B in place (strided)
//   PAR      how the OpenMP threads share the work: 0 the MC blocks of each KC step, with one
//            shared packed B panel (two barriers per KC step); 1 each thread its own band of rows
//            of C, packing its own copy of the B panels (no barrier)
//   UNROLL   unroll factor of the micro-kernel's k loop (not tuned by matmul.json)
//   VW       floats per vector (8: 256-bit vectors; 16 suits AVX-512 machines); not tuned here
// The micro-kernel uses GCC/Clang vector extensions only, so it compiles for any -march; the
// compiler maps the vectors onto whatever SIMD registers the target has. The packing buffers
// are kept between calls, so concurrent calls from different threads are not supported.
#include <stdlib.h>  // posix_memalign

#include <cstdlib>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

// Defaults: the example's untuned starting point (a point of matmul.json's space).
#ifndef MR
#define MR 4
#endif
#ifndef NR
#define NR 8
#endif
#ifndef MC
#define MC 96
#endif
#ifndef KC
#define KC 128
#endif
#ifndef NC
#define NC 2048
#endif
#ifndef PACK
#define PACK 0
#endif
#ifndef PAR
#define PAR 0
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef VW
#define VW 8
#endif

static_assert(NR % VW == 0, "NR must be a multiple of VW");
static_assert(MR > 0 && MC > 0 && KC > 0 && NC > 0, "block sizes must be positive");

namespace {

typedef float vec __attribute__((vector_size(VW * sizeof(float))));

/// Vector load and store at any float alignment (compiled to unaligned vector moves).
inline vec load(const float* p) {
  vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store(float* p, vec v) { std::memcpy(p, &v, sizeof(v)); }

constexpr int kNV = NR / VW;  // vectors per row of the register block

#define TK_STR2(x) #x
#define TK_STR(x) TK_STR2(x)
#define TK_UNROLL _Pragma(TK_STR(GCC unroll UNROLL))

/// acc[i][v] = sum over k of a(i, k) * b(k, v-th vector); a(i, k) = a[i * as_i + k * as_k],
/// b's row k starts at b + k * bs_k. Full MR x NR block, kc >= 1. Prefetches the block of C
/// (leading dimension ldc) that the result goes to, so that its cache misses overlap the loop.
inline void micro_kernel(int kc, const float* a, long as_i, long as_k, const float* b, long bs_k,
                         const float* c, long ldc, vec acc[MR][kNV]) {
  for (int i = 0; i < MR; ++i) {
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + NR - 1, 1);
    for (int v = 0; v < kNV; ++v) acc[i][v] = vec{};
  }
  TK_UNROLL
  for (int k = 0; k < kc; ++k) {
    vec bv[kNV];
    for (int v = 0; v < kNV; ++v) bv[v] = load(b + k * bs_k + v * VW);
    for (int i = 0; i < MR; ++i) {
      const float ai = a[i * as_i + k * as_k];
      for (int v = 0; v < kNV; ++v) acc[i][v] += ai * bv[v];
    }
  }
}

/// C block (mr x nr of MR x NR valid) = or += acc.
inline void store_block(const vec acc[MR][kNV], float* c, long ldc, int mr, int nr, bool first) {
  if (mr == MR && nr == NR) {
    for (int i = 0; i < MR; ++i)
      for (int v = 0; v < kNV; ++v) {
        float* p = c + i * ldc + v * VW;
        store(p, first ? acc[i][v] : load(p) + acc[i][v]);
      }
    return;
  }
  float tmp[MR][NR];
  std::memcpy(tmp, acc, sizeof(tmp));
  for (int i = 0; i < mr; ++i)
    for (int j = 0; j < nr; ++j) c[i * ldc + j] = first ? tmp[i][j] : c[i * ldc + j] + tmp[i][j];
}

/// Plain loops for the edge blocks of the unpacked variant (reading past them would leave A or B).
void edge_block(int mr, int nr, int kc, const float* a, long lda, const float* b, long ldb,
                float* c, long ldc, bool first) {
  for (int i = 0; i < mr; ++i) {
    float row[NR] = {};
    for (int k = 0; k < kc; ++k)
      for (int j = 0; j < nr; ++j) row[j] += a[i * lda + k] * b[k * ldb + j];
    for (int j = 0; j < nr; ++j) c[i * ldc + j] = first ? row[j] : c[i * ldc + j] + row[j];
  }
}

/// Packs rows [0, mc) x columns [0, kc) of A (leading dimension lda) into slivers of MR rows:
/// sliver s holds a(s*MR + i, k) at [s*MR*kc + k*MR + i], rows past mc are zero.
void pack_a(int mc, int kc, const float* a, long lda, float* pa) {
  for (int s = 0; s < mc; s += MR) {
    const int mr = mc - s < MR ? mc - s : MR;
    float* dst = pa + static_cast<long>(s) * kc;
    for (int k = 0; k < kc; ++k)
      for (int i = 0; i < MR; ++i) dst[k * MR + i] = i < mr ? a[(s + i) * lda + k] : 0.0f;
  }
}

/// Packs rows [0, kc) x columns [j0, j1) of B into slivers of NR columns: sliver s holds
/// b(k, s*NR + j) at [s*NR*kc + k*NR + j], columns past the end are zero.
void pack_b_slivers(int kc, int s0, int s1, int nc, const float* b, long ldb, float* pb) {
  for (int s = s0; s < s1; ++s) {
    const int j0 = s * NR;
    const int nr = nc - j0 < NR ? nc - j0 : NR;
    float* dst = pb + static_cast<long>(j0) * kc;
    for (int k = 0; k < kc; ++k) {
      const float* src = b + k * ldb + j0;
      if (nr == NR) {
        std::memcpy(dst + k * NR, src, sizeof(float) * NR);
      } else {
        for (int j = 0; j < NR; ++j) dst[k * NR + j] = j < nr ? src[j] : 0.0f;
      }
    }
  }
}

/// Rows [i0, i0 + mc) of C's current block += A block * B panel, for NR slivers [s0, s1).
void block_inner(int mc, int kc, int s0, int s1, int nc, const float* a, long lda, const float* pa,
                 const float* b, long ldb, const float* pb, float* c, long ldc, bool first) {
  for (int s = s0; s < s1; ++s) {
    const int j = s * NR;
    const int nr = nc - j < NR ? nc - j : NR;
    for (int i = 0; i < mc; i += MR) {
      const int mr = mc - i < MR ? mc - i : MR;
      vec acc[MR][kNV];
      if (PACK) {
        micro_kernel(kc, pa + static_cast<long>(i) * kc, 1, MR, pb + static_cast<long>(j) * kc, NR,
                     c + i * ldc + j, ldc, acc);
      } else if (mr == MR && nr == NR) {
        micro_kernel(kc, a + i * lda, lda, 1, b + j, ldb, c + i * ldc + j, ldc, acc);
      } else {
        edge_block(mr, nr, kc, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc, first);
        continue;
      }
      store_block(acc, c + i * ldc + j, ldc, mr, nr, first);
    }
  }
}

/// A 64-byte aligned buffer of at least n floats kept between calls (grown when too small).
/// Not thread-safe: called outside the parallel region only.
float* scratch(long n) {
  static float* buffer = nullptr;
  static long capacity = 0;
  if (n > capacity) {
    std::free(buffer);
    void* p = nullptr;
    buffer = posix_memalign(&p, 64, sizeof(float) * n) == 0 ? static_cast<float*>(p) : nullptr;
    capacity = buffer ? n : 0;
  }
  return buffer;
}

int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

/// One KC step of one NC block, called by every thread of the team (PAR 0): packs the B panel,
/// its slivers shared among the threads, then multiplies the MC blocks of A by it, the blocks
/// shared among the threads. `pa` is this thread's packed A block.
void team_step(int M, int N, int K, int nc, int kc, const float* A, const float* b, float* C,
               float* pa, float* pb, bool first) {
  const int ns = (nc + NR - 1) / NR;
  if (PACK) {
#pragma omp for schedule(static)
    for (int s = 0; s < ns; ++s) pack_b_slivers(kc, s, s + 1, nc, b, N, pb);
  }
#pragma omp for schedule(static)
  for (int ic = 0; ic < M; ic += MC) {
    const int mc = M - ic < MC ? M - ic : MC;
    const float* a = A + static_cast<long>(ic) * K;
    if (PACK) pack_a(mc, kc, a, K, pa);
    block_inner(mc, kc, 0, ns, nc, a, K, pa, b, N, pb, C + static_cast<long>(ic) * N, N, first);
  }
}

/// Rows [m0, m1) of C = A * B by one thread alone (PAR 1): its own packed copies of the B panels
/// and A blocks, no synchronisation with the other threads.
void thread_rows(int m0, int m1, int N, int K, const float* A, const float* B, float* C, float* pa,
                 float* pb) {
  for (int jc = 0; jc < N; jc += NC) {
    const int nc = N - jc < NC ? N - jc : NC;
    const int ns = (nc + NR - 1) / NR;
    for (int pc = 0; pc < K; pc += KC) {
      const int kc = K - pc < KC ? K - pc : KC;
      const float* b = B + static_cast<long>(pc) * N + jc;
      if (PACK) pack_b_slivers(kc, 0, ns, nc, b, N, pb);
      for (int ic = m0; ic < m1; ic += MC) {
        const int mc = m1 - ic < MC ? m1 - ic : MC;
        const float* a = A + static_cast<long>(ic) * K + pc;
        if (PACK) pack_a(mc, kc, a, K, pa);
        block_inner(mc, kc, 0, ns, nc, a, K, pa, b, N, pb, C + static_cast<long>(ic) * N + jc, N,
                    pc == 0);
      }
    }
  }
}

}  // namespace

extern "C" void matmul(int M, int N, int K, const float* A, const float* B, float* C) {
  // Packing buffers, padded to whole cache lines: PAR 0 the shared B panel then one A block per
  // thread; PAR 1 a B panel and an A block per thread.
  const long pb_floats = (static_cast<long>((NC + NR - 1) / NR) * NR * KC + 15) / 16 * 16;
  const long pa_floats = (static_cast<long>((MC + MR - 1) / MR) * MR * KC + 15) / 16 * 16;
  const int threads = max_threads();
  const long per_thread = PAR ? pb_floats + pa_floats : pa_floats;
  float* const buf = PACK ? scratch((PAR ? 0 : pb_floats) + threads * per_thread) : nullptr;
  if (PACK && buf == nullptr) return;
#pragma omp parallel
  {
    float* const mine = PACK ? buf + (PAR ? 0 : pb_floats) + thread_id() * per_thread : nullptr;
    if (PAR) {
      const int rows = (M + team_size() - 1) / team_size();
      const int chunk = (rows + MR - 1) / MR * MR;
      const int m0 = thread_id() * chunk < M ? thread_id() * chunk : M;
      const int m1 = m0 + chunk < M ? m0 + chunk : M;
      thread_rows(m0, m1, N, K, A, B, C, PACK ? mine + pb_floats : nullptr, mine);
    } else {
      for (int jc = 0; jc < N; jc += NC) {
        const int nc = N - jc < NC ? N - jc : NC;
        for (int pc = 0; pc < K; pc += KC) {
          const int kc = K - pc < KC ? K - pc : KC;
          team_step(M, N, K, nc, kc, A + pc, B + static_cast<long>(pc) * N + jc, C + jc, mine, buf,
                    pc == 0);
        }
      }
    }
  }
}
