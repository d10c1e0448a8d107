// Test kernel of the kernel runners: c = a + b, after starting a process that sleeps for a
// minute; that process writes its id to the file named by $TUNEKIT_TEST_SLEEPER_FILE.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void kernel(int n, const float* a, const float* b, float* c) {
  const char* file = getenv("TUNEKIT_TEST_SLEEPER_FILE");
  if (file != NULL && fork() == 0) {
    FILE* out = fopen(file, "w");
    if (out != NULL) {
      fprintf(out, "%ld\n", (long)getpid());
      fclose(out);
    }
    sleep(60);
    _exit(0);
  }
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
