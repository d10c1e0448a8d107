// Test kernel of the kernel runners: unbounded recursion overflows the stack (SIGSEGV).
static int recurse(volatile char* previous, int depth) {
  volatile char frame[4096];
  frame[0] = (char)depth;
  frame[1] = previous ? previous[0] : 0;
  return recurse(frame, depth + 1) + frame[1];
}

void kernel(int n, const float* a, const float* b, float* c) {
  (void)a;
  (void)b;
  c[0] = (float)recurse(0, n);
}
