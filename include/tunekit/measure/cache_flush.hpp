// Data-cache flush of operand ranges, run between timed calls so each call starts from memory.
// x86-64 uses CLFLUSHOPT (CLFLUSH without it), AArch64 `dc civac`; elsewhere the flush is a no-op.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace tunekit::measure {

/// A byte range an operator reads or writes.
struct MemoryRange {
  const void* data = nullptr;  ///< first byte (any alignment)
  std::size_t bytes = 0;       ///< length in bytes
};

/// Writes back and evicts every cache line of `ranges` from all cache levels, then fences.
/// Cost: one flush instruction per 64-byte line, about 0.05-0.2 ms per MiB (dominated by dirty
/// write-backs); it runs outside timed regions. Null or empty ranges are skipped.
void flush_data_cache(std::span<const MemoryRange> ranges) noexcept;

/// The flush method in use on this machine: "clflushopt", "clflush", "dc civac" or "none".
std::string_view cache_flush_method() noexcept;

}  // namespace tunekit::measure
