// Test kernel of the kernel runners: c = a + b, after starting a process that sleeps for a
// minute; the kernel writes that process's id to the file named by $TUNEKIT_TEST_SLEEPER_FILE
// before it returns (the process itself could be ended before it wrote anything).
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

void kernel(int n, const float* a, const float* b, float* c) {
  const char* file = getenv("TUNEKIT_TEST_SLEEPER_FILE");
  const pid_t child = file != NULL ? fork() : -1;
  if (child == 0) {
    sleep(60);
    _exit(0);
  }
  if (child > 0) {
    FILE* out = fopen(file, "w");
    if (out != NULL) {
      fprintf(out, "%ld\n", (long)child);
      fclose(out);
    }
  }
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
