// Test kernel of the kernel runners: a wrong answer (element 17 one too large, as wrong.c) that
// also leaves state behind in its process: $TUNEKIT_TEST_SCRIBBLED, which reads_scribble.c
// reads.
#include <stdlib.h>

void kernel(int n, const float* a, const float* b, float* c) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i] + (i == 17 ? 1.0f : 0.0f);
  setenv("TUNEKIT_TEST_SCRIBBLED", "1", 1);
}
