// Verification function of the kernel runner tests (VerifyRule::function): accepts the outputs
// of the vadd problem (n, a, b, c) when c = a + b holds exactly.
#include <stdio.h>

int check(int count, void* const* args, const void* const* reference, const long long* elements,
          char* why, int why_size) {
  (void)reference;
  if (count != 4) {
    snprintf(why, (size_t)why_size, "expected 4 arguments, got %d", count);
    return 1;
  }
  const float* a = (const float*)args[1];
  const float* b = (const float*)args[2];
  const float* c = (const float*)args[3];
  for (long long i = 0; i < elements[3]; ++i) {
    if (c[i] != a[i] + b[i]) {
      snprintf(why, (size_t)why_size, "c[%lld] is not a[%lld] + b[%lld]", i, i, i);
      return 1;
    }
  }
  return 0;
}
