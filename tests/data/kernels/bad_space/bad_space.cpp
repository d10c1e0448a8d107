// A kernel whose configuration space holds failures on purpose (tests/integration/
// tune_kernel_test.sh): VARIANT 2 segfaults, 3 never returns, 4 computes a wrong answer;
// 0, 1 and 5 compute y = 2 * x (1 and 5 with the loop unrolled, so their times differ).
#ifndef VARIANT
#define VARIANT 0
#endif

extern "C" void bad_space(int n, const float* x, float* y) {
#if VARIANT == 2
  volatile float* nowhere = nullptr;
  *nowhere = 1.0f;
#elif VARIANT == 3
  volatile int spin = 1;
  while (spin) {
  }
#elif VARIANT == 4
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i] + (i == 17 ? 1.0f : 0.0f);
#elif VARIANT == 0
  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
#else
#pragma GCC unroll 4
  for (int i = 0; i < n; ++i) y[i] = x[i] + x[i];
#endif
}
