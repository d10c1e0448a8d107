// Tiled single-precision matrix multiply for OpenCL, C = A * B (row-major, fp32).
//
// Tunable parameters (tunekit tune-kernel passes them as -D):
//   TS    tile edge: a work-group computes a TS x TS tile of C, staging TS x TS tiles of A and B
//         in local memory
//   WPT   work per thread: each work-item computes WPT elements of one column of the tile, rows
//         TS / WPT apart (TS % WPT == 0)
// Launch (matmul_opencl.json): global = [N, M / WPT], local = [TS, TS / WPT].
#ifndef TS
#define TS 16
#endif
#ifndef WPT
#define WPT 1
#endif
#define RTS (TS / WPT)

__kernel void matmul(int M, int N, int K, __global const float* A, __global const float* B,
                     __global float* C) {
  const int col = get_local_id(0);
  const int row = get_local_id(1);
  const int tile_row = get_group_id(1) * TS;
  const int gcol = get_group_id(0) * TS + col;
  __local float a_tile[TS][TS];
  __local float b_tile[TS][TS];
  float acc[WPT];
  for (int w = 0; w < WPT; ++w) acc[w] = 0.0f;

  for (int t = 0; t < K; t += TS) {
    for (int w = 0; w < WPT; ++w) {
      const int r = row + w * RTS;
      const int ar = tile_row + r;
      a_tile[r][col] = (ar < M && t + col < K) ? A[ar * K + t + col] : 0.0f;
      b_tile[r][col] = (t + r < K && gcol < N) ? B[(t + r) * N + gcol] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; ++k) {
      const float b = b_tile[k][col];
      for (int w = 0; w < WPT; ++w) acc[w] += a_tile[row + w * RTS][k] * b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int w = 0; w < WPT; ++w) {
    const int r = tile_row + row + w * RTS;
    if (r < M && gcol < N) C[r * N + gcol] = acc[w];
  }
}
