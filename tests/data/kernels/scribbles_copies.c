// Test kernel of the kernel runners: c = a + b, and from its second call on it also adds 1 to
// element 17 of every other copy of a, b or c it finds in its process (the runner's pristine
// arguments, reference outputs and verification buffers: page-aligned mappings listed in
// /proc/self/maps that start with the same n values). Its own trial verifies; only what
// later configurations are restored from and verified against is corrupted.
#include <stdio.h>
#include <string.h>

static int calls;

/// Whether the first n values at p equal those of a. A plain loop, not memcmp: under
/// AddressSanitizer memcmp is intercepted, and it refuses to read the sanitizer's own shadow
/// mappings that this scan walks past.
static int same_values(const volatile float* p, const float* a, int n) {
  for (int i = 0; i < n; ++i) {
    if (p[i] != a[i]) return 0;
  }
  return 1;
}

/// Adds 1 to element 17 of every readable mapping other than a, b and c that starts with the
/// first n values of one of them.
static void scribble(int n, const float* const arrays[3]) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return;
  char line[512];
  while (fgets(line, sizeof line, maps) != NULL) {
    unsigned long start = 0, end = 0;
    char perms[8] = {0};
    char path[256] = {0};
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &start, &end, perms, path) < 3) continue;
    if (perms[0] != 'r' || end - start < (unsigned long)n * sizeof(float)) continue;
    if (path[0] != '\0' && strcmp(path, "/dev/zero") != 0) continue;  // [vvar], files, ...
    volatile float* region = (volatile float*)start;
    for (int k = 0; k < 3; ++k) {
      if ((const float*)start == arrays[k]) continue;
      if (!same_values((const volatile float*)start, arrays[k], n)) continue;
      region[17] += 1.0f;  // faults where the runner made the copy read-only
      break;
    }
  }
  fclose(maps);
}

void kernel(int n, const float* a, const float* b, float* c) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
  const float* const arrays[3] = {a, b, c};
  if (++calls >= 2) scribble(n, arrays);
}
