// Test kernel of the kernel runners: c = a + b when the parent of the process running it is a
// child of the process whose id is in $TUNEKIT_TEST_RUNNER_PID (a warm worker, below the keeper
// that runner spawned); c = a + b + 1 otherwise (a trial child forked by the worker, or no such
// variable).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// The parent of process `pid`, from /proc (-1 when it cannot be read).
static long parent_of(long pid) {
  char path[64];
  char text[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE* f = fopen(path, "r");
  if (f == NULL) return -1;
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  const char* after = strrchr(text, ')');
  char state = 0;
  long ppid = -1;
  if (after == NULL || sscanf(after + 1, " %c %ld", &state, &ppid) != 2) return -1;
  return ppid;
}

void kernel(int n, const float* a, const float* b, float* c) {
  const char* runner = getenv("TUNEKIT_TEST_RUNNER_PID");
  const int ok = runner != NULL && atol(runner) == parent_of((long)getppid());
  const float extra = ok ? 0.0f : 1.0f;
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i] + extra;
}
