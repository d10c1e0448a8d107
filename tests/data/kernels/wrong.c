// Test kernel of the kernel runners: c = a + b except element 17, which is one too large.
void kernel(int n, const float* a, const float* b, float* c) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i] + (i == 17 ? 1.0f : 0.0f);
}
