// Opening a library in a new dlmopen namespace whose C library keeps its thread-specific data
// keys out of the way of the main C library's.
#pragma once

#include <cstddef>

namespace tunekit::ops::detail {

/// dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL), after first loading the namespace's own
/// libc.so.6 and steering its next pthread keys onto keys taken for good from the main C library.
///
/// Why: every namespace has a C library of its own, but all of them share each thread's
/// thread-specific data slots, indexed by key. A namespace's libgomp and the main program's
/// libgomp or OpenSSL would get the same key numbers, overwrite each other's per-thread data and
/// run each other's destructors when a thread exits (libgomp's assertion in goacc_destroy_thread,
/// OpenSSL crashes, on threads other than the main one). glibc hands out the lowest free key, so
/// keys the main C library holds and the namespace's does not are the namespace's next ones.
/// Six keys per namespace, all below 32 (glibc's in-descriptor block; above it the namespace's
/// malloc would allocate per-thread blocks that the main C library frees). Where that cannot be
/// arranged the library is loaded as plain dlmopen does.
/// Returns the handle, or nullptr with dlerror() set.
void* dlmopen_with_own_keys(const char* path);

}  // namespace tunekit::ops::detail
