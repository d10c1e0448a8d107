// One Jacobi sweep of the 5-point stencil for OpenCL on an NX x NY grid (fp32, row-major):
// interior points get 0.25 * (north + south + west + east), boundary points are copied.
//
// Tunable parameters (tunekit tune-kernel passes them as -D):
//   BX, BY  work-group size in x and y
//   WPT     points per work-item, consecutive rows of one column
// Launch (stencil_opencl.json): global = [NX, (NY + WPT - 1) // WPT], local = [BX, BY].
#ifndef WPT
#define WPT 1
#endif

__kernel void stencil(int NX, int NY, __global const float* in, __global float* out) {
  const int x = get_global_id(0);
  const int y0 = get_global_id(1) * WPT;
  if (x >= NX) return;
  for (int w = 0; w < WPT; ++w) {
    const int y = y0 + w;
    if (y >= NY) return;
    const int i = y * NX + x;
    if (x == 0 || y == 0 || x == NX - 1 || y == NY - 1) {
      out[i] = in[i];
    } else {
      out[i] = 0.25f * (in[i - NX] + in[i + NX] + in[i - 1] + in[i + 1]);
    }
  }
}
