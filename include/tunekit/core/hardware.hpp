// Facts about the machine the process runs on: CPU model, ISA extensions, caches, usable cores.
// Read once from /proc/cpuinfo, sysfs and the affinity mask; used by validators and defaults.
#pragma once

#include <cstddef>
#include <string>

namespace tunekit::hw {

struct CpuInfo {
  std::string model;          ///< "Intel(R) Xeon(R) Platinum 8480+" from /proc/cpuinfo "model name"
  std::string isa;            ///< '+'-joined subset of relevant flags, e.g. "avx2+avx512f+amx_bf16"
  std::size_t l1d_bytes = 0;  ///< per core
  std::size_t l2_bytes = 0;   ///< per core
  std::size_t llc_bytes = 0;  ///< last-level cache as reported by sysfs (may be the host's)
  int usable_cores = 1;       ///< CPUs in this process's affinity mask
};

/// Cached machine facts (computed on first call, thread-safe).
const CpuInfo& cpu();

/// Bytes of last-level cache a tuning run should defeat with rotating buffers: the sysfs LLC
/// size capped at 256 MiB (a VM reports the host's LLC; machine-notes measured 48-192 MB usable).
std::size_t effective_llc_bytes();

}  // namespace tunekit::hw
