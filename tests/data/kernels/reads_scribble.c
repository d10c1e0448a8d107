// Test kernel of the kernel runners: c = a + b, plus 1 when $TUNEKIT_TEST_SCRIBBLED is set in
// its process (by wrong_and_scribbles.c in an earlier configuration of the same worker).
#include <stdlib.h>

void kernel(int n, const float* a, const float* b, float* c) {
  const float extra = getenv("TUNEKIT_TEST_SCRIBBLED") != NULL ? 1.0f : 0.0f;
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i] + extra;
}
