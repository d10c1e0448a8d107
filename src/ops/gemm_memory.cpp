// The memory guard of GEMM tuning: bytes allocated by a workspace and by a whole tuning, and the
// memory this process may still take (MemAvailable, lowered to its control group's room).
// See include/tunekit/ops/gemm_memory.hpp.
#include "tunekit/ops/gemm_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "tunekit/measure/timing.hpp"
#include "tunekit/tunable/params_traits.hpp"

namespace tunekit::ops {
namespace {

constexpr std::size_t kWorkspaceAlignment = 64;  // GemmWorkspace's buffers (gemm_workspace.cpp)

std::size_t rounded(std::size_t bytes) noexcept {
  return (std::max<std::size_t>(bytes, 1) + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
         kWorkspaceAlignment;
}

/// The first whitespace-separated number of `path`; nullopt when unreadable or "max".
std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    return std::stoull(word);
  } catch (...) {
    return std::nullopt;
  }
}

/// The value of `key` in a "key value" file (/proc/meminfo's "key:", memory.stat's "key");
/// nullopt when absent.
std::optional<std::uint64_t> read_keyed(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string name;
    std::uint64_t value = 0;
    if (!(fields >> name >> value)) continue;
    if (!name.empty() && name.back() == ':') name.pop_back();
    if (name == key) return value;
  }
  return std::nullopt;
}

/// Room left under a limit: limit - (usage - reclaimable page cache).
std::optional<std::uint64_t> room(std::optional<std::uint64_t> limit,
                                  std::optional<std::uint64_t> usage,
                                  std::optional<std::uint64_t> inactive_file) {
  // cgroup v1 writes "no limit" as a huge page-aligned number.
  if (!limit || !usage || *limit >= (std::uint64_t{1} << 60)) return std::nullopt;
  const std::uint64_t used = *usage - std::min(*usage, inactive_file.value_or(0));
  return *limit > used ? *limit - used : 0;
}

/// The cgroup path of this process for `controller` ("" for the v2 unified hierarchy), as
/// /proc/self/cgroup lists it ("4:memory:/a/b", "0::/a/b").
std::optional<std::string> cgroup_path(std::string_view controller) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    std::string_view list = std::string_view(line).substr(first + 1, second - first - 1);
    bool match = controller.empty() && list.empty();
    while (!controller.empty() && !list.empty() && !match) {
      const std::size_t comma = list.find(',');
      match = list.substr(0, comma) == controller;
      list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    }
    if (match) return line.substr(second + 1);
  }
  return std::nullopt;
}

/// The cgroup folder of `path` under the mount point `root` ("/" is the root itself).
std::string cgroup_dir(std::string_view root, const std::string& path) {
  return fmt::format("{}{}", root, path == "/" ? std::string() : path);
}

/// The tightest room under the memory limits of this process's cgroup v2 and its ancestors.
std::optional<std::uint64_t> cgroup_v2_room() {
  auto path = cgroup_path("");
  if (!path) return std::nullopt;
  std::optional<std::uint64_t> best;
  for (std::string p = *path;; p = p.substr(0, p.rfind('/'))) {
    const std::string dir = cgroup_dir("/sys/fs/cgroup", p);
    const auto left = room(read_number(fmt::format("{}/memory.max", dir)),
                           read_number(fmt::format("{}/memory.current", dir)),
                           read_keyed(fmt::format("{}/memory.stat", dir), "inactive_file"));
    if (left) best = std::min(best.value_or(*left), *left);
    if (p.empty() || p == "/") break;
  }
  return best;
}

/// The room under the hierarchical memory limit of this process's cgroup v1 (its own folder, or
/// the mount's root when a cgroup namespace shows only that).
std::optional<std::uint64_t> cgroup_v1_room() {
  auto path = cgroup_path("memory");
  if (!path) return std::nullopt;
  for (const std::string& dir :
       {cgroup_dir("/sys/fs/cgroup/memory", *path), cgroup_dir("/sys/fs/cgroup/memory", "/")}) {
    const std::string stat = fmt::format("{}/memory.stat", dir);
    auto usage = read_number(fmt::format("{}/memory.usage_in_bytes", dir));
    if (!usage) continue;
    return room(read_keyed(stat, "hierarchical_memory_limit"), usage,
                read_keyed(stat, "total_inactive_file"));
  }
  return std::nullopt;
}

}  // namespace

std::size_t gemm_workspace_bytes(const GemmParams& params, std::size_t copies) noexcept {
  const std::size_t bias = params.bias_bytes() > 0 ? rounded(params.bias_bytes()) : 0;
  const std::size_t one_copy =
      rounded(params.a_bytes()) + rounded(params.b_bytes()) + rounded(params.c_bytes()) + bias;
  return copies * one_copy + rounded(params.c_bytes());
}

std::size_t gemm_tuning_bytes(const GemmParams& params, const TuningSettings& settings,
                              bool own_operands) noexcept {
  using Traits = ParamsTraits<GemmParams>;
  const std::size_t copies =
      measure::rotating_copies(settings.rotating_buffer_bytes, Traits::output_bytes(params),
                               Traits::input_bytes(params), settings.max_rotating_copies);
  const bool check = settings.numerical_check.enabled && Traits::kCanCompare;
  std::size_t bytes = gemm_workspace_bytes(params, copies + (check ? 2 : 0));
  if (own_operands) bytes += gemm_workspace_bytes(params, 1);
  if (has_bf16_inputs(params.dtype)) {
    // Libraries without bf16 arithmetic run on float copies of one matrix of A and B at a time.
    bytes += static_cast<std::size_t>(params.m * params.k + params.k * params.n) * sizeof(float);
  }
  if (params.dtype == DType::kBFloat16) {
    // Candidates without a bf16 output write a float copy of C (and bias) first (bf16_output).
    bytes += params.c_bytes() * 2 + params.bias_bytes() * 2;
  }
  return bytes;
}

std::size_t available_memory_bytes() {
  std::optional<std::uint64_t> bytes;
  if (auto kib = read_keyed("/proc/meminfo", "MemAvailable")) bytes = *kib * 1024;
  for (auto left : {cgroup_v2_room(), cgroup_v1_room()}) {
    if (left) bytes = std::min(bytes.value_or(*left), *left);
  }
  return static_cast<std::size_t>(bytes.value_or(0));
}

Status check_memory_for(std::size_t bytes, std::string_view what) {
  const std::size_t available = available_memory_bytes();
  if (available == 0 || static_cast<long double>(bytes) <= 0.9L * available) return Status::ok();
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return Status(
      StatusCode::kRuntimeError,
      fmt::format("{} needs {:.2f} GiB, only {:.2f} GiB of memory is available", what,
                  static_cast<double>(bytes) / kGiB, static_cast<double>(available) / kGiB));
}

}  // namespace tunekit::ops
