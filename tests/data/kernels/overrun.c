// Test kernel of the kernel runners: zeroes c far past its n elements (400 KB beyond its end),
// through whatever lies after it, until it faults.
void kernel(int n, const float* a, const float* b, float* c) {
  volatile float* out = c;
  (void)a;
  (void)b;
  for (int i = 0; i < n + 100000; ++i) out[i] = 0.0f;
}
