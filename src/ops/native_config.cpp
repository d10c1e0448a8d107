// Configurations of tunekit's GEMM kernel families: solution names, parsing, the builds this CPU
// runs, and configuration spaces from the CPU's facts. See include/tunekit/ops/native_gemm.hpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>

#include "ops/native_build.hpp"
#include "tunekit/ops/native_gemm.hpp"

namespace tunekit::ops {
namespace {

constexpr std::int64_t kKcValues[] = {64, 128, 192, 256, 384, 512};
// bf16 problems: where packed as bf16 (2 bytes per element), deeper panels fit the same caches
// (the constraints drop what does not fit the tile's route).
constexpr std::int64_t kKcValuesBf16[] = {64, 128, 192, 256, 384, 512, 768, 1024};
constexpr std::int64_t kMcValues[] = {48, 96, 144, 192, 288, 384, 576, 768};
constexpr std::int64_t kNcValues[] = {256, 512, 1024, 2048, 4096, 8192};
constexpr int kRowsValues[] = {1, 2, 4, 8};

std::span<const std::int64_t> kc_values(DType dtype) {
  if (has_bf16_inputs(dtype)) return kKcValuesBf16;
  return kKcValues;
}

// The values below `dim`, then the first at or above it (bigger ones behave the same).
std::vector<nlohmann::json> up_to(std::span<const std::int64_t> values, std::int64_t dim) {
  std::vector<nlohmann::json> out;
  for (std::int64_t v : values) {
    out.emplace_back(v);
    if (v >= dim) break;
  }
  return out;
}

std::vector<nlohmann::json> thread_values(int threads) {
  std::vector<nlohmann::json> out{1};
  if (threads > 1) out.emplace_back(threads);
  return out;
}

// "16x6" -> (16, 6).
std::pair<int, int> parse_tile(const std::string& tile) {
  const auto x = tile.find('x');
  return {std::stoi(tile.substr(0, x)), std::stoi(tile.substr(x + 1))};
}

// The cache sizes the blocking is planned for (bytes): the CPU's, or 32 KiB, 512 KiB and 16 MiB
// where it does not report one.
struct Caches {
  std::int64_t l1, l2, llc;
};
Caches caches_of(const hw::CpuInfo& cpu) {
  auto or_else = [](std::size_t bytes, std::int64_t fallback) {
    return bytes ? static_cast<std::int64_t>(bytes) : fallback;
  };
  return {or_else(cpu.l1d_bytes, 32 << 10), or_else(cpu.l2_bytes, 512 << 10),
          or_else(cpu.llc_bytes, 16 << 20)};
}

int round_to(std::int64_t value, int multiple) {
  return static_cast<int>(std::max<std::int64_t>(multiple, value / multiple * multiple));
}

// Splits "family[a=1;b=2]" into its fields after checking the family; kNotFound for another.
// Fields are separated by ';' (names written since then have no comma, so that PyTorch's reader,
// which splits a results line on every comma, reads them) or by ',' (names in older files).
Expected<std::vector<std::pair<std::string, std::string>>> fields_of(std::string_view name,
                                                                     std::string_view family) {
  if (name.substr(0, family.size()) != family || name.size() <= family.size() ||
      name[family.size()] != '[') {
    return Status(StatusCode::kNotFound, fmt::format("'{}' is not a {} solution", name, family));
  }
  if (name.back() != ']') {
    const char* what = name.find(']') == std::string_view::npos ? "missing closing ']'"
                                                                : "text after the closing ']'";
    return Status(StatusCode::kParseError, fmt::format("'{}': {}", name, what));
  }
  std::vector<std::pair<std::string, std::string>> fields;
  std::string_view body = name.substr(family.size() + 1, name.size() - family.size() - 2);
  if (const auto bracket = body.find_first_of("[]"); bracket != std::string_view::npos) {
    return Status(StatusCode::kParseError,
                  fmt::format("'{}': '{}' inside the brackets", name, body[bracket]));
  }
  while (!body.empty()) {
    const auto comma = body.find_first_of(",;");
    const std::string_view field = body.substr(0, comma);
    const auto eq = field.find('=');
    if (eq == std::string_view::npos) {
      return Status(StatusCode::kParseError,
                    fmt::format("'{}': field '{}' is not key=value", name, field));
    }
    fields.emplace_back(std::string(field.substr(0, eq)), std::string(field.substr(eq + 1)));
    body = comma == std::string_view::npos ? std::string_view() : body.substr(comma + 1);
  }
  return fields;
}

// The fields in exactly the order `keys`.
Status expect_keys(std::string_view name,
                   const std::vector<std::pair<std::string, std::string>>& fields,
                   std::initializer_list<std::string_view> keys) {
  std::size_t i = 0;
  for (std::string_view key : keys) {
    if (i >= fields.size() || fields[i].first != key) {
      return Status(StatusCode::kParseError,
                    fmt::format("'{}': expected field '{}' at position {}", name, key, i + 1));
    }
    ++i;
  }
  if (fields.size() != keys.size()) {
    return Status(StatusCode::kParseError,
                  fmt::format("'{}': unexpected field '{}'", name, fields[i].first));
  }
  return Status::ok();
}

Expected<int> int_field(std::string_view name, const std::pair<std::string, std::string>& field,
                        int lo, int hi) {
  int value = 0;
  const std::string& text = field.second;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  // One spelling per value (no sign, no leading zero): a name is a key in the results file.
  const bool canonical = !text.empty() && (text[0] != '0' || text.size() == 1);
  if (!canonical || ec != std::errc() || end != text.data() + text.size() || value < lo ||
      value > hi) {
    return Status(StatusCode::kParseError,
                  fmt::format("'{}': {}={} is not an integer in [{}, {}] written without sign or "
                              "leading zero",
                              name, field.first, text, lo, hi));
  }
  return value;
}

}  // namespace

std::string solution_name(const NativeGemmConfig& c) {
  return fmt::format("{}[mr={};nr={};kc={};mc={};nc={};order={};threads={}{}]", kNativeGemmFamily,
                     c.mr, c.nr, c.kc, c.mc, c.nc, c.order, c.threads,
                     c.part == "own" ? ";part=own" : "");
}

std::string solution_name(const NativeDecodeConfig& c) {
  return fmt::format("{}[rows={};threads={}]",
                     has_bf16_inputs(c.dtype) ? kNativeDecodeBf16Family : kNativeDecodeFamily,
                     c.rows, c.threads);
}

Expected<NativeGemmConfig> parse_native_gemm_name(std::string_view name) {
  auto fields = fields_of(name, kNativeGemmFamily);
  if (!fields) return fields.status();
  auto& f = *fields;
  NativeGemmConfig c;
  if (f.size() >= 8 && f[7].first == "part") {
    // One spelling per configuration: the default ("shared") is written without the field.
    if (f[7].second != "own") {
      return Status(StatusCode::kParseError,
                    fmt::format("'{}': part={} is not own (part=shared is written without the "
                                "field)",
                                name, f[7].second));
    }
    c.part = "own";
    f.erase(f.begin() + 7);
  }
  TUNEKIT_RETURN_IF_ERROR(expect_keys(name, f, {"mr", "nr", "kc", "mc", "nc", "order", "threads"}));
  int* ints[] = {&c.mr, &c.nr, &c.kc, &c.mc, &c.nc};
  const int hi[] = {64, 64, 1 << 20, 1 << 24, 1 << 24};
  for (std::size_t i = 0; i < 5; ++i) {
    auto v = int_field(name, f[i], 1, hi[i]);
    if (!v) return v.status();
    *ints[i] = *v;
  }
  if (f[5].second != "ji" && f[5].second != "ij") {
    return Status(StatusCode::kParseError,
                  fmt::format("'{}': order={} is neither ji nor ij", name, f[5].second));
  }
  c.order = f[5].second;
  auto threads = int_field(name, f[6], 1, 1024);
  if (!threads) return threads.status();
  c.threads = *threads;
  if (c.part == "own" && c.threads == 1) {
    return Status(StatusCode::kParseError,
                  fmt::format("'{}': part=own needs more than one thread (threads=1)", name));
  }
  if (c.mc % c.mr != 0 || c.nc % c.nr != 0) {
    const bool mc = c.mc % c.mr != 0;
    return Status(StatusCode::kParseError,
                  fmt::format("'{}': {}={} is not a multiple of {}={}", name, mc ? "mc" : "nc",
                              mc ? c.mc : c.nc, mc ? "mr" : "nr", mc ? c.mr : c.nr));
  }
  if (detail::is_amx_shape(c.mr, c.nr) && !detail::is_amx_tile(c.mr, c.nr)) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("'{}': {}x{} is the AMX tile, which this process cannot use: {}",
                              name, c.mr, c.nr, detail::native_amx_refusal()));
  }
  if (detail::native_build_for(c.mr, c.nr) == nullptr) {
    std::vector<std::string> tiles;
    for (const auto& [mr, nr] : native_tiles()) tiles.push_back(fmt::format("{}x{}", mr, nr));
    return Status(StatusCode::kUnsupported,
                  fmt::format("'{}': no {}x{} micro-kernel runs on this CPU ({}; it runs {})", name,
                              c.mr, c.nr, hw::host_cpu().describe(),
                              tiles.empty() ? "none" : fmt::format("{}", fmt::join(tiles, ", "))));
  }
  return c;
}

Expected<NativeDecodeConfig> parse_native_decode_name(std::string_view name) {
  DType dtype = DType::kFloat;
  auto fields = fields_of(name, kNativeDecodeFamily);
  if (!fields && fields.status().code() == StatusCode::kNotFound) {
    dtype = DType::kBFloat16Float;
    fields = fields_of(name, kNativeDecodeBf16Family);
  }
  if (!fields) return fields.status();
  TUNEKIT_RETURN_IF_ERROR(expect_keys(name, *fields, {"rows", "threads"}));
  auto rows = int_field(name, (*fields)[0], 1, 1 << 20);
  if (!rows) return rows.status();
  if (std::find(std::begin(kRowsValues), std::end(kRowsValues), *rows) == std::end(kRowsValues)) {
    return Status(StatusCode::kParseError, fmt::format("'{}': rows must be 1, 2, 4 or 8", name));
  }
  auto threads = int_field(name, (*fields)[1], 1, 1024);
  if (!threads) return threads.status();
  if (detail::native_decode_build() == nullptr) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("'{}': no decode kernel runs on this CPU", name));
  }
  return NativeDecodeConfig{*rows, *threads, dtype};
}

std::vector<std::pair<int, int>> native_tiles() {
  std::vector<std::pair<int, int>> out;
  for (const detail::NativeKernels* k : detail::native_builds()) {
    for (int t = 0; t < k->tile_count; ++t) out.emplace_back(k->tiles[t].mr, k->tiles[t].nr);
  }
  return out;
}

std::vector<std::pair<int, int>> native_amx_tiles() {
  std::vector<std::pair<int, int>> out;
  if (const detail::NativeBf16Kernels* amx = detail::native_amx_route()) {
    for (int t = 0; t < amx->tile_count; ++t) out.emplace_back(amx->tiles[t].mr, amx->tiles[t].nr);
  }
  return out;
}

std::string native_amx_refusal() { return detail::native_amx_refusal(); }

Expected<std::shared_ptr<const ConfigSpace>> native_gemm_space(const GemmParams& p,
                                                               const hw::CpuInfo& cpu,
                                                               int threads) {
  auto tiles = native_tiles();
  if (tiles.empty()) {
    return Status(StatusCode::kUnsupported,
                  "native_f32: the kernels need AVX2 + FMA (x86-64-v3); " + cpu.describe());
  }
  if (has_bf16_inputs(p.dtype)) {
    for (const auto& tile : native_amx_tiles()) tiles.push_back(tile);
  }
  auto space = std::make_shared<ConfigSpace>();
  std::vector<nlohmann::json> tile_names;
  for (const auto& [mr, nr] : tiles) tile_names.emplace_back(fmt::format("{}x{}", mr, nr));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("tile", tile_names));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("kc", up_to(kc_values(p.dtype), p.k)));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("mc", up_to(kMcValues, p.m)));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("nc", up_to(kNcValues, p.n)));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("order", {"ji", "ij"}));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("threads", thread_values(threads)));
  std::vector<nlohmann::json> parts{"shared"};
  if (threads > 1) parts.emplace_back("own");
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("part", parts));
  TUNEKIT_RETURN_IF_ERROR(space->add_constraint(
      "part own needs more than one thread", {"threads", "part"}, [](const ConfigView& v) {
        return v.number("threads") > 1 || v["part"].get<std::string>() == "shared";
      }));
  const Caches caches = caches_of(cpu);
  const auto l1 = static_cast<double>(caches.l1);
  const auto l2 = static_cast<double>(caches.l2);
  const auto llc = static_cast<double>(caches.llc);
  auto tile_of = [](const ConfigView& v) { return parse_tile(v["tile"].get<std::string>()); };
  std::vector<bool> fits;      // per tile entity: the register budget of its build holds
  std::vector<double> packed;  // per tile entity: bytes per packed element
  for (const auto& [mr, nr] : tiles) {
    packed.push_back(detail::native_packed_bytes(has_bf16_inputs(p.dtype), mr, nr));
    if (detail::is_amx_shape(mr, nr)) {  // a shape of the AMX kernel's 8 tile registers
      fits.push_back(true);
      continue;
    }
    const detail::NativeKernels* k = detail::native_build_for(mr, nr);
    const int vectors = mr / k->vector_floats;
    fits.push_back(vectors * nr + vectors + 1 <= k->vector_registers);
  }
  TUNEKIT_RETURN_IF_ERROR(space->add_constraint(
      "accumulators + A vectors + 1 broadcast <= vector registers", {"tile"},
      [fits](const ConfigView& v) { return static_cast<bool>(fits[v.position(0)]); }));
  // Bytes per packed element: 4 (fp32, or bf16 widened), 2 where bf16 stays bf16 (pairs of
  // depths through AVX512-BF16, AMX tiles).
  auto bytes = [packed](const ConfigView& v) { return packed[v.position(0)]; };
  TUNEKIT_RETURN_IF_ERROR(
      space->add_constraint("kc x nr micro-panel of B <= L1d / 2", {"tile", "kc"},
                            [tile_of, bytes, l1](const ConfigView& v) {
                              return v.number("kc") * tile_of(v).second * bytes(v) <= l1 / 2;
                            }));
  TUNEKIT_RETURN_IF_ERROR(space->add_constraint(
      "mc x kc block of A <= L2", {"tile", "kc", "mc"}, [tile_of, bytes, l2](const ConfigView& v) {
        const int mc = round_to(static_cast<std::int64_t>(v.number("mc")), tile_of(v).first);
        return mc * v.number("kc") * bytes(v) <= l2;
      }));
  TUNEKIT_RETURN_IF_ERROR(space->add_constraint(
      "kc x nc panel of B <= LLC / 2", {"tile", "kc", "nc"},
      [tile_of, bytes, llc](const ConfigView& v) {
        const int nc = round_to(static_cast<std::int64_t>(v.number("nc")), tile_of(v).second);
        return nc * v.number("kc") * bytes(v) <= llc / 2;
      }));
  return std::shared_ptr<const ConfigSpace>(std::move(space));
}

NativeGemmConfig native_gemm_default(const hw::CpuInfo& cpu, int threads, DType dtype) {
  const auto tiles = native_tiles();
  const NativeGemmConfig plain;  // its tile where no build runs (4 bytes per packed element)
  const auto [mr, nr] = tiles.empty() ? std::pair(plain.mr, plain.nr) : tiles.front();
  return native_gemm_default(cpu, threads, dtype, mr, nr);
}

NativeGemmConfig native_gemm_default(const hw::CpuInfo& cpu, int threads, DType dtype, int mr,
                                     int nr) {
  NativeGemmConfig c;
  c.mr = mr;
  c.nr = nr;
  const std::int64_t bytes = detail::native_packed_bytes(has_bf16_inputs(dtype), mr, nr);
  const auto [l1, l2, llc] = caches_of(cpu);
  const auto kcs = kc_values(dtype);
  c.kc = static_cast<int>(kcs[0]);
  for (std::int64_t kc : kcs) {
    if (kc * c.nr * bytes <= l1 / 2) c.kc = static_cast<int>(kc);
  }
  c.mc = round_to(kMcValues[0], c.mr);
  for (std::int64_t mc : kMcValues) {
    const int rounded = round_to(mc, c.mr);
    if (static_cast<std::int64_t>(rounded) * c.kc * bytes * 10 <= l2 * 6) c.mc = rounded;
  }
  const std::int64_t nc = std::min<std::int64_t>(4096, llc / 2 / (std::int64_t{c.kc} * bytes));
  c.nc = round_to(nc, c.nr);
  c.threads = std::max(1, threads);
  return c;
}

NativeGemmConfig native_gemm_config(const Config& config) {
  NativeGemmConfig c;
  std::tie(c.mr, c.nr) = parse_tile(config["tile"].get<std::string>());
  c.kc = static_cast<int>(config.number("kc"));
  c.mc = round_to(static_cast<std::int64_t>(config.number("mc")), c.mr);
  c.nc = round_to(static_cast<std::int64_t>(config.number("nc")), c.nr);
  c.order = config["order"].get<std::string>();
  c.threads = static_cast<int>(config.number("threads"));
  c.part = config["part"].get<std::string>();
  return c;
}

std::optional<Config> nearest_point(const ConfigSpace& space, const NativeGemmConfig& c) {
  KnobVector knobs(space.knob_count(), 0);
  const std::string tile = fmt::format("{}x{}", c.mr, c.nr);
  for (std::size_t k = 0; k < space.knob_count(); ++k) {
    const Knob& knob = space.knob(k);
    if (knob.name == "part") continue;  // chosen below, once the thread count is
    double best = INFINITY;
    for (std::uint32_t e = 0; e < knob.size(); ++e) {
      const nlohmann::json& v = knob.entities[e];
      double distance = 0;
      if (knob.name == "tile" || knob.name == "order") {
        distance = v.get<std::string>() == (knob.name == "tile" ? tile : c.order) ? 0 : 1e9;
      } else {
        const double want = knob.name == "kc"   ? c.kc
                            : knob.name == "mc" ? c.mc
                            : knob.name == "nc" ? c.nc
                                                : c.threads;
        distance = std::abs(std::log(v.get<double>() / want));
      }
      if (distance < best) {
        best = distance;
        knobs[k] = e;
      }
    }
    if (best >= 1e9) return std::nullopt;
  }
  // The configuration's part, or shared panels where the space came to one thread.
  if (const auto part = space.find_knob("part")) {
    const auto threads = space.find_knob("threads");
    const bool one = threads && space.knob(*threads).entities[knobs[*threads]] == 1;
    const auto& parts = space.knob(*part).entities;
    const auto at = std::find(parts.begin(), parts.end(), nlohmann::json(one ? "shared" : c.part));
    if (at == parts.end()) return std::nullopt;
    knobs[*part] = static_cast<std::uint32_t>(at - parts.begin());
  }
  if (!space.is_valid(knobs)) return std::nullopt;
  return space.config_of(std::move(knobs));
}

Expected<std::shared_ptr<const ConfigSpace>> native_decode_space(int threads) {
  auto space = std::make_shared<ConfigSpace>();
  std::vector<nlohmann::json> rows(std::begin(kRowsValues), std::end(kRowsValues));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("rows", rows));
  TUNEKIT_RETURN_IF_ERROR(space->define_knob("threads", thread_values(threads)));
  return std::shared_ptr<const ConfigSpace>(std::move(space));
}

NativeDecodeConfig native_decode_config(const Config& config, DType dtype) {
  return NativeDecodeConfig{static_cast<int>(config.number("rows")),
                            static_cast<int>(config.number("threads")), float_output_dtype(dtype)};
}

}  // namespace tunekit::ops
