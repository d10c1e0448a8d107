// Preloaded into the Python process that runs run_v4_kernels.py (bochscpu-python 0.4.0):
//  * the wheel was linked against glibc 2.38 and calls its C23 names of strtoull and sscanf,
//    which older C libraries (Debian 12: 2.36) lack; they behave as the classic functions here;
//  * its Bochs build creates a Cannon Lake CPU (no AVX512-BF16) through a factory it calls by
//    its exported name; defining that name here makes the call create Bochs's Sapphire Rapids
//    (AVX512-BF16, AVX512-FP16) instead.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long long __isoc23_strtoull(const char* s, char** end, int base) {
  return strtoull(s, end, base);
}

int __isoc23_sscanf(const char* s, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int n = vsscanf(s, format, args);
  va_end(args);
  return n;
}

static int find_bochscpu(struct dl_phdr_info* info, size_t size, void* out) {
  (void)size;
  if (strstr(info->dlpi_name, "_bochscpu") == NULL) return 0;
  *(const char**)out = info->dlpi_name;
  return 1;
}

typedef void* (*CpuidFactory)(void* cpu);

void* _Z23create_corei3_cnl_cpuidP8BX_CPU_C(void* cpu) {
  const char* path = NULL;
  dl_iterate_phdr(find_bochscpu, &path);
  void* module = path ? dlopen(path, RTLD_NOLOAD | RTLD_LAZY) : NULL;
  CpuidFactory sapphire_rapids =
      module ? (CpuidFactory)dlsym(module, "_Z28create_sapphire_rapids_cpuidP8BX_CPU_C") : NULL;
  if (sapphire_rapids == NULL) {
    fprintf(stderr, "shim: no Sapphire Rapids model in the loaded bochscpu module\n");
    abort();
  }
  return sapphire_rapids(cpu);
}
