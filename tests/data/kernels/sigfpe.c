// Test kernel of the kernel runners: integer division by zero (SIGFPE on x86-64).
void kernel(int n, const float* a, const float* b, float* c) {
  volatile int zero = 0;
  (void)a;
  (void)b;
  c[0] = (float)(n / zero);
}
