// Test kernel of the kernel runners: c = a + b computed back to front (a second good one).
void kernel(int n, const float* a, const float* b, float* c) {
  for (int i = n - 1; i >= 0; --i) c[i] = b[i] + a[i];
}
