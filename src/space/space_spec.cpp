// JSON space specs: parameter value lists (lists, ranges, powers of two) and restriction strings.
// See include/tunekit/space/space_spec.hpp for the accepted shapes.
#include "tunekit/space/space_spec.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

#include "tunekit/core/json.hpp"

namespace tunekit {

namespace {

Status bad(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

/// Rejects a key of `object` outside `accepted`; `where` names the object in the message.
Status only_keys(const nlohmann::ordered_json& object,
                 std::initializer_list<std::string_view> accepted, const std::string& where) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(accepted.begin(), accepted.end(), key) != accepted.end()) continue;
    std::string list;
    for (auto a : accepted) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
    return bad(fmt::format("{}: unknown key \"{}\" (accepted: {})", where, key, list));
  }
  return Status::ok();
}

/// `v` as an integer: a JSON integer, or a float with an integral value in the int64 range.
std::optional<std::int64_t> integer_of(const nlohmann::ordered_json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // [-2^63, 2^63): both bounds are exact doubles.
    if (!std::isfinite(d) || d != std::floor(d) || d < -9223372036854775808.0 ||
        d >= 9223372036854775808.0) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

/// The integers of a `range` or `power2` list, checked one by one.
Expected<std::vector<std::int64_t>> bounds_of(const std::string& name, const char* kind,
                                              const nlohmann::ordered_json& r,
                                              std::initializer_list<const char*> slots) {
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const auto x = integer_of(r[i]);
    if (!x) {
      const bool integral = r[i].is_number() && std::isfinite(r[i].get<double>()) &&
                            r[i].get<double>() == std::floor(r[i].get<double>());
      return bad(fmt::format("parameter '{}': {} {} is {}, {}", name, kind, *(slots.begin() + i),
                             r[i].dump(),
                             integral ? "outside the 64-bit integer range"
                                      : "not an integer (ranges hold integers; list other values "
                                        "explicitly)"));
    }
    out.push_back(*x);
  }
  return out;
}

Expected<std::vector<nlohmann::json>> parameter_values(const std::string& name,
                                                       const nlohmann::ordered_json& v) {
  std::vector<nlohmann::json> out;
  if (v.is_array()) {
    std::set<nlohmann::json> seen;
    for (const auto& x : v) {
      if (!(x.is_number() || x.is_boolean() || x.is_string())) {
        return bad(fmt::format("parameter '{}': value {} is not a number, boolean or string", name,
                               x.dump()));
      }
      nlohmann::json value = nlohmann::json::parse(x.dump());
      if (!seen.insert(value).second) {  // 16 and 16.0 are the same value
        return bad(fmt::format("parameter '{}': value {} is listed twice", name, x.dump()));
      }
      out.push_back(std::move(value));
    }
  } else if (v.is_object() && (v.contains("range") || v.contains("power2"))) {
    const std::string where = fmt::format("parameter '{}'", name);
    TUNEKIT_RETURN_IF_ERROR(only_keys(v, {v.contains("range") ? "range" : "power2"}, where));
    if (v.contains("range")) {
      const auto& r = v["range"];
      if (!r.is_array() || r.size() < 2 || r.size() > 3) {
        return bad(
            fmt::format("parameter '{}': range is [begin, end] or [begin, end, step]", name));
      }
      auto b = bounds_of(name, "range", r, {"begin", "end", "step"});
      if (!b) return b.status();
      const std::int64_t begin = (*b)[0], end = (*b)[1], step = b->size() == 3 ? (*b)[2] : 1;
      if (step == 0) return bad(fmt::format("parameter '{}': range step is 0", name));
      // Count first: begin + i * step for i < count (Python range), without overflow.
      const auto ubegin = static_cast<std::uint64_t>(begin);
      const auto uend = static_cast<std::uint64_t>(end);
      const auto ustep = static_cast<std::uint64_t>(step);
      std::uint64_t count = 0;
      if (step > 0 && begin < end) {
        count = (uend - ubegin - 1) / ustep + 1;
      } else if (step < 0 && begin > end) {
        count = (ubegin - uend - 1) / (std::uint64_t{0} - ustep) + 1;
      }
      if (count == 0) {
        return bad(fmt::format("parameter '{}': range [{}, {}) with step {} has no value", name,
                               begin, end, step));
      }
      if (count > kMaxSpecKnobValues) {
        return bad(
            fmt::format("parameter '{}': range [{}, {}) with step {} has {} values; a knob "
                        "holds at most {}",
                        name, begin, end, step, count, kMaxSpecKnobValues));
      }
      out.reserve(count);
      // Unsigned steps: every value lies between begin and end, so the result fits in int64.
      for (std::uint64_t i = 0; i < count; ++i) {
        out.emplace_back(static_cast<std::int64_t>(ubegin + i * ustep));
      }
    } else {
      const auto& r = v["power2"];
      if (!r.is_array() || r.size() != 2) {
        return bad(fmt::format("parameter '{}': power2 is [min, max]", name));
      }
      auto b = bounds_of(name, "power2", r, {"min", "max"});
      if (!b) return b.status();
      const std::int64_t lo = (*b)[0], hi = (*b)[1];
      // At most 63 values: 2^0 .. 2^62.
      for (std::int64_t x = 1; x <= hi; x *= 2) {
        if (x >= lo) out.emplace_back(x);
        if (x > std::numeric_limits<std::int64_t>::max() / 2) break;
      }
      if (out.empty()) {
        return bad(
            fmt::format("parameter '{}': power2 [{}, {}] holds no power of two", name, lo, hi));
      }
    }
  } else if (v.is_object()) {
    return bad(fmt::format("parameter '{}': an object needs \"range\" or \"power2\" (keys: {})",
                           name, [&] {
                             std::string keys;
                             for (const auto& [key, x] : v.items()) {
                               keys += fmt::format("{}\"{}\"", keys.empty() ? "" : ", ", key);
                             }
                             return keys.empty() ? std::string("none") : keys;
                           }()));
  } else {
    return bad(
        fmt::format("parameter '{}': expected a list of values, {{\"range\": [...]}} or "
                    "{{\"power2\": [...]}}",
                    name));
  }
  if (out.empty()) return bad(fmt::format("parameter '{}' has no value", name));
  return out;
}

/// The type restriction expressions see for knob `k`: numbers, strings, or both.
ExprType knob_type(const Knob& k) {
  bool numbers = false, strings = false;
  for (const auto& v : k.values) (v.is_number() ? numbers : strings) = true;
  return numbers && strings ? ExprType::kAny : (strings ? ExprType::kString : ExprType::kNumber);
}

/// add_restriction, and the operations that fail for every value of the knobs' types.
Status add_checked_restriction(ConfigSpace& space, const std::string& text) {
  TUNEKIT_RETURN_IF_ERROR(space.add_restriction(text));
  auto expr = Expression::parse(text);
  if (!expr) return expr.status();
  std::vector<ExprType> types;
  for (const auto& v : expr->variables()) {
    types.push_back(knob_type(space.knob(*space.find_knob(v))));
  }
  return expr->check_types(types);
}

}  // namespace

Expected<ConfigSpace> space_from_spec(const nlohmann::ordered_json& spec) {
  try {
    if (!spec.is_object()) return bad("space spec: expected a JSON object");
    TUNEKIT_RETURN_IF_ERROR(only_keys(
        spec, {"parameters", "tune_params", "tune_params_keys", "restrictions"}, "space spec"));
    if (spec.contains("parameters") && spec.contains("tune_params")) {
      return bad("space spec: both \"parameters\" and \"tune_params\"; give one");
    }
    const nlohmann::ordered_json* params = nullptr;
    if (spec.contains("parameters"))
      params = &spec["parameters"];
    else if (spec.contains("tune_params"))
      params = &spec["tune_params"];
    if (!params) return bad("space spec: no \"parameters\" (or \"tune_params\")");

    ConfigSpace space;
    auto define = [&](const std::string& name, const nlohmann::ordered_json& v) -> Status {
      auto values = parameter_values(name, v);
      if (!values) return values.status();
      return space.define_knob(name, std::move(*values));
    };
    if (params->is_array()) {
      if (spec.contains("tune_params_keys")) {
        return bad("space spec: \"tune_params_keys\" orders an object of parameters, not a list");
      }
      for (std::size_t i = 0; i < params->size(); ++i) {
        const auto& p = (*params)[i];
        const std::string where = fmt::format("space spec: parameter entry {}", i);
        if (!p.is_object()) return bad(where + ": expected {\"name\": ..., \"values\": [...]}");
        TUNEKIT_RETURN_IF_ERROR(only_keys(p, {"name", "values"}, where));
        if (!p.contains("name") || !p["name"].is_string()) {
          return bad(where + ": \"name\" must be a string");
        }
        if (!p.contains("values")) {
          return bad(where + " ('" + p["name"].get<std::string>() + "'): no \"values\"");
        }
        TUNEKIT_RETURN_IF_ERROR(define(p["name"].get<std::string>(), p["values"]));
      }
    } else if (params->is_object()) {
      if (spec.contains("tune_params_keys")) {
        const auto& keys = spec["tune_params_keys"];
        if (!keys.is_array()) {
          return bad("space spec: \"tune_params_keys\" must be a list of names");
        }
        std::vector<std::string> names;
        for (const auto& key : keys) {
          if (!key.is_string()) {
            return bad("space spec: tune_params_keys holds " + key.dump() + ", not a name");
          }
          const auto name = key.get<std::string>();
          if (!params->contains(name))
            return bad("space spec: tune_params_keys names unknown '" + name + "'");
          TUNEKIT_RETURN_IF_ERROR(define(name, (*params)[name]));
          names.push_back(name);
        }
        for (const auto& [name, v] : params->items()) {
          if (std::find(names.begin(), names.end(), name) == names.end()) {
            return bad("space spec: parameter '" + name + "' is missing from tune_params_keys");
          }
        }
      } else {
        for (const auto& [name, v] : params->items()) TUNEKIT_RETURN_IF_ERROR(define(name, v));
      }
    } else {
      return bad("space spec: \"parameters\" must be an object or a list");
    }
    if (space.knob_count() == 0) return bad("space spec: no parameter");
    if (spec.contains("restrictions")) {
      const auto& r = spec["restrictions"];
      if (r.is_string()) {
        TUNEKIT_RETURN_IF_ERROR(add_checked_restriction(space, r.get<std::string>()));
      } else if (r.is_array()) {
        for (const auto& x : r) {
          if (!x.is_string())
            return bad("space spec: restrictions must be strings, got " + x.dump());
          TUNEKIT_RETURN_IF_ERROR(add_checked_restriction(space, x.get<std::string>()));
        }
      } else if (!r.is_null()) {
        return bad("space spec: \"restrictions\" must be a string or a list of strings");
      }
    }
    // Small constrained spaces are counted now (this also fills valid_count()'s cache); larger
    // ones are not enumerated, and an empty one shows when a strategy finds no valid point.
    if (!space.constraints().empty() && space.range_length() <= kMaxCheckedSpecPoints &&
        space.valid_count() == 0) {
      return bad(fmt::format("space spec: no configuration of the {} passes the restrictions",
                             space.range_length() == 1
                                 ? std::string("1 point")
                                 : fmt::format("{} points", space.range_length())));
    }
    return space;
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kParseError, "space spec: " + json_error_message(e));
  }
}

Expected<ConfigSpace> load_space_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kIoError, "cannot open space spec '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  auto spec = parse_json<nlohmann::ordered_json>(text);
  if (!spec)
    return Status(StatusCode::kParseError, fmt::format("{}: {}", path, spec.status().message()));
  auto space = space_from_spec(*spec);
  if (!space) return Status(space.status().code(), path + ": " + space.status().message());
  return space;
}

}  // namespace tunekit
