// Test kernel of the kernel runners: c = a + b, then overwrites its input a (in-place trap).
void kernel(int n, float* a, const float* b, float* c) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
  for (int i = 0; i < n; ++i) a[i] = 1000.0f;
}
