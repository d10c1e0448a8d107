// Opening a library in a new dlmopen namespace whose C library keeps its thread-specific data
// keys out of the way of the main C library's.
#pragma once

#include <pthread.h>

#include <vector>

namespace tunekit::ops::detail {

/// dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL), after first loading the namespace's own
/// libc.so.6 and steering its next pthread keys onto `keys`, six keys taken for good from the
/// main C library (left empty where that cannot be arranged: the library is then loaded as plain
/// dlmopen does). Call own_key_blocks(keys) on every thread before it enters the namespace.
///
/// Why: every namespace has a C library of its own, but all of them share each thread's
/// thread-specific data slots, indexed by key. A namespace's libgomp and the main program's
/// libgomp or OpenSSL would get the same key numbers, overwrite each other's per-thread data and
/// run each other's destructors when a thread exits (libgomp's assertion in goacc_destroy_thread,
/// OpenSSL crashes, on threads other than the main one). glibc hands out the lowest free key, so
/// keys the main C library holds and the namespace's does not are the namespace's next ones.
/// Returns the handle, or nullptr with dlerror() set.
void* dlmopen_with_own_keys(const char* path, std::vector<pthread_key_t>& keys);

/// glibc keeps the slots of keys 32 and up in blocks of 32 that a thread's first
/// pthread_setspecific in the block allocates, and the thread's exit frees them with the main C
/// library's free(): a block a namespace's C library allocated with its own malloc ends the
/// thread with "free(): invalid pointer". Allocates the blocks of `keys` on the calling thread
/// with the main C library, leaving the slots empty. Cheap; idempotent.
void own_key_blocks(const std::vector<pthread_key_t>& keys) noexcept;

}  // namespace tunekit::ops::detail
