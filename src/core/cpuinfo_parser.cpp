// parse_cpuinfo() and load_cpu_fixture(): CpuInfo from /proc/cpuinfo-like text (the real file or
// a test fixture such as tests/data/cpu/amd_zen3.txt). See include/tunekit/core/hardware.hpp.
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <sstream>

#include "core/cpuinfo_internal.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/core/hardware.hpp"

namespace tunekit::hw {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int> parse_decimal(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

// The fields a cpuinfo block sets, in the order of first appearance; later repeats (the other
// processors of a real /proc/cpuinfo) are ignored.
struct Fields {
  std::optional<std::string> vendor, family, model, model_name, flags, l1d, l2, l3;
  std::size_t family_line = 0, model_line = 0, l1d_line = 0, l2_line = 0, l3_line = 0;
};

// Sets `slot` (and its line) unless already set.
void keep_first(std::optional<std::string>& slot, std::size_t* line_slot, std::string_view value,
                std::size_t line) {
  if (slot) return;
  slot = std::string(value);
  if (line_slot != nullptr) *line_slot = line;
}

Status read_fields(std::string_view text, const std::string& name, Fields& f) {
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return Status(StatusCode::kParseError,
                    fmt::format("{}:{}: expected 'key : value', got '{}'", name, line_no, line));
    }
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (key == "vendor_id") keep_first(f.vendor, nullptr, value, line_no);
    if (key == "cpu family") keep_first(f.family, &f.family_line, value, line_no);
    if (key == "model") keep_first(f.model, &f.model_line, value, line_no);
    if (key == "model name") keep_first(f.model_name, nullptr, value, line_no);
    if (key == "flags") keep_first(f.flags, nullptr, value, line_no);
    if (key == "l1d cache") keep_first(f.l1d, &f.l1d_line, value, line_no);
    if (key == "l2 cache") keep_first(f.l2, &f.l2_line, value, line_no);
    if (key == "l3 cache") keep_first(f.l3, &f.l3_line, value, line_no);
  }
  return Status::ok();
}

Status require(const std::optional<std::string>& field, std::string_view key,
               const std::string& name) {
  if (field) return Status::ok();
  return Status(StatusCode::kParseError, fmt::format("{}: no '{}' line", name, key));
}

Expected<int> integer_field(const std::string& value, std::string_view key, std::size_t line,
                            const std::string& name) {
  if (auto v = parse_decimal(value)) return *v;
  return Status(
      StatusCode::kParseError,
      fmt::format("{}:{}: '{}' must be a non-negative integer, got '{}'", name, line, key, value));
}

Expected<std::size_t> cache_field(const std::optional<std::string>& value, std::string_view key,
                                  std::size_t line, const std::string& name) {
  if (!value) return std::size_t{0};
  if (auto bytes = parse_cache_size(*value)) return *bytes;
  return Status(StatusCode::kParseError,
                fmt::format("{}:{}: '{}' must be a size such as 48K, 2M or 1048576, got '{}'", name,
                            line, key, *value));
}

std::vector<std::string> split_flags(const std::string& text) {
  std::vector<std::string> flags;
  std::istringstream ss(text);
  for (std::string f; ss >> f;) flags.push_back(f);
  std::sort(flags.begin(), flags.end());
  flags.erase(std::unique(flags.begin(), flags.end()), flags.end());
  return flags;
}

}  // namespace

std::optional<std::size_t> parse_cache_size(std::string_view text) {
  text = trim(text);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  std::size_t value = 0;
  if (std::from_chars(text.data(), text.data() + digits, value).ec != std::errc()) {
    return std::nullopt;
  }
  const std::string_view unit = trim(text.substr(digits));
  std::size_t mult = 0;
  if (unit.empty() || unit == "B") mult = 1;
  if (unit == "K" || unit == "KB" || unit == "KiB") mult = std::size_t{1} << 10;
  if (unit == "M" || unit == "MB" || unit == "MiB") mult = std::size_t{1} << 20;
  if (unit == "G" || unit == "GB" || unit == "GiB") mult = std::size_t{1} << 30;
  if (mult == 0) return std::nullopt;
  return value * mult;
}

std::string isa_summary(const CpuInfo& info) {
  static constexpr std::string_view kRelevant[] = {
      "avx2",        "fma",         "avx512f",  "avx512bw", "avx512vl", "avx512_vnni",
      "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"};
  std::string isa;
  for (std::string_view f : kRelevant) {
    if (!info.has(f)) continue;
    if (!isa.empty()) isa += '+';
    isa += f;
  }
  return isa.empty() ? "baseline" : isa;
}

int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

Status fill_from_cpuinfo(std::string_view text, const std::string& name, CpuInfo& info) {
  Fields f;
  TUNEKIT_RETURN_IF_ERROR(read_fields(text, name, f));
  if (f.vendor) info.vendor = *f.vendor;
  if (f.model_name) info.model = *f.model_name;
  if (f.flags) info.flags = split_flags(*f.flags);
  if (f.family) {
    auto v = integer_field(*f.family, "cpu family", f.family_line, name);
    if (!v) return v.status();
    info.family = *v;
  }
  if (f.model) {
    auto v = integer_field(*f.model, "model", f.model_line, name);
    if (!v) return v.status();
    info.model_number = *v;
  }
  auto l1d = cache_field(f.l1d, "l1d cache", f.l1d_line, name);
  auto l2 = cache_field(f.l2, "l2 cache", f.l2_line, name);
  auto l3 = cache_field(f.l3, "l3 cache", f.l3_line, name);
  for (const auto* size : {&l1d, &l2, &l3}) {
    if (!*size) return size->status();
  }
  if (f.l1d) info.l1d_bytes = *l1d;
  if (f.l2) info.l2_bytes = *l2;
  if (f.l3) info.llc_bytes = *l3;
  for (auto [field, key] : {std::pair{&f.vendor, "vendor_id"},
                            {&f.family, "cpu family"},
                            {&f.model, "model"},
                            {&f.flags, "flags"}}) {
    TUNEKIT_RETURN_IF_ERROR(require(*field, key, name));
  }
  return Status::ok();
}

Expected<CpuInfo> parse_cpuinfo(std::string_view text, const std::string& name) {
  CpuInfo info;
  TUNEKIT_RETURN_IF_ERROR(fill_from_cpuinfo(text, name, info));
  if (info.model.empty()) info.model = "unknown";
  info.isa = isa_summary(info);
  info.usable_cores = affinity_cores();
  info.source = name;
  return info;
}

Expected<CpuInfo> load_cpu_fixture(const std::string& path) {
  // Regular files only (a FIFO would block, a device like /dev/zero never ends), 16 MiB at most
  // (a copy of /proc/cpuinfo of a 256-CPU machine is under 1 MiB).
  constexpr std::size_t kMaxFixtureBytes = std::size_t{16} << 20;
  auto fd = files::open_regular(path, O_RDONLY, "CPU fixture");
  if (!fd) return fd.status();
  auto text = files::read_all(fd->get(), path, "CPU fixture", kMaxFixtureBytes);
  if (!text) return text.status();
  return parse_cpuinfo(*text, path);
}

}  // namespace tunekit::hw
