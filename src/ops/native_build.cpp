// Which builds of tunekit's GEMM kernels this CPU runs. See native_build.hpp.
#include "ops/native_build.hpp"

#include <algorithm>

#include "tunekit/core/hardware.hpp"

namespace tunekit::ops::detail {

const std::vector<const NativeKernels*>& native_builds() {
  // Planned per call: a test's ScopedCpuOverride may lower the planned CPU.
  static thread_local std::vector<const NativeKernels*> builds;
  const hw::X86Level level = std::min(hw::cpu().x86_level(), hw::host_cpu().x86_level());
  builds.clear();
  if (level >= hw::X86Level::kV4) builds.push_back(&kNativeKernelsV4);
  if (level >= hw::X86Level::kV3) builds.push_back(&kNativeKernelsV3);
  return builds;
}

const NativeKernels* native_build_for(int mr, int nr) {
  for (const NativeKernels* k : native_builds()) {
    for (int t = 0; t < k->tile_count; ++t) {
      if (k->tiles[t].mr == mr && k->tiles[t].nr == nr) return k;
    }
  }
  return nullptr;
}

const NativeBf16Kernels* native_bf16_kernels(const NativeKernels* k) {
  if (k == nullptr) return nullptr;
  const bool both = hw::cpu().has("avx512_bf16") && hw::host_cpu().has("avx512_bf16");
  return both && k->bf16_pairs != nullptr ? k->bf16_pairs : k->bf16_widened;
}

const NativeKernels* native_decode_build() {
  const auto& builds = native_builds();
  return builds.empty() ? nullptr : builds.front();
}

}  // namespace tunekit::ops::detail
