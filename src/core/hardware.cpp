// The CPU facts of this process: the real CPU (host_cpu), the one candidate lists are planned
// for (cpu: real, TUNEKIT_CPU_FIXTURE or a ScopedCpuOverride), and CpuInfo's queries.
// See include/tunekit/core/hardware.hpp.
#include "tunekit/core/hardware.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "core/cpuinfo_internal.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit::hw {
namespace {

constexpr const char* kFixtureVariable = "TUNEKIT_CPU_FIXTURE";

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// L1d, L2 and the largest data/unified cache of cpu0 from sysfs.
void read_sysfs_caches(CpuInfo& info) {
  for (int idx = 0; idx < 8; ++idx) {
    const std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/";
    const std::string level = read_line(base + "level");
    if (level.empty()) break;
    const std::string type = read_line(base + "type");
    const std::size_t size = parse_cache_size(read_line(base + "size")).value_or(0);
    if (level == "1" && type == "Data") info.l1d_bytes = size;
    if (level == "2") info.l2_bytes = size;
    if (type != "Instruction") info.llc_bytes = std::max(info.llc_bytes, size);
  }
}

CpuInfo detect_host() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream text;
  text << in.rdbuf();
  // Lenient: a machine whose /proc/cpuinfo lacks a field keeps the defaults for it.
  (void)fill_from_cpuinfo(text.str(), "/proc/cpuinfo", info);
  if (info.model.empty()) info.model = "unknown";
  info.isa = isa_summary(info);
  read_sysfs_caches(info);
  info.usable_cores = affinity_cores();
  info.source = "/proc/cpuinfo";
  return info;
}

struct Planned {
  CpuInfo info;
  Status fixture_status;
};

Planned plan_cpu() {
  const char* path = std::getenv(kFixtureVariable);
  if (path == nullptr || *path == '\0') return {host_cpu(), Status::ok()};
  Expected<CpuInfo> fixture = load_cpu_fixture(path);
  if (fixture) return {*fixture, Status::ok()};
  return {host_cpu(), Status(fixture.status().code(),
                             fmt::format("{}: {}", kFixtureVariable, fixture.status().message()))};
}

const Planned& planned() {
  static const Planned p = plan_cpu();
  return p;
}

// The first cpu() call with a bad fixture says so once (the CLI refuses to start instead).
void warn_about_bad_fixture() {
  static std::once_flag once;
  if (planned().fixture_status.is_ok()) return;
  std::call_once(
      once, [] { log::warn(planned().fixture_status.message() + "; using this machine's CPU"); });
}

std::atomic<const CpuInfo*> g_override{nullptr};

}  // namespace

std::string_view x86_level_name(X86Level level) noexcept {
  switch (level) {
    case X86Level::kBaseline:
      return "x86-64";
    case X86Level::kV2:
      return "x86-64-v2";
    case X86Level::kV3:
      return "x86-64-v3";
    case X86Level::kV4:
      return "x86-64-v4";
  }
  return "x86-64";
}

bool CpuInfo::has(std::string_view flag) const {
  return std::binary_search(flags.begin(), flags.end(), flag,
                            [](std::string_view a, std::string_view b) { return a < b; });
}

bool CpuInfo::has_all(std::initializer_list<std::string_view> wanted) const {
  return std::all_of(wanted.begin(), wanted.end(), [this](std::string_view f) { return has(f); });
}

X86Level CpuInfo::x86_level() const {
  // Source: the x86-64 psABI's micro-architecture levels, in /proc/cpuinfo's flag names
  // ("pni" is SSE3, "abm" covers LZCNT).
  if (!has_all({"cx16", "lahf_lm", "popcnt", "pni", "ssse3", "sse4_1", "sse4_2"})) {
    return X86Level::kBaseline;
  }
  if (!has_all({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"})) {
    return X86Level::kV2;
  }
  if (!has_all({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})) return X86Level::kV3;
  return X86Level::kV4;
}

std::string CpuInfo::describe() const {
  return fmt::format("{} ({} family {} model {})", model, vendor.empty() ? "unknown" : vendor,
                     family, model_number);
}

const CpuInfo& host_cpu() {
  static const CpuInfo info = detect_host();
  return info;
}

const CpuInfo& cpu() {
  if (const CpuInfo* o = g_override.load(std::memory_order_acquire)) return *o;
  warn_about_bad_fixture();
  return planned().info;
}

Status cpu_fixture_status() { return planned().fixture_status; }

ScopedCpuOverride::ScopedCpuOverride(CpuInfo info)
    : info_(std::move(info)), previous_(g_override.load(std::memory_order_acquire)) {
  info_.usable_cores = host_cpu().usable_cores;
  if (info_.isa.empty()) info_.isa = isa_summary(info_);
  g_override.store(&info_, std::memory_order_release);
}

ScopedCpuOverride::~ScopedCpuOverride() { g_override.store(previous_, std::memory_order_release); }

std::size_t effective_llc_bytes() {
  constexpr std::size_t kCap = std::size_t{256} << 20;
  const std::size_t llc = host_cpu().llc_bytes;
  if (llc == 0) return std::size_t{64} << 20;
  return std::min(llc, kCap);
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

}  // namespace tunekit::hw
