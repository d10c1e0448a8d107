// 2-D convolution (stride 1, no padding) of a C x H x W image with K filters of C x R x S,
// written for tunekit tune-kernel: output-channel and output-row tiles, the inner loop's unroll
// and the OpenMP schedule are compile-time parameters (-D TILE_K, TILE_Q, UNROLL, SCHEDULE).
#include <algorithm>
#include <cstddef>

#ifndef TILE_K
#define TILE_K 4  // output channels accumulated together (each input row is reused TILE_K times)
#endif
#ifndef TILE_Q
#define TILE_Q 16  // output columns accumulated in registers
#endif
#ifndef UNROLL
#define UNROLL 1  // unroll factor of the column loop
#endif
#ifndef SCHEDULE
#define SCHEDULE static  // OpenMP schedule of the (channel tile, output row) loop
#endif

#define TUNEKIT_PRAGMA(x) _Pragma(#x)
#define TUNEKIT_UNROLL(n) TUNEKIT_PRAGMA(GCC unroll n)

namespace {

/// One TILE_K x TILE_Q block of outputs starting at channel k0, row p, column q0.
void conv_block(int C, int K, int H, int W, int R, int S, const float* in, const float* w,
                float* out, int k0, int p, int q0) {
  const int P = H - R + 1, Q = W - S + 1;
  const int kn = std::min(TILE_K, K - k0), qn = std::min(TILE_Q, Q - q0);
  float acc[TILE_K][TILE_Q] = {};
  for (int c = 0; c < C; ++c) {
    for (int r = 0; r < R; ++r) {
      for (int s = 0; s < S; ++s) {
        const float* row = in + (static_cast<std::size_t>(c) * H + p + r) * W + q0 + s;
        for (int k = 0; k < kn; ++k) {
          const float wv = w[((static_cast<std::size_t>(k0 + k) * C + c) * R + r) * S + s];
          TUNEKIT_UNROLL(UNROLL)
          for (int q = 0; q < qn; ++q) acc[k][q] += wv * row[q];
        }
      }
    }
  }
  for (int k = 0; k < kn; ++k) {
    float* dst = out + (static_cast<std::size_t>(k0 + k) * P + p) * Q + q0;
    for (int q = 0; q < qn; ++q) dst[q] = acc[k][q];
  }
}

}  // namespace

/// out[k][p][q] = sum over c, r, s of in[c][p + r][q + s] * w[k][c][r][s];
/// P = H - R + 1 rows and Q = W - S + 1 columns of output per channel.
extern "C" void conv2d(int C, int K, int H, int W, int R, int S, const float* in, const float* w,
                       float* out) {
  const int P = H - R + 1, Q = W - S + 1;
  const int k_tiles = (K + TILE_K - 1) / TILE_K;
#pragma omp parallel for collapse(2) schedule(SCHEDULE)
  for (int kt = 0; kt < k_tiles; ++kt) {
    for (int p = 0; p < P; ++p) {
      for (int q0 = 0; q0 < Q; q0 += TILE_Q)
        conv_block(C, K, H, W, R, S, in, w, out, kt * TILE_K, p, q0);
    }
  }
}
