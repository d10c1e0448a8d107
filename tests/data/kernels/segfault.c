// Test kernel of the kernel runners: writes through a null pointer (SIGSEGV).
void kernel(int n, const float* a, const float* b, float* c) {
  volatile float* volatile nowhere = 0;
  (void)a;
  (void)b;
  (void)c;
  nowhere[n] = 1.0f;
}
