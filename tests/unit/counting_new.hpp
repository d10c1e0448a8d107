// Replacement operator new/delete that count the calling thread's allocations while armed, for
// the tests that check a hit path allocates nothing. Include in exactly one source file of a
// test program (replacement allocation functions are defined here, not declared).
#pragma once

#include <cstdlib>
#include <new>

namespace tunekit::testing {
/// While true, this thread's allocations through operator new are counted in g_allocations.
inline thread_local bool g_count_allocations = false;
inline thread_local long g_allocations = 0;
}  // namespace tunekit::testing

// GCC 12 pairs the inlined replacement new/delete below with the malloc/free inside them and
// warns (a known false positive for replacement allocation functions).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  if (tunekit::testing::g_count_allocations) ++tunekit::testing::g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): AddressSanitizer's own
// nothrow new would otherwise meet the free() below (alloc-dealloc-mismatch).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (tunekit::testing::g_count_allocations) ++tunekit::testing::g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop
