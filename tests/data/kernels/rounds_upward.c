// Test kernel of the kernel runners: c = a + b, then leaves the floating-point rounding mode of
// its thread set to upward (as a kernel setting its own FP environment may).
#include <fenv.h>

void kernel(int n, const float* a, const float* b, float* c) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
  fesetround(FE_UPWARD);
}
