// Test kernel of the kernel runners: c = a + b computed by 4 OpenMP threads, plus 1 when its
// process has more than 6 threads (OpenMP pools of earlier configurations left behind).
#include <dirent.h>
#include <stddef.h>

static int threads_of_this_process(void) {
  int n = 0;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == NULL) return 0;
  for (struct dirent* e = readdir(tasks); e != NULL; e = readdir(tasks)) n += e->d_name[0] != '.';
  closedir(tasks);
  return n;
}

void kernel(int n, const float* a, const float* b, float* c) {
#pragma omp parallel for num_threads(4)
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
  const float extra = threads_of_this_process() > 6 ? 1.0f : 0.0f;
  for (int i = 0; i < n; ++i) c[i] += extra;
}
