// Which builds of tunekit's GEMM kernels this CPU runs. See native_build.hpp.
#include "ops/native_build.hpp"

#include <fmt/format.h>

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

const NativeBf16Kernels* native_amx_route() {
  return native_amx_refusal().empty() ? kNativeKernelsV4.bf16_tiles : nullptr;
}

bool is_amx_shape(int mr, int nr) {
  const NativeBf16Kernels* amx = kNativeKernelsV4.bf16_tiles;
  for (int t = 0; amx != nullptr && t < amx->tile_count; ++t) {
    if (amx->tiles[t].mr == mr && amx->tiles[t].nr == nr) return true;
  }
  return false;
}

bool is_amx_tile(int mr, int nr) { return is_amx_shape(mr, nr) && native_amx_route() != nullptr; }

std::string native_amx_refusal() {
  const auto& builds = native_builds();
  if (std::find(builds.begin(), builds.end(), &kNativeKernelsV4) == builds.end()) {
    return "it needs the x86-64-v4 build (AVX-512), which the host and the planned CPU do not "
           "both run";
  }
  for (const hw::CpuInfo* cpu : {&hw::cpu(), &hw::host_cpu()}) {
    if (!cpu->has_all({"amx_tile", "amx_bf16"})) {
      return fmt::format("{} has no amx_tile and amx_bf16 flags", cpu->describe());
    }
  }
  return hw::amx_refusal();
}

const NativeKernels* native_build_for(int mr, int nr) {
  for (const NativeKernels* k : native_builds()) {
    for (int t = 0; t < k->tile_count; ++t) {
      if (k->tiles[t].mr == mr && k->tiles[t].nr == nr) return k;
    }
  }
  return is_amx_tile(mr, nr) ? &kNativeKernelsV4 : nullptr;
}

namespace {
bool both_have_avx512_bf16() {
  return hw::cpu().has("avx512_bf16") && hw::host_cpu().has("avx512_bf16");
}
}  // namespace

const NativeBf16Kernels* native_bf16_kernels(const NativeKernels* k, int mr, int nr) {
  if (k == nullptr) return nullptr;
  if (k == &kNativeKernelsV4 && is_amx_tile(mr, nr)) return native_amx_route();
  return both_have_avx512_bf16() && k->bf16_pairs != nullptr ? k->bf16_pairs : k->bf16_widened;
}

NativeDecodeBf16 native_decode_bf16_kernel(const NativeKernels* k) {
  if (k == nullptr) return nullptr;
  const bool pairs = both_have_avx512_bf16() && k->gemv_rows_bf16_pairs != nullptr;
  return pairs ? k->gemv_rows_bf16_pairs : k->gemv_rows_bf16;
}

int native_packed_bytes(bool bf16, int mr, int nr) {
  if (!bf16) return 4;
  if (is_amx_shape(mr, nr)) return 2;
  const NativeKernels* k = native_build_for(mr, nr);
  const NativeBf16Kernels* route = native_bf16_kernels(k, mr, nr);
  return route != nullptr && route != k->bf16_widened ? 2 : 4;
}

const NativeKernels* native_decode_build() {
  const auto& builds = native_builds();
  return builds.empty() ? nullptr : builds.front();
}

}  // namespace tunekit::ops::detail
