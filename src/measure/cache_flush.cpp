// Operand cache flush with CLFLUSHOPT / CLFLUSH (x86-64) or DC CIVAC (AArch64).
// See include/tunekit/measure/cache_flush.hpp.
#include "tunekit/measure/cache_flush.hpp"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TUNEKIT_FLUSH_X86 1
#elif defined(__aarch64__)
#define TUNEKIT_FLUSH_ARM64 1
#endif

namespace tunekit::measure {
namespace {

constexpr std::uintptr_t kLineBytes = 64;

#if defined(TUNEKIT_FLUSH_X86)
bool has_clflushopt() noexcept {
  static const bool supported = __builtin_cpu_supports("clflushopt") != 0;
  return supported;
}

__attribute__((target("clflushopt"))) void flush_opt(std::uintptr_t begin,
                                                     std::uintptr_t end) noexcept {
  for (std::uintptr_t p = begin; p < end; p += kLineBytes) {
    _mm_clflushopt(reinterpret_cast<void*>(p));
  }
}

void flush_plain(std::uintptr_t begin, std::uintptr_t end) noexcept {
  for (std::uintptr_t p = begin; p < end; p += kLineBytes) {
    _mm_clflush(reinterpret_cast<const void*>(p));
  }
}
#endif

}  // namespace

void flush_data_cache(std::span<const MemoryRange> ranges) noexcept {
#if defined(TUNEKIT_FLUSH_X86) || defined(TUNEKIT_FLUSH_ARM64)
  for (const MemoryRange& r : ranges) {
    if (r.data == nullptr || r.bytes == 0) continue;
    const auto first = reinterpret_cast<std::uintptr_t>(r.data) & ~(kLineBytes - 1);
    const auto end = reinterpret_cast<std::uintptr_t>(r.data) + r.bytes;
#if defined(TUNEKIT_FLUSH_X86)
    if (has_clflushopt()) {
      flush_opt(first, end);
    } else {
      flush_plain(first, end);
    }
#else
    for (std::uintptr_t p = first; p < end; p += kLineBytes) {
      asm volatile("dc civac, %0" ::"r"(p) : "memory");
    }
#endif
  }
#if defined(TUNEKIT_FLUSH_X86)
  _mm_mfence();
#else
  asm volatile("dsb ish" ::: "memory");
#endif
#else
  (void)ranges;
#endif
}

std::string_view cache_flush_method() noexcept {
#if defined(TUNEKIT_FLUSH_X86)
  return has_clflushopt() ? "clflushopt" : "clflush";
#elif defined(TUNEKIT_FLUSH_ARM64)
  return "dc civac";
#else
  return "none";
#endif
}

}  // namespace tunekit::measure
