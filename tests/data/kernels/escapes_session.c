// Test kernel of the kernel runners: c = a + b, after starting a process that leaves the
// kernel's process group and session (setsid, then a second fork) and sleeps for a minute,
// holding every descriptor it inherited. Its id is written to the file named by
// $TUNEKIT_TEST_SLEEPER_FILE before the kernel returns.
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/// The middle process: a session of its own, a child that sleeps, whose id goes to `out`.
static void start_sleeper(int out) {
  setsid();
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    sleep(60);
    _exit(0);
  }
  const long id = (long)sleeper;
  if (write(out, &id, sizeof id) != (ssize_t)sizeof id) _exit(1);
  _exit(0);
}

void kernel(int n, const float* a, const float* b, float* c) {
  const char* file = getenv("TUNEKIT_TEST_SLEEPER_FILE");
  int fds[2];
  if (file != NULL && pipe(fds) == 0) {
    const pid_t middle = fork();
    if (middle == 0) start_sleeper(fds[1]);
    long id = 0;
    close(fds[1]);
    if (read(fds[0], &id, sizeof id) == (ssize_t)sizeof id) {
      FILE* f = fopen(file, "w");
      if (f != NULL) {
        fprintf(f, "%ld\n", id);
        fclose(f);
      }
    }
    close(fds[0]);
    if (middle > 0) waitpid(middle, NULL, 0);
  }
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
