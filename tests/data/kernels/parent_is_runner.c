// Test kernel of the kernel runners: c = a + b when the process running it is a child of the
// process whose id is in $TUNEKIT_TEST_RUNNER_PID (a warm worker of that runner); c = a + b + 1
// otherwise (a trial child forked by the worker, or no such variable).
#include <stdlib.h>
#include <unistd.h>

void kernel(int n, const float* a, const float* b, float* c) {
  const char* runner = getenv("TUNEKIT_TEST_RUNNER_PID");
  const float extra = runner != NULL && atol(runner) == (long)getppid() ? 0.0f : 1.0f;
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i] + extra;
}
