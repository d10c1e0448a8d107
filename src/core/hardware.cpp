// Reads CPU model, ISA flags, cache sizes and the usable core count once.
// See include/tunekit/core/hardware.hpp.
#include "tunekit/core/hardware.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace tunekit::hw {
namespace {

std::size_t parse_cache_size(std::string text) {
  // sysfs writes e.g. "48K", "2048K", "105M".
  if (text.empty()) return 0;
  std::size_t mult = 1;
  char unit = text.back();
  if (unit == '\n') {
    text.pop_back();
    unit = text.empty() ? '0' : text.back();
  }
  if (unit == 'K') mult = 1024;
  if (unit == 'M') mult = 1024 * 1024;
  if (unit == 'K' || unit == 'M') text.pop_back();
  try {
    return static_cast<std::size_t>(std::stoull(text)) * mult;
  } catch (...) {
    return 0;
  }
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

CpuInfo detect() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && info.model.empty()) info.model = value;
    if (key == "flags" && flags.empty()) {
      std::istringstream ss(value);
      std::string f;
      while (ss >> f) flags.insert(f);
    }
  }
  if (info.model.empty()) info.model = "unknown";
  static const char* kRelevant[] = {"avx2",     "fma",         "avx512f",     "avx512bw",
                                    "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
                                    "amx_tile", "amx_bf16",    "amx_int8"};
  for (const char* f : kRelevant) {
    if (flags.count(f)) {
      if (!info.isa.empty()) info.isa += '+';
      info.isa += f;
    }
  }
  if (info.isa.empty()) info.isa = "baseline";
  for (int idx = 0; idx < 8; ++idx) {
    const std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/";
    const std::string level = read_line(base + "level");
    if (level.empty()) break;
    const std::string type = read_line(base + "type");
    const std::size_t size = parse_cache_size(read_line(base + "size"));
    if (level == "1" && type == "Data") info.l1d_bytes = size;
    if (level == "2") info.l2_bytes = size;
    if (type != "Instruction") info.llc_bytes = std::max(info.llc_bytes, size);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    info.usable_cores = std::max(1, CPU_COUNT(&set));
  return info;
}

}  // namespace

const CpuInfo& cpu() {
  static const CpuInfo info = detect();
  return info;
}

std::size_t effective_llc_bytes() {
  constexpr std::size_t kCap = std::size_t{256} << 20;
  const std::size_t llc = cpu().llc_bytes;
  if (llc == 0) return std::size_t{64} << 20;
  return std::min(llc, kCap);
}

}  // namespace tunekit::hw
