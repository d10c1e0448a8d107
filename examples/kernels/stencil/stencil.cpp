// One Jacobi sweep of the 5-point stencil on an N x N grid (borders copied), written for
// tunekit tune-kernel: the cache tile (TILE_I rows x TILE_J columns), the unroll of the inner
// loop and the OpenMP schedule of the tiles are compile-time parameters.
#include <algorithm>
#include <cstddef>

#ifndef TILE_I
#define TILE_I 16
#endif
#ifndef TILE_J
#define TILE_J 256
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef SCHEDULE
#define SCHEDULE static
#endif

#define TUNEKIT_PRAGMA(x) _Pragma(#x)
#define TUNEKIT_UNROLL(n) TUNEKIT_PRAGMA(GCC unroll n)

namespace {

/// Rows [i0, i1) and interior columns [j0, j1) of the sweep.
void sweep_tile(int n, const float* a, float* b, int i0, int i1, int j0, int j1) {
  for (int i = i0; i < i1; ++i) {
    const float* up = a + static_cast<std::size_t>(i - 1) * n;
    const float* mid = a + static_cast<std::size_t>(i) * n;
    const float* down = a + static_cast<std::size_t>(i + 1) * n;
    float* dst = b + static_cast<std::size_t>(i) * n;
    TUNEKIT_UNROLL(UNROLL)
    for (int j = j0; j < j1; ++j) {
      dst[j] = 0.2f * (mid[j] + mid[j - 1] + mid[j + 1] + up[j] + down[j]);
    }
  }
}

}  // namespace

/// b = the 5-point average of a inside, a on the border. Both are N x N, row-major.
extern "C" void stencil(int n, const float* a, float* b) {
  const int tiles_i = (n - 2 + TILE_I - 1) / TILE_I, tiles_j = (n - 2 + TILE_J - 1) / TILE_J;
#pragma omp parallel
  {
#pragma omp for schedule(SCHEDULE) collapse(2) nowait
    for (int ti = 0; ti < tiles_i; ++ti) {
      for (int tj = 0; tj < tiles_j; ++tj) {
        const int i0 = 1 + ti * TILE_I, j0 = 1 + tj * TILE_J;
        sweep_tile(n, a, b, i0, std::min(i0 + TILE_I, n - 1), j0, std::min(j0 + TILE_J, n - 1));
      }
    }
#pragma omp for schedule(static)
    for (int i = 0; i < n; ++i) {
      float* row = b + static_cast<std::size_t>(i) * n;
      const float* src = a + static_cast<std::size_t>(i) * n;
      if (i == 0 || i == n - 1) {
        std::copy(src, src + n, row);
      } else {
        row[0] = src[0];
        row[n - 1] = src[n - 1];
      }
    }
  }
}
