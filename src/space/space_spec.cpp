// JSON space specs: parameter value lists (lists, ranges, powers of two) and restriction strings.
// See include/tunekit/space/space_spec.hpp for the accepted shapes.
#include "tunekit/space/space_spec.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace tunekit {

namespace {

Status bad(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

Expected<std::vector<nlohmann::json>> parameter_values(const std::string& name,
                                                       const nlohmann::ordered_json& v) {
  std::vector<nlohmann::json> out;
  if (v.is_array()) {
    for (const auto& x : v) {
      if (!(x.is_number() || x.is_boolean() || x.is_string())) {
        return bad(fmt::format("parameter '{}': value {} is not a number, boolean or string", name, x.dump()));
      }
      out.emplace_back(nlohmann::json::parse(x.dump()));
    }
  } else if (v.is_object() && v.contains("range")) {
    const auto& r = v["range"];
    if (!r.is_array() || r.size() < 2 || r.size() > 3) return bad("parameter '" + name + "': range is [begin, end, step?]");
    const auto begin = r[0].get<std::int64_t>();
    const auto end = r[1].get<std::int64_t>();
    const auto step = r.size() == 3 ? r[2].get<std::int64_t>() : 1;
    if (step == 0) return bad("parameter '" + name + "': range step is 0");
    for (auto x = begin; step > 0 ? x < end : x > end; x += step) out.emplace_back(x);
  } else if (v.is_object() && v.contains("power2")) {
    const auto& r = v["power2"];
    if (!r.is_array() || r.size() != 2) return bad("parameter '" + name + "': power2 is [min, max]");
    const auto lo = r[0].get<std::int64_t>();
    const auto hi = r[1].get<std::int64_t>();
    for (std::int64_t x = 1; x <= hi && x > 0; x *= 2) {
      if (x >= lo) out.emplace_back(x);
    }
  } else {
    return bad(fmt::format("parameter '{}': expected a list of values, {{\"range\": [...]}} or "
                           "{{\"power2\": [...]}}", name));
  }
  if (out.empty()) return bad(fmt::format("parameter '{}' has no value", name));
  return out;
}

}  // namespace

Expected<ConfigSpace> space_from_spec(const nlohmann::ordered_json& spec) {
  try {
    if (!spec.is_object()) return bad("space spec: expected a JSON object");
    const nlohmann::ordered_json* params = nullptr;
    if (spec.contains("parameters")) params = &spec["parameters"];
    else if (spec.contains("tune_params")) params = &spec["tune_params"];
    if (!params) return bad("space spec: no \"parameters\" (or \"tune_params\")");

    ConfigSpace space;
    auto define = [&](const std::string& name, const nlohmann::ordered_json& v) -> Status {
      auto values = parameter_values(name, v);
      if (!values) return values.status();
      return space.define_knob(name, std::move(*values));
    };
    if (params->is_array()) {
      for (const auto& p : *params) {
        if (!p.is_object() || !p.contains("name") || !p.contains("values")) {
          return bad("space spec: parameter entries are {\"name\": ..., \"values\": [...]}");
        }
        TUNEKIT_RETURN_IF_ERROR(define(p["name"].get<std::string>(), p["values"]));
      }
    } else if (params->is_object()) {
      if (spec.contains("tune_params_keys")) {
        for (const auto& key : spec["tune_params_keys"]) {
          const auto name = key.get<std::string>();
          if (!params->contains(name)) return bad("space spec: tune_params_keys names unknown '" + name + "'");
          TUNEKIT_RETURN_IF_ERROR(define(name, (*params)[name]));
        }
      } else {
        for (const auto& [name, v] : params->items()) TUNEKIT_RETURN_IF_ERROR(define(name, v));
      }
    } else {
      return bad("space spec: \"parameters\" must be an object or a list");
    }
    if (spec.contains("restrictions")) {
      const auto& r = spec["restrictions"];
      if (r.is_string()) {
        TUNEKIT_RETURN_IF_ERROR(space.add_restriction(r.get<std::string>()));
      } else if (r.is_array()) {
        for (const auto& x : r) {
          if (!x.is_string()) return bad("space spec: restrictions must be strings, got " + x.dump());
          TUNEKIT_RETURN_IF_ERROR(space.add_restriction(x.get<std::string>()));
        }
      } else if (!r.is_null()) {
        return bad("space spec: \"restrictions\" must be a string or a list of strings");
      }
    }
    return space;
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kParseError, std::string("space spec: ") + e.what());
  }
}

Expected<ConfigSpace> load_space_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kIoError, "cannot open space spec '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::ordered_json spec;
  try {
    spec = nlohmann::ordered_json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    return Status(StatusCode::kParseError, fmt::format("{}: {}", path, e.what()));
  }
  auto space = space_from_spec(spec);
  if (!space) return Status(space.status().code(), path + ": " + space.status().message());
  return space;
}

}  // namespace tunekit
