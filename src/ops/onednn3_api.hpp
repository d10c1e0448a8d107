// The oneDNN 3 functions (libdnnl.so.3 of the `onednn` wheel) tunekit's onednn3 candidates call,
// resolved from the library itself: the program links Debian's oneDNN 2, whose C functions carry
// the same names. Compiled only with the wheel's headers (onednn-devel; -iquote, no unity batch).
#pragma once

#include <string>

#include "dnnl.h"  // the wheel's oneDNN 3 header, found through -iquote (cmake/wheels.cmake)
#include "tunekit/core/status.hpp"

namespace tunekit::ops::detail {

/// oneDNN 3 entry points, each typed as the header declares it.
struct Onednn3Api {
#define TUNEKIT_DNNL3_ENTRY(name) decltype(&::name) name = nullptr;
#define TUNEKIT_DNNL3_ENTRIES(X)             \
  X(dnnl_version)                            \
  X(dnnl_get_effective_cpu_isa)              \
  X(dnnl_engine_create)                      \
  X(dnnl_stream_create)                      \
  X(dnnl_stream_destroy)                     \
  X(dnnl_stream_wait)                        \
  X(dnnl_memory_desc_create_with_strides)    \
  X(dnnl_memory_desc_create_with_tag)        \
  X(dnnl_memory_desc_clone)                  \
  X(dnnl_memory_desc_destroy)                \
  X(dnnl_memory_desc_get_size)               \
  X(dnnl_memory_create)                      \
  X(dnnl_memory_destroy)                     \
  X(dnnl_matmul_primitive_desc_create)       \
  X(dnnl_reorder_primitive_desc_create)      \
  X(dnnl_primitive_desc_query)               \
  X(dnnl_primitive_desc_query_md)            \
  X(dnnl_primitive_desc_destroy)             \
  X(dnnl_primitive_create)                   \
  X(dnnl_primitive_execute)                  \
  X(dnnl_primitive_destroy)                  \
  X(dnnl_primitive_attr_create)              \
  X(dnnl_primitive_attr_destroy)             \
  X(dnnl_primitive_attr_set_scratchpad_mode) \
  X(dnnl_primitive_attr_set_scales_mask)     \
  X(dnnl_primitive_attr_set_post_ops)        \
  X(dnnl_post_ops_create)                    \
  X(dnnl_post_ops_destroy)                   \
  X(dnnl_post_ops_append_sum)
  TUNEKIT_DNNL3_ENTRIES(TUNEKIT_DNNL3_ENTRY)
#undef TUNEKIT_DNNL3_ENTRY

  dnnl_engine_t engine = nullptr;  ///< the CPU engine, kept for the life of the process
  std::string path;                ///< the libdnnl.so.3 loaded
  std::string version;             ///< "3.2.0"
  std::string isa;  ///< dnnl_get_effective_cpu_isa() in words, e.g. "avx512_core_bf16"
};

/// oneDNN 3, loaded on the first call: located (locate_wheel_library, TUNEKIT_ONEDNN3_LIBRARY),
/// opened with RTLD_DEEPBIND, the CPU engine created. Only the GNU OpenMP build is taken: its
/// threads are the program's libgomp pool (sync_main_threads() sets their count).
/// Errors: kUnsupported naming what is missing (the wheel, an entry point, the engine), a build
/// for another runtime (SYCL, TBB) or why it cannot load (AddressSanitizer, dlopen).
Expected<const Onednn3Api*> onednn3_api();

}  // namespace tunekit::ops::detail
