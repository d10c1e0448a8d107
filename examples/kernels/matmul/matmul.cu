// Tiled single-precision matrix multiply for CUDA (NVRTC), C = A * B (row-major, fp32).
//
// Tunable parameters (tunekit tune-kernel passes them as -D):
//   TS    tile edge: a block computes a TS x TS tile of C, staging TS x TS tiles of A and B in
//         shared memory
//   WPT   work per thread: each thread computes WPT elements of one column of the tile, rows
//         TS / WPT apart (TS % WPT == 0)
// Launch (matmul_cuda.json): global = [N, M / WPT], local = [TS, TS / WPT], so
// grid = (N / TS, M / TS) and block = (TS, TS / WPT).
#ifndef TS
#define TS 16
#endif
#ifndef WPT
#define WPT 1
#endif
#define RTS (TS / WPT)

extern "C" __global__ void matmul(int M, int N, int K, const float* __restrict__ A,
                                  const float* __restrict__ B, float* __restrict__ C) {
  const int col = threadIdx.x;
  const int row = threadIdx.y;
  const int tile_row = blockIdx.y * TS;
  const int gcol = blockIdx.x * TS + col;
  __shared__ float a_tile[TS][TS + 1];
  __shared__ float b_tile[TS][TS];
  float acc[WPT];
#pragma unroll
  for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;

  for (int t = 0; t < K; t += TS) {
#pragma unroll
    for (int w = 0; w < WPT; ++w) {
      const int r = row + w * RTS;
      const int ar = tile_row + r;
      a_tile[r][col] = (ar < M && t + col < K) ? A[ar * K + t + col] : 0.0f;
      b_tile[r][col] = (t + r < K && gcol < N) ? B[(t + r) * N + gcol] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TS; ++k) {
      const float b = b_tile[k][col];
#pragma unroll
      for (int w = 0; w < WPT; ++w) acc[w] += a_tile[row + w * RTS][k] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int w = 0; w < WPT; ++w) {
    const int r = tile_row + row + w * RTS;
    if (r < M && gcol < N) C[r * N + gcol] = acc[w];
  }
}
