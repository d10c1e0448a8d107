// Permission to use the AMX tile state (include/tunekit/core/hardware.hpp). Linux enables the
// 8 KiB tile data state (XSAVE feature 18, XTILEDATA) per process on request: ARCH_REQ_XCOMP_PERM
// and ARCH_GET_XCOMP_PERM of arch_prctl(2) (Documentation/arch/x86/xstate.rst of the kernel).
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "tunekit/core/env.hpp"
#include "tunekit/core/hardware.hpp"

namespace tunekit::hw {
namespace {

constexpr int kArchGetXcompPerm = 0x1022;
constexpr int kArchReqXcompPerm = 0x1023;
constexpr unsigned long kXfeatureXtiledata = 18;

// "" when the tile data state is granted, else why not.
std::string request_tiles() {
  auto wanted = env::get_bool("TUNEKIT_NATIVE_AMX");
  if (!wanted) return wanted.status().message();
  if (!wanted->value_or(true)) return "TUNEKIT_NATIVE_AMX=0 (the tile state is not asked for)";
  if (!host_cpu().has("amx_tile")) return "the host CPU has no amx_tile flag";
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) {
    return std::string("Linux refused the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM: ") +
           std::strerror(errno) + ")";
  }
  std::uint64_t granted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &granted) != 0 ||
      (granted & (std::uint64_t{1} << kXfeatureXtiledata)) == 0) {
    return "Linux did not grant the AMX tile state (arch_prctl ARCH_GET_XCOMP_PERM)";
  }
  return "";
}

}  // namespace

const std::string& amx_refusal() {
  static const std::string refusal = request_tiles();
  return refusal;
}

bool amx_permitted() { return amx_refusal().empty(); }

}  // namespace tunekit::hw
