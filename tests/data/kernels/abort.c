// Test kernel of the kernel runners: calls abort() (SIGABRT).
#include <stdlib.h>
void kernel(int n, const float* a, const float* b, float* c) {
  (void)n;
  (void)a;
  (void)b;
  (void)c;
  abort();
}
