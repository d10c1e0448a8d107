// Facts about the machine the process runs on: vendor, family/model, ISA flags, caches, usable
// cores. Read once from /proc/cpuinfo, sysfs and the affinity mask; used by validators, defaults
// and the choice of GEMM candidates.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit::hw {

/// x86-64 micro-architecture levels (the psABI's x86-64-v2/v3/v4), as /proc/cpuinfo flags:
/// v2 adds SSE3/SSSE3/SSE4.1/SSE4.2/POPCNT/CX16/LAHF; v3 AVX, AVX2, FMA, BMI1/2, F16C, LZCNT
/// ("abm"), MOVBE, XSAVE; v4 AVX-512 F/BW/CD/DQ/VL.
enum class X86Level { kBaseline = 1, kV2 = 2, kV3 = 3, kV4 = 4 };

/// "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4" (the names GCC's -march takes).
std::string_view x86_level_name(X86Level level) noexcept;

struct CpuInfo {
  std::string model;     ///< "model name", e.g. "Intel(R) Xeon(R) Platinum 8480+"
  std::string isa;       ///< '+'-joined subset of relevant flags, e.g. "avx2+avx512f+amx_bf16"
  std::string vendor;    ///< "vendor_id": "GenuineIntel", "AuthenticAMD", ...
  int family = 0;        ///< "cpu family" (display family: 6 for Intel, 25 for Zen 3/4)
  int model_number = 0;  ///< "model" (display model: 1 Zen 3 Milan, 17 Zen 4 Genoa)
  std::vector<std::string> flags;  ///< every "flags" word, sorted and unique
  std::size_t l1d_bytes = 0;       ///< per core
  std::size_t l2_bytes = 0;        ///< per core
  std::size_t llc_bytes = 0;       ///< last-level cache as reported by sysfs (may be the host's)
  int usable_cores = 1;            ///< CPUs in this process's affinity mask (never from a fixture)
  std::string source;              ///< where the facts come from: "/proc/cpuinfo" or a fixture path

  /// True when /proc/cpuinfo lists `flag` (kernel names: "avx512f", "amx_bf16", "abm", ...).
  bool has(std::string_view flag) const;
  /// True when every one of `flags` is listed.
  bool has_all(std::initializer_list<std::string_view> flags) const;
  /// Highest x86-64 level whose flags are all listed.
  X86Level x86_level() const;
  bool is_intel() const { return vendor == "GenuineIntel"; }
  bool is_amd() const { return vendor == "AuthenticAMD"; }
  /// One line naming the CPU, e.g. "AMD EPYC (AuthenticAMD family 25 model 1)".
  std::string describe() const;
};

/// The CPU that candidate lists and validators are planned for (computed on first call,
/// thread-safe): the real one, or the fixture named by TUNEKIT_CPU_FIXTURE (for tests only:
/// it changes what is offered, never what runs), or a ScopedCpuOverride while one is alive.
/// Code about to execute special instructions checks host_cpu() instead.
const CpuInfo& cpu();

/// The CPU this process really runs on (never overridden). Guards instructions before they run.
const CpuInfo& host_cpu();

/// This host's name (gethostname; "" when unknown), recorded with every tuned result.
std::string host_name();

/// Whether TUNEKIT_CPU_FIXTURE (if set) could be loaded. When it could not, cpu() is the real
/// CPU. Errors: kParseError/kIoError "TUNEKIT_CPU_FIXTURE: <file>:<line>: <what>" (one line).
Status cpu_fixture_status();

/// Parses /proc/cpuinfo-like `text` (the first value of "vendor_id", "cpu family", "model",
/// "model name" and "flags"; fixture-only "l1d cache", "l2 cache", "l3 cache" sizes such as
/// "48K", "2M" or bytes; '#' comments; other keys ignored). usable_cores comes from this
/// process's affinity mask. `name` is used in messages and as `source`.
/// Errors: kParseError "<name>:<line>: <what>" for a line without ':', a non-integer family or
/// model, a bad cache size; "<name>: no '<key>' line" when vendor_id, cpu family, model or flags
/// is missing.
Expected<CpuInfo> parse_cpuinfo(std::string_view text, const std::string& name);

/// Reads and parses the file at `path` (parse_cpuinfo). Errors: kIoError when unreadable.
Expected<CpuInfo> load_cpu_fixture(const std::string& path);

/// Makes cpu() return `info` until destroyed (for unit tests; not thread-safe against
/// concurrent cpu() callers that keep the reference). Nests: the previous override returns.
class ScopedCpuOverride {
 public:
  explicit ScopedCpuOverride(CpuInfo info);
  ~ScopedCpuOverride();
  ScopedCpuOverride(const ScopedCpuOverride&) = delete;
  ScopedCpuOverride& operator=(const ScopedCpuOverride&) = delete;

 private:
  CpuInfo info_;
  const CpuInfo* previous_ = nullptr;
};

/// Whether this process may execute AMX tile instructions: the host CPU has amx_tile and Linux
/// granted the process the tile data state (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA),
/// Linux 5.16+; without it the first tile instruction raises SIGILL). Asked once per process on
/// the first call, thread-safe; nothing is asked where the host CPU lacks amx_tile or
/// TUNEKIT_NATIVE_AMX is 0 (read on the first call; default 1).
bool amx_permitted();

/// Why amx_permitted() is false, in one line ("" when it is true): TUNEKIT_NATIVE_AMX is 0 or not
/// a boolean, the host CPU has no amx_tile, or the kernel refused the request (its errno text).
const std::string& amx_refusal();

/// Bytes of last-level cache a tuning run should defeat with rotating buffers: the sysfs LLC
/// size capped at 256 MiB (a VM reports the host's LLC; 48-192 MB were usable on the Intel Xeon).
std::size_t effective_llc_bytes();

}  // namespace tunekit::hw
