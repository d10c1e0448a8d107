// A user verification function for bad_space (docs/kernels.md, "verify.function"): accepts the
// outputs when y = 2 * x holds exactly, without a reference configuration.
#include <cstdio>

extern "C" int check(int count, void* const* args, const void* const* reference,
                     const long long* elements, char* why, int why_size) {
  (void)reference;
  if (count != 3) {
    std::snprintf(why, static_cast<std::size_t>(why_size), "expected 3 arguments, got %d", count);
    return 1;
  }
  const float* x = static_cast<const float*>(args[1]);
  const float* y = static_cast<const float*>(args[2]);
  for (long long i = 0; i < elements[2]; ++i) {
    if (y[i] != 2.0f * x[i]) {
      std::snprintf(why, static_cast<std::size_t>(why_size), "y[%lld] = %g, 2 * x[%lld] = %g", i,
                    static_cast<double>(y[i]), i, static_cast<double>(2.0f * x[i]));
      return 1;
    }
  }
  return 0;
}
