// `tunekit space show|check`: inspect a configuration space defined by a JSON spec (parameter
// value lists plus restriction expressions, see docs/search.md "Spaces from data").
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "table.hpp"
#include "tunekit/core/json.hpp"
#include "tunekit/space/config_space.hpp"
#include "tunekit/space/random.hpp"
#include "tunekit/space/space_spec.hpp"

namespace {

using tunekit::ConfigSpace;
using tunekit::cli::CommandFailure;

struct SpaceArgs {
  std::string spec;
  std::size_t sample = 0;
  std::uint64_t seed = 0;
  std::uint64_t count_limit = 10'000'000;
  std::uint64_t estimate_draws = 100'000;
  std::string format = "table";
  std::vector<std::string> assignments;
};

constexpr double kExactDoubleLimit = 9007199254740992.0;  // 2^53

/// The first number beyond 2^53 in magnitude among a spec parameter's values (a list, or the
/// bounds of a "range" or "power2" object), if any.
std::optional<nlohmann::ordered_json> number_beyond_2_53(const nlohmann::ordered_json& values) {
  const nlohmann::ordered_json* list = &values;
  if (values.is_object()) {
    if (values.contains("range")) list = &values["range"];
    if (values.contains("power2")) list = &values["power2"];
  }
  if (!list->is_array()) return std::nullopt;
  constexpr std::int64_t kLimit = std::int64_t{1} << 53;
  for (const auto& v : *list) {
    const bool beyond =
        v.is_number_unsigned()  ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(kLimit)
        : v.is_number_integer() ? v.get<std::int64_t>() > kLimit || v.get<std::int64_t>() < -kLimit
        : v.is_number_float()   ? std::fabs(v.get<double>()) > kExactDoubleLimit
                                : false;
    if (beyond) return v;
  }
  return std::nullopt;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Whether `text` holds the identifier `name` (not as part of a longer word).
bool mentions(const std::string& text, const std::string& name) {
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at == 0 || !is_word_char(text[at - 1])) &&
        (end == text.size() || !is_word_char(text[end])))
      return true;
  }
  return false;
}

/// The first integer literal beyond 2^53 in a restriction's text, if any.
std::optional<std::string> literal_beyond_2_53(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) ||
        (i > 0 && (is_word_char(text[i - 1]) || text[i - 1] == '.'))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    const std::string digits = text.substr(i, j - i);
    const std::string_view value =
        std::string_view(digits).substr(std::min(digits.find_first_not_of('0'), digits.size()));
    // Beyond 2^53 = 9007199254740992 (16 digits), compared exactly as decimal text.
    if (value.size() > 16 || (value.size() == 16 && value > "9007199254740992")) return digits;
    i = j;
  }
  return std::nullopt;
}

/// The spec's parameters as (name, values) pairs, in any of the accepted layouts.
std::vector<std::pair<std::string, nlohmann::ordered_json>> spec_parameters(
    const nlohmann::ordered_json& spec) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> out;
  const char* key = spec.contains("parameters") ? "parameters" : "tune_params";
  if (!spec.contains(key)) return out;
  const auto& params = spec[key];
  if (params.is_object()) {
    for (const auto& [name, v] : params.items()) out.emplace_back(name, v);
  } else if (params.is_array()) {
    for (const auto& p : params) {
      if (p.is_object() && p.contains("name") && p["name"].is_string() && p.contains("values"))
        out.emplace_back(p["name"].get<std::string>(), p["values"]);
    }
  }
  return out;
}

/// Restrictions compute in double precision, which cannot tell integers beyond 2^53 apart: a
/// spec whose restriction reads a parameter with such a value, or holds such a literal, is
/// refused with one line rather than answered wrongly. (Values only looked up, never computed
/// with, are compared exactly: same_number.)
void refuse_inexact_restrictions(const nlohmann::ordered_json& spec, const std::string& path) {
  if (!spec.is_object() || !spec.contains("restrictions")) return;
  std::vector<std::string> restrictions;
  const auto& r = spec["restrictions"];
  if (r.is_string()) restrictions.push_back(r.get<std::string>());
  for (const auto& x : r.is_array() ? r : nlohmann::ordered_json::array()) {
    if (x.is_string()) restrictions.push_back(x.get<std::string>());
  }
  const auto parameters = spec_parameters(spec);
  for (const std::string& text : restrictions) {
    if (auto literal = literal_beyond_2_53(text)) {
      throw CommandFailure{tunekit::cli::kExitFailure,
                           fmt::format("{}: restriction '{}' holds the number {}, beyond 2^53: "
                                       "restrictions compute in double precision and cannot tell "
                                       "it from its neighbours",
                                       path, text, *literal)};
    }
    for (const auto& [name, values] : parameters) {
      const auto big = mentions(text, name) ? number_beyond_2_53(values) : std::nullopt;
      if (!big) continue;
      throw CommandFailure{
          tunekit::cli::kExitFailure,
          fmt::format("{}: parameter '{}' has the value {}, beyond 2^53, and restriction '{}' "
                      "reads it: restrictions compute in double precision and cannot tell such "
                      "values apart",
                      path, name, big->dump(), text)};
    }
  }
}

ConfigSpace load(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw CommandFailure{tunekit::cli::kExitFailure, "cannot open space spec '" + path + "'"};
  std::stringstream text;
  text << in.rdbuf();
  auto spec = tunekit::parse_json<nlohmann::ordered_json>(text.str());
  if (!spec) {
    throw CommandFailure{tunekit::cli::kExitFailure,
                         fmt::format("{}: {}", path, spec.status().message())};
  }
  refuse_inexact_restrictions(*spec, path);
  auto space = tunekit::space_from_spec(*spec);
  if (!space) {
    throw CommandFailure{tunekit::cli::kExitFailure,
                         fmt::format("{}: {}", path, space.status().message())};
  }
  return std::move(*space);
}

std::string payload_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

/// "16, 32, 64" or, beyond 8 values, the first 3, "..." and the last 2.
std::string value_list(const tunekit::Knob& knob) {
  const auto& e = knob.entities;
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  if (e.size() <= 8) {
    for (const auto& v : e) add(payload_text(v));
  } else {
    for (std::size_t i = 0; i < 3; ++i) add(payload_text(e[i]));
    add("...");
    for (std::size_t i = e.size() - 2; i < e.size(); ++i) add(payload_text(e[i]));
  }
  return out;
}

/// The valid fraction: exact (enumeration with constraint pruning) up to `count_limit` points,
/// else estimated from `draws` uniform random indices with a 95% Wilson interval.
struct ValidFraction {
  bool exact = false;
  std::uint64_t count = 0;  // exact count, or valid draws
  std::uint64_t draws = 0;
  double fraction = 0.0, low = 0.0, high = 0.0;
};

ValidFraction valid_fraction(const ConfigSpace& space, const SpaceArgs& a) {
  ValidFraction v;
  const auto n = space.range_length();
  if (n <= a.count_limit) {
    v.exact = true;
    v.count = space.valid_count();
    v.fraction = v.low = v.high = static_cast<double>(v.count) / static_cast<double>(n);
    return v;
  }
  tunekit::Rng rng(a.seed);
  v.draws = a.estimate_draws;
  for (std::uint64_t i = 0; i < v.draws; ++i) v.count += space.is_valid(rng.uniform(n)) ? 1 : 0;
  const double d = static_cast<double>(v.draws), p = static_cast<double>(v.count) / d;
  const double z = 1.959963984540054, z2 = z * z;
  const double centre = (p + z2 / (2 * d)) / (1 + z2 / d);
  const double half = z * std::sqrt(p * (1 - p) / d + z2 / (4 * d * d)) / (1 + z2 / d);
  v.fraction = p;
  v.low = std::max(0.0, centre - half);
  v.high = std::min(1.0, centre + half);
  return v;
}

/// Up to `a.sample` distinct valid configurations, uniform over the valid points. Counted
/// spaces: rejection sampling when the valid points are plentiful, else one pass over the index
/// range keeping a uniform reservoir (so a space with few valid points still answers in
/// O(range_length)). Estimated spaces: rejection sampling within kSampleDraws + 1000 per asked
/// configuration random indices; `draws` reports how many were spent.
std::vector<tunekit::Config> sample_configs(const ConfigSpace& space, const ValidFraction& v,
                                            const SpaceArgs& a, std::uint64_t& draws) {
  constexpr std::uint64_t kSampleDraws = 1'000'000;
  std::vector<tunekit::Config> out;
  draws = 0;
  const std::uint64_t n = space.range_length();
  tunekit::Rng rng(a.seed);
  const std::uint64_t want = v.exact ? std::min<std::uint64_t>(a.sample, v.count) : a.sample;
  if (want == 0) return out;
  if (v.exact && want * 4 > v.count) {
    // Reservoir sampling (Vitter's algorithm R) over the valid indices in order.
    std::vector<std::uint64_t> reservoir;
    std::uint64_t seen = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (!space.is_valid(i)) continue;
      if (reservoir.size() < want) {
        reservoir.push_back(i);
      } else {
        const auto j = rng.uniform(seen + 1);
        if (j < want) reservoir[j] = i;
      }
      ++seen;
    }
    for (std::size_t r = reservoir.size(); r > 1; --r)
      std::swap(reservoir[r - 1], reservoir[rng.uniform(r)]);
    for (auto i : reservoir) out.push_back(space.config_at(i));
    draws = n;
    return out;
  }
  const std::uint64_t budget = v.exact ? ~std::uint64_t{0} : kSampleDraws + 1000 * want;
  std::unordered_set<std::uint64_t> taken;
  while (out.size() < want && draws < budget) {
    const auto i = rng.uniform(n);
    ++draws;
    if (taken.count(i) || !space.is_valid(i)) continue;
    taken.insert(i);
    out.push_back(space.config_at(i));
  }
  return out;
}

void show(const SpaceArgs& a) {
  const ConfigSpace space = load(a.spec);
  const ValidFraction v = valid_fraction(space, a);
  std::uint64_t draws = 0;
  const std::vector<tunekit::Config> sample = sample_configs(space, v, a, draws);
  const bool short_sample = !v.exact && sample.size() < a.sample;
  if (a.format == "json") {
    nlohmann::ordered_json out;
    out["spec"] = a.spec;
    out["hash"] = space.hash();
    out["points"] = space.range_length();
    if (v.exact) {
      out["valid"] = v.count;
    } else {
      out["valid_fraction_estimate"] = {
          {"fraction", v.fraction}, {"low", v.low}, {"high", v.high}, {"draws", v.draws}};
    }
    out["parameters"] = nlohmann::ordered_json::array();
    for (const auto& k : space.knobs())
      out["parameters"].push_back({{"name", k.name}, {"values", k.entities}});
    out["restrictions"] = nlohmann::ordered_json::array();
    for (const auto& c : space.constraints()) out["restrictions"].push_back(c.description);
    if (short_sample) out["sample_draws"] = draws;
    out["sample"] = nlohmann::ordered_json::array();
    for (const auto& c : sample) {
      nlohmann::ordered_json row;
      row["index"] = c.index();
      for (std::size_t k = 0; k < space.knob_count(); ++k)
        row[space.knob(k).name] = space.knob(k).entities[c.knobs()[k]];
      out["sample"].push_back(row);
    }
    std::puts(out.dump(2).c_str());
    return;
  }
  std::string text = fmt::format("space {}: {} parameters, {} restrictions, {} points, hash {}\n",
                                 a.spec, space.knob_count(), space.constraints().size(),
                                 space.range_length(), space.hash());
  if (v.exact) {
    text += fmt::format("valid: {} ({:.4g}%)\n", v.count, 100.0 * v.fraction);
  } else {
    text += fmt::format(
        "valid: about {:.4g}% (95% interval {:.4g}-{:.4g}%, from {} random indices; more than "
        "--count-limit {} points, so not counted)\n",
        100.0 * v.fraction, 100.0 * v.low, 100.0 * v.high, v.draws, a.count_limit);
  }
  text += "\n";
  tunekit::cli::Table params({"parameter", "count", "values"}, {false, true, false});
  for (const auto& k : space.knobs())
    params.add_row({k.name, std::to_string(k.size()), value_list(k)});
  text += params.render();
  if (!space.constraints().empty()) {
    text += "\nrestrictions:\n";
    for (std::size_t i = 0; i < space.constraints().size(); ++i)
      text += fmt::format("  {}. {}\n", i + 1, space.constraints()[i].description);
  }
  if (!sample.empty()) {
    text += fmt::format("\n{} random valid configurations (seed {}):\n", sample.size(), a.seed);
    std::vector<std::string> header{"index"};
    std::vector<bool> right{true};
    for (const auto& k : space.knobs()) {
      header.push_back(k.name);
      right.push_back(true);
    }
    tunekit::cli::Table rows(header, right);
    for (const auto& c : sample) {
      std::vector<std::string> cells{std::to_string(c.index())};
      for (std::size_t k = 0; k < space.knob_count(); ++k)
        cells.push_back(payload_text(space.knob(k).entities[c.knobs()[k]]));
      rows.add_row(std::move(cells));
    }
    text += rows.render();
  }
  if (short_sample) {
    text += fmt::format(
        "\nfound {} of {} valid configurations in {} random indices (too few valid points to "
        "sample by rejection)\n",
        sample.size(), a.sample, draws);
  } else if (a.sample > 0 && sample.empty()) {
    text += "\nno valid configuration to sample\n";
  }
  std::fputs(text.c_str(), stdout);
}

/// `text` as a whole decimal integer (an optional '-', then digits), exactly; nullopt otherwise
/// or beyond 64 bits.
std::optional<nlohmann::json> exact_integer(const std::string& text) {
  const char* end = text.data() + text.size();
  if (!text.empty() && text.front() == '-') {
    std::int64_t v = 0;
    const auto [stop, ec] = std::from_chars(text.data(), end, v);
    if (ec == std::errc() && stop == end) return nlohmann::json(v);
    return std::nullopt;
  }
  std::uint64_t v = 0;
  const auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (ec == std::errc() && stop == end) return nlohmann::json(v);
  return std::nullopt;
}

/// Whether two JSON integers (signed or unsigned storage) are the same integer, exactly.
bool same_integer(const nlohmann::json& a, const nlohmann::json& b) {
  const auto negative = [](const nlohmann::json& v) {
    return !v.is_number_unsigned() && v.get<std::int64_t>() < 0;
  };
  if (negative(a) || negative(b)) {
    return negative(a) && negative(b) && a.get<std::int64_t>() == b.get<std::int64_t>();
  }
  return a.get<std::uint64_t>() == b.get<std::uint64_t>();
}

/// Whether the command-line `text` is the numeric entity `e`: integers are compared exactly as
/// integers (a double cannot tell 2^53 + 1 from 2^53); other forms ("16.0", "1e3") as doubles,
/// which is exact only up to 2^53.
bool same_number(const nlohmann::json& e, const std::string& text) {
  if (auto integer = exact_integer(text)) {
    if (e.is_number_integer()) return same_integer(*integer, e);
    return integer->get<double>() == e.get<double>() &&
           std::fabs(integer->get<double>()) <= kExactDoubleLimit;
  }
  try {
    std::size_t used = 0;
    const double d = std::stod(text, &used);
    return used == text.size() && std::fabs(d) <= kExactDoubleLimit && d == e.get<double>();
  } catch (...) {
    return false;
  }
}

/// Parses NAME=VALUE against the knob's entities: a value matches an entity whose text form
/// (strings as written, numbers as JSON) is equal, or a numeric entity of the same value
/// (same_number). Beyond 2^53 a number must be written as a whole integer.
std::uint32_t position_of(const tunekit::Knob& knob, const std::string& text) {
  for (std::uint32_t p = 0; p < knob.size(); ++p) {
    const auto& e = knob.entities[p];
    if (payload_text(e) == text || (e.is_number() && same_number(e, text))) return p;
  }
  std::string beyond;
  try {
    if (!exact_integer(text) && std::fabs(std::stod(text)) > kExactDoubleLimit) {
      beyond = "; numbers beyond 2^53 are matched only when written as whole integers";
    }
  } catch (...) {
  }
  throw CommandFailure{tunekit::cli::kExitUsage,
                       fmt::format("'{}' is not a value of parameter '{}' (values: {}){}", text,
                                   knob.name, value_list(knob), beyond)};
}

int check(const SpaceArgs& a) {
  const ConfigSpace space = load(a.spec);
  tunekit::KnobVector knobs(space.knob_count(), 0);
  std::vector<bool> given(space.knob_count(), false);
  for (const auto& s : a.assignments) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw CommandFailure{tunekit::cli::kExitUsage, fmt::format("'{}' is not NAME=VALUE", s)};
    const std::string name = s.substr(0, eq);
    const auto k = space.find_knob(name);
    if (!k)
      throw CommandFailure{tunekit::cli::kExitUsage,
                           fmt::format("{}: no parameter '{}'", a.spec, name)};
    if (given[*k])
      throw CommandFailure{tunekit::cli::kExitUsage,
                           fmt::format("parameter '{}' given twice", name)};
    knobs[*k] = position_of(space.knob(*k), s.substr(eq + 1));
    given[*k] = true;
  }
  std::string missing;
  for (std::size_t k = 0; k < space.knob_count(); ++k) {
    if (!given[k] && space.knob(k).size() > 1)
      missing += (missing.empty() ? "" : ", ") + space.knob(k).name;
  }
  if (!missing.empty())
    throw CommandFailure{
        tunekit::cli::kExitUsage,
        fmt::format("no value for parameter(s) {} (give NAME=VALUE for each)", missing)};
  const auto index = space.knobs_to_index(knobs);
  const tunekit::ConfigView view(space, knobs);
  std::vector<std::string> failed;
  for (const auto& c : space.constraints()) {
    if (!c.predicate(view)) failed.push_back(c.description);
  }
  if (failed.empty()) {
    std::printf("valid: index %llu\n", static_cast<unsigned long long>(index));
    return 0;
  }
  std::printf("invalid: index %llu fails %zu restriction(s):\n",
              static_cast<unsigned long long>(index), failed.size());
  for (const auto& f : failed) std::printf("  %s\n", f.c_str());
  return 3;
}

}  // namespace

void register_space_command(CLI::App& app) {
  auto args = std::make_shared<SpaceArgs>();
  auto* cmd = app.add_subcommand("space", "Configuration spaces from JSON specs: show, check");
  cmd->require_subcommand(1);
  auto* show_cmd = cmd->add_subcommand(
      "show", "Print a spec's parameters, restrictions, size, hash, valid fraction and a sample");
  show_cmd->add_option("spec", args->spec, "JSON space spec")->required();
  show_cmd
      ->add_option("--sample", args->sample,
                   "Random valid configurations to print, at most 1000000 (default 0)")
      ->check(tunekit::cli::non_negative_integer())
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  show_cmd
      ->add_option("--seed", args->seed,
                   "Seed of the sample and of the estimate, 0 to 2^64-1 (default 0)")
      ->check(tunekit::cli::seed_number());
  show_cmd
      ->add_option("--count-limit", args->count_limit,
                   "Count valid points exactly up to this many points, else estimate "
                   "(default 10000000)")
      ->check(tunekit::cli::non_negative_integer());
  show_cmd
      ->add_option("--estimate-draws", args->estimate_draws,
                   "Random indices of the estimate (default 100000)")
      ->check(tunekit::cli::positive_integer());
  show_cmd->add_option("--format", args->format, "table or json (default table)")
      ->check(CLI::IsMember({"table", "json"}));
  show_cmd->callback([args] { show(*args); });
  auto* check_cmd = cmd->add_subcommand(
      "check",
      "Say whether one configuration (NAME=VALUE for every parameter) is valid; exit 3 if not");
  check_cmd->add_option("spec", args->spec, "JSON space spec")->required();
  check_cmd->add_option("assignments", args->assignments, "NAME=VALUE, one per parameter")
      ->required();
  check_cmd->callback([args] {
    const int rc = check(*args);
    if (rc != 0) throw CommandFailure{rc, "configuration is not valid"};
  });
}
