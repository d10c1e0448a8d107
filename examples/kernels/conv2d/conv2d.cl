// 2-D convolution (single channel, fp32) for OpenCL: out[y][x] = sum over the FH x FW filter of
// in[y + j][x + i] * filter[j][i]; `in` is (H + FH - 1) x (W + FW - 1), `out` H x W, row-major.
//
// Tunable parameters (tunekit tune-kernel passes them as -D):
//   BX, BY  work-group size in x and y
//   WPT     outputs per work-item, consecutive rows of one column
//   UNROLL  1: the filter loops are unrolled (FW, FH known at compile time); 0: plain loops
// FW and FH (filter width and height) are fixed by the spec's flags (-DFW=5 -DFH=5).
// Launch (conv2d_opencl.json): global = [W, (H + WPT - 1) // WPT], local = [BX, BY].
#ifndef FW
#define FW 5
#endif
#ifndef FH
#define FH 5
#endif
#ifndef WPT
#define WPT 1
#endif
#ifndef UNROLL
#define UNROLL 0
#endif

__kernel void conv2d(int W, int H, __global const float* in, __global const float* filter,
                     __global float* out) {
  const int x = get_global_id(0);
  const int y0 = get_global_id(1) * WPT;
  const int in_w = W + FW - 1;
  if (x >= W) return;
  for (int w = 0; w < WPT; ++w) {
    const int y = y0 + w;
    if (y >= H) return;
    float acc = 0.0f;
#if UNROLL
#pragma unroll
#endif
    for (int j = 0; j < FH; ++j) {
#if UNROLL
#pragma unroll
#endif
      for (int i = 0; i < FW; ++i) acc += in[(y + j) * in_w + x + i] * filter[j * FW + i];
    }
    out[y * W + x] = acc;
  }
}
