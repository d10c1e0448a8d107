// Test kernel of the kernel runners: starts a process that outlives it (holding every
// descriptor it inherited), then writes through a null pointer (SIGSEGV).
#include <unistd.h>

void kernel(int n, const float* a, const float* b, float* c) {
  volatile float* volatile nowhere = 0;
  (void)a;
  (void)b;
  (void)c;
  if (fork() == 0) {
    sleep(60);
    _exit(0);
  }
  nowhere[n] = 1.0f;
}
