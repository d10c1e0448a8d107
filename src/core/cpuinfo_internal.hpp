// Helpers shared by the /proc/cpuinfo parser and the host detection (src/core only).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/core/hardware.hpp"

namespace tunekit::hw {

/// Bytes of a size written as sysfs and lscpu do: "48K", "2048K", "105M", "2 MiB", or plain
/// bytes. nullopt for anything else.
std::optional<std::size_t> parse_cache_size(std::string_view text);

/// The '+'-joined relevant ISA flags (CpuInfo::isa), "baseline" when none.
std::string isa_summary(const CpuInfo& info);

/// CPUs in this process's affinity mask (at least 1).
int affinity_cores();

/// Sets the fields of `info` that `text` names (first processor block wins).
/// Errors: as parse_cpuinfo; fields read before the error stay set.
Status fill_from_cpuinfo(std::string_view text, const std::string& name, CpuInfo& info);

}  // namespace tunekit::hw
