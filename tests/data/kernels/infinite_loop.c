// Test kernel of the kernel runners: never returns.
void kernel(int n, const float* a, const float* b, float* c) {
  (void)n;
  (void)a;
  (void)b;
  for (;;) {
    __asm__ volatile("" ::: "memory");
    c[0] += 1.0f;
  }
}
