// Test kernel of the kernel runners: c = a + b after sleeping 3 s (a worker is killed meanwhile).
#include <unistd.h>
void kernel(int n, const float* a, const float* b, float* c) {
  sleep(3);
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
